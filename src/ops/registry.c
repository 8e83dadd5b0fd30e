/* The op table: one line per op. It drives model loading, `vkinfer ops` and docs/ops.md's
 * op table (scripts/ops-doc.sh). */
#include "registry.h"

#include <string.h>

#define OPS(X)                                                                             \
    /* unary.c */                                                                          \
    X(Relu) X(Sigmoid) X(Tanh) X(Exp) X(Log) X(Neg) X(Abs) X(Sqrt) X(Reciprocal) X(Clip)    \
    X(HardSigmoid) X(HardSwish) X(LeakyRelu) X(Floor) X(Ceil) X(Round) X(Sin) X(Cos) X(Tan) \
    X(Asin) X(Acos) X(Atan) X(Sinh) X(Cosh) X(Asinh) X(Acosh) X(Atanh) X(Erf) X(Sign)       \
    X(Softplus) X(Softsign) X(Elu) X(Selu) X(Celu) X(ThresholdedRelu) X(Not) X(IsNaN)       \
    X(IsInf) X(Gelu) X(Mish) X(Swish) X(BitwiseNot) X(Identity) X(Cast) X(Dropout)       \
    /* binary.c */                                                                         \
    X(Add) X(Sub) X(Mul) X(Div) X(Pow) X(Mod) X(BitShift) X(BitwiseAnd) X(BitwiseOr)       \
    X(BitwiseXor) X(And) X(Or) X(Xor) X(Equal) X(Less) X(LessOrEqual) X(Greater)            \
    X(GreaterOrEqual) X(Max) X(Min) X(Sum) X(Mean) X(PRelu) X(Where) X(SwiGLU)            \
    /* conv.c */ X(Conv) X(ConvTranspose)                                                  \
    /* matmul.c */                                                                         \
    X(MatMul) X(Gemm)                                                                      \
    /* pool.c, normalization.c */                                                          \
    X(MaxPool) X(AveragePool) X(LpPool) X(GlobalAveragePool) X(GlobalMaxPool) X(GlobalLpPool) \
    X(BatchNormalization) X(InstanceNormalization) X(LayerNormalization) X(LRN)             \
    X(GroupNormalization)                                                                  \
    X(MeanVarianceNormalization)                                                           \
    /* reduce.c, softmax.c */                                                              \
    X(ReduceSum) X(ReduceMean) X(ReduceMax) X(ReduceMin) X(ReduceProd) X(ReduceL1) X(ReduceL2) \
    X(ReduceLogSum) X(ReduceLogSumExp) X(ReduceSumSquare) X(ArgMax) X(ArgMin)              \
    X(Softmax) X(LogSoftmax) X(Hardmax) X(CumSum) X(CumProd)                               \
    /* shape.c, movement.c */                                                              \
    /* resize.c, topk.c, einsum.c, misc.c */ X(Resize) X(Upsample) X(TopK) X(Einsum) X(Shrink) X(CastLike) X(Det) X(MaxUnpool) \
    X(Shape) X(Size) X(Constant) X(ConstantOfShape) X(Reshape) X(Flatten) X(Squeeze)       \
    X(Unsqueeze) X(Range) X(EyeLike) X(Transpose) X(Concat) X(Slice) X(Split) X(Expand)    \
    X(Tile) X(DepthToSpace) X(SpaceToDepth) X(Gather) X(GatherElements) X(OneHot) X(Pad)   \
    X(Trilu) X(ScatterElements) X(Scatter) X(ScatterND)                                    \
    /* gather_nd.c, reverse_sequence.c, lp_normalization.c, loss.c, bitcast.c, quantize.c, \
       grid_sample.c, roi_align.c, matmul_integer.c, causal_conv.c */                      \
    X(GatherND) X(ReverseSequence) X(LpNormalization)                                      \
    X(NegativeLogLikelihoodLoss) X(SoftmaxCrossEntropyLoss) X(BitCast)                     \
    X(QuantizeLinear) X(DequantizeLinear) X(DynamicQuantizeLinear) X(GridSample)           \
    X(RoiAlign) X(MatMulInteger) X(QLinearMatMul) X(ConvInteger) X(QLinearConv)           \
    X(CausalConvWithState)                                                                 \
    /* rms_norm.c, rotary.c, attention.c, rnn.c */                                         \
    X(RMSNormalization) X(RotaryEmbedding) X(Attention) X(RNN) X(GRU) X(LSTM)              \
    /* linear_attention.c, attention.c */ X(LinearAttention) X(FlexAttention)              \
    /* control.c */ X(If) X(Loop) X(Scan)                                                  \
    /* sequence.c */                                                                       \
    X(SequenceEmpty) X(SequenceConstruct) X(SequenceInsert) X(SequenceErase) X(SequenceAt) \
    X(SequenceLength) X(SplitToSequence) X(ConcatFromSequence) X(SequenceMap) X(Optional)  \
    X(OptionalHasElement) X(OptionalGetElement)                                            \
    /* signal.c */                                                                         \
    X(DFT) X(STFT) X(HannWindow) X(HammingWindow) X(BlackmanWindow) X(MelWeightMatrix)     \
    /* pad.c, affine_grid.c, col2im.c */ X(CenterCropPad) X(AffineGrid) X(Col2Im)              \
    /* tensor_scatter.c, deform_conv.c, scatter.c (vkinfer) */ X(TensorScatter) X(DeformConv) X(ScatterSlices) \
    /* compress.c, nms.c, unique.c */ X(NonZero) X(Compress) X(NonMaxSuppression) X(Unique) \
    /* random.c */                                                                         \
    X(RandomUniform) X(RandomNormal) X(RandomUniformLike) X(RandomNormalLike) X(Bernoulli) \
    X(Multinomial)                                                                         \
    /* training.c, gradient.c (ai.onnx.preview.training) */ X(Adagrad) X(Adam) X(Momentum) X(Gradient) \
    /* tfidf.c */ X(TfIdfVectorizer)                                                        \
    /* ml.c, tree_ensemble.c (ai.onnx.ml) */ X(Binarizer) X(ArrayFeatureExtractor) X(LabelEncoder) \
    X(TreeEnsemble) X(TreeEnsembleRegressor) X(TreeEnsembleClassifier)                     \
    /* end */

#define DECLARE(name) extern const op_def op_##name;
OPS(DECLARE)
#undef DECLARE

#define ENTRY(name) &op_##name,
static const op_def *const registry[] = {OPS(ENTRY)};
#undef ENTRY

uint32_t op_registry_count(void) { return sizeof registry / sizeof *registry; }

const op_def *op_registry_get(uint32_t i) { return i < op_registry_count() ? registry[i] : NULL; }

const op_def *op_find(const char *domain, const char *name)
{
    for (uint32_t i = 0; i < op_registry_count(); i++)
        if (!strcmp(registry[i]->name, name) && !strcmp(registry[i]->domain, domain)) return registry[i];
    return NULL;
}
