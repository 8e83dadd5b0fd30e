#version 450
// Y_h and Y_c of RNN, GRU and LSTM after the last step (the body is rnn.glsl).
#define RNN_FINAL
#include "rnn.glsl"
