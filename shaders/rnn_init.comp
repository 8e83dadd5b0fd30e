#version 450
// Fills the state buffer of RNN, GRU and LSTM (the body is rnn.glsl).
#define RNN_INIT
#include "rnn.glsl"
