#version 450
// One time step of RNN, GRU and LSTM (the body is rnn.glsl).
#include "rnn.glsl"
