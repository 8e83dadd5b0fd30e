#version 450
// The input projections of RNN, GRU and LSTM (the body is rnn.glsl).
#define RNN_PROJ
#include "rnn.glsl"
