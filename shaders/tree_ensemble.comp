#version 450
// See tree_ensemble.glsl.
#include "tree_ensemble.glsl"
