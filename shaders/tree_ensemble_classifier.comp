#version 450
// See tree_ensemble.glsl: with the labels output.
#define CLASSIFIER
#include "tree_ensemble.glsl"
