// The window of the convolution and pooling kernels, specialization constants 2-7: kernel
// height and width, strides, dilations (every dispatch of these kernels passes all six).
#ifndef CONV_WINDOW_GLSL
#define CONV_WINDOW_GLSL
layout(constant_id = 2) const int KH = 3;
layout(constant_id = 3) const int KW = 3;
layout(constant_id = 4) const int SH = 1;
layout(constant_id = 5) const int SW = 1;
layout(constant_id = 6) const int DH = 1;
layout(constant_id = 7) const int DW = 1;
#endif
