/* Conv and ConvTranspose (1-D, 2-D, 3-D; groups, strides, dilations, pads, auto_pad): the ops'
 * checks and geometry, resolved here once, a per-channel Mul and Add after a Conv folded into
 * its weights, and the choice of kernels: Winograd (conv_winograd.c), matrix products
 * (conv_matmul.c), on GPUs an implicit GEMM and a depthwise kernel (conv_gpu.c), on CPU devices
 * (lavapipe) register-blocked conv2d_cpu* kernels (conv_cpu.c), and here the direct N-d kernel
 * (shaders/conv.glsl) for everything else, ConvTranspose included. */
#include "conv.h"
#include "op.h"

#include <math.h>
#include <string.h>

static int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

/* Inputs X, W (and B) of either op: float, matching dtypes, ranks 3..5, kernel_shape. */
static vki_status check_inputs(op_ctx *c, conv_geom *g)
{
    VKI_TRY(op_require_inputs(c, 2, 3));
    for (int i = 0; i < 3; i++) VKI_TRY(op_require_float(c, i));
    plan_value *x = op_in(c, 0), *w = op_in(c, 1), *b = op_in(c, 2);
    if (w->dtype != x->dtype || (b && b->dtype != x->dtype))
        return op_error(c, VKI_ERROR_MODEL, "X, W and B must share one dtype");
    if (x->rank < 3 || x->rank > 5)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "X has rank %d; 1-D, 2-D and 3-D convolutions (rank 3 to 5) are supported", x->rank);
    if (w->rank != x->rank) return op_error(c, VKI_ERROR_SHAPE, "W must have the rank of X (%d), has %d", x->rank, w->rank);
    g->nsp = x->rank - 2;
    g->batch = x->dims[0];
    g->cin = x->dims[1];
    g->groups = ir_attr_int(c->node, "group", 1);
    if (g->groups < 1 || g->cin % g->groups)
        return op_error(c, VKI_ERROR_SHAPE, "group %lld does not divide the %lld input channels", (long long)g->groups, (long long)g->cin);
    for (int d = 0; d < g->nsp; d++) {
        g->in[d] = x->dims[2 + d];
        g->kernel[d] = w->dims[2 + d];
    }
    const int64_t *ks;
    int nk = ir_attr_ints(c->node, "kernel_shape", &ks);
    if (nk >= 0) {
        bool same = nk == g->nsp;
        for (int d = 0; same && d < nk; d++) same = ks[d] == g->kernel[d];
        if (!same) return op_error(c, VKI_ERROR_SHAPE, "kernel_shape does not match W's spatial dims");
    }
    VKI_TRY(op_attr_ints_n(c, "strides", g->nsp, 1, 1, INT64_MAX, g->stride));
    VKI_TRY(op_attr_ints_n(c, "dilations", g->nsp, 1, 1, INT64_MAX, g->dil));
    if (shape_numel(x->dims, x->rank) > UINT32_MAX || shape_numel(w->dims, w->rank) > UINT32_MAX)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "inputs over 2^32 elements are not supported");
    return VKI_OK;
}

/* auto_pad as one of "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID". */
static vki_status read_auto_pad(op_ctx *c, const char **mode)
{
    *mode = ir_attr_string(c->node, "auto_pad", "NOTSET");
    if (strcmp(*mode, "NOTSET") && strcmp(*mode, "SAME_UPPER") && strcmp(*mode, "SAME_LOWER") && strcmp(*mode, "VALID"))
        return op_error(c, VKI_ERROR_MODEL, "auto_pad '%s' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", *mode);
    return VKI_OK;
}

static vki_status check_bias(op_ctx *c, int64_t cout)
{
    plan_value *b = op_in(c, 2);
    if (b && (b->rank != 1 || b->dims[0] != cout))
        return op_error(c, VKI_ERROR_SHAPE, "B must be 1-D of the %lld output channels", (long long)cout);
    return VKI_OK;
}

/* Records Y = conv(X, W) + B for `batch` images: bindings X and Y (and split-K's `partial`)
 * are windows of that many images, so the shaders see a batch of `batch`. X, W, B and Y are
 * bound in storage st (the kernels' 16-bit variants for halves); split-K's partial sums are
 * fp32 words in every variant. */
static vki_status record_images_kernels(op_ctx *c, const conv_geom *g, bool transposed, int64_t batch, const op_window *win,
                                        const gemm_choice *gemm, int partial, bool cpu, int cpu_packed, const fused_act *act,
                                        gpu_storage st)
{
    gpu_storage stores[4] = {st, st, st, st};
    plan_value *x = op_in(c, 0);
    int64_t count = batch * g->cout;
    for (int d = 0; d < g->nsp; d++) count *= g->out[d];
    bool has_bias = op_has_input(c, 2);
    /* without B the weights stand in at binding 2; the shaders then never read it */
    int values[4] = {op_in_index(c, 0), op_in_index(c, 1), has_bias ? op_in_index(c, 2) : op_in_index(c, 1), op_out_index(c, 0)};
    uint32_t dt = op_dtype_code(x->dtype);
    int64_t cin_g = g->cin / g->groups, cout_g = g->cout / g->groups;
    uint32_t gx, gy;
    bool fast = conv_fast_paths(c, g, transposed);

    if (fast && cpu && (cpu_packed >= 0 || cin_g == 1))
        return conv_cpu_record(c, g, batch, win, values, cpu_packed, act, st);
    if (fast && cin_g == 1) return conv_gpu_record_depthwise(c, g, batch, win, values, act, st);
    if (fast && cpu) return conv_cpu_record(c, g, batch, win, values, -1, act, st);
    if (fast && gemm->usable) return conv_gpu_record_gemm(c, g, batch, win, values, gemm, partial, act, st);
    /* the reference: spatial dims right-aligned into (d, h, w) */
    struct {
        uint32_t count, cin, cin_g, cout, cout_g, has_bias;
        float lo, hi;
        int32_t in[4], out[4], kernel[4], stride[4], dil[4], pad[4];
    } push = {(uint32_t)count, (uint32_t)g->cin, (uint32_t)cin_g, (uint32_t)g->cout, (uint32_t)cout_g, has_bias,
              act->lo, act->hi};
    for (int d = 0; d < 3; d++) {
        int s = d - (3 - g->nsp); /* the source spatial dim, or < 0 for a size-1 dim */
        push.in[d] = s < 0 ? 1 : (int32_t)g->in[s];
        push.out[d] = s < 0 ? 1 : (int32_t)g->out[s];
        push.kernel[d] = s < 0 ? 1 : (int32_t)g->kernel[s];
        push.stride[d] = s < 0 ? 1 : (int32_t)g->stride[s];
        push.dil[d] = s < 0 ? 1 : (int32_t)g->dil[s];
        push.pad[d] = s < 0 ? 0 : (int32_t)g->pad_begin[s];
    }
    uint32_t spec[4] = {128, dt, transposed, op_act_code(act->on, act->lo, act->hi)};
    op_grid_1d((uint64_t)count, 128, &gx, &gy);
    return op_dispatch_stored(c, op_variant(c, "conv", st), spec, 4, &push, sizeof push, values, win, stores, 4, gx, gy, 1);
}

/* record_images_kernels with the profile's operation count on its first dispatch (the
 * convolution's; a split-K reduce follows it) */
static vki_status record_images(op_ctx *c, const conv_geom *g, bool transposed, int64_t batch, const op_window *win,
                                const gemm_choice *gemm, int partial, bool cpu, int cpu_packed, const fused_act *act,
                                gpu_storage st)
{
    int first = op_dispatch_mark(c);
    VKI_TRY(record_images_kernels(c, g, transposed, batch, win, gemm, partial, cpu, cpu_packed, act, st));
    /* per output (input, transposed) element: cin/groups (cout/groups) taps times the kernel */
    double macs = (double)batch * (double)(transposed ? g->cin : g->cout) * (double)(transposed ? g->cout / g->groups : g->cin / g->groups);
    for (int d = 0; d < g->nsp; d++) macs *= (double)(transposed ? g->in[d] : g->out[d]) * (double)g->kernel[d];
    op_note_flops_at(c, first, 2 * macs);
    return VKI_OK;
}

/* Whether constant o broadcasts against a convolution's output [N, Cout, spatial...] (rank
 * out_rank) as one value per output channel (or one for all). */
static bool per_channel(const plan_value *o, int out_rank, int64_t cout)
{
    if (!o->shaped || !o->host || !dtype_is_float(o->dtype) || o->permuted || o->view_scale || o->rank > out_rank)
        return false;
    for (int d = 0; d < o->rank; d++) {
        int axis = out_rank - o->rank + d;
        if (o->dims[d] != 1 && !(axis == 1 && o->dims[d] == cout)) return false;
    }
    return true;
}

/* The node as the kernels see it once fold_channel_affine has replaced its W and B. */
typedef struct folded_node {
    ir_node node;
    int inputs[3];
} folded_node;

/* Conv -> Mul by a constant per output channel [-> Add of one]: FrozenBatchNorm2d (the
 * torchvision layer that LeRobot's ACT backbone uses), whose scale and shift both PyTorch
 * exporters leave as a Mul and an Add where they fold a BatchNormalization into the Conv. Folded
 * into W and the bias at plan time, y * s + t = conv(x, W * s) + (b * s + t), and the Mul and
 * the Add claimed as views of Y: further fusion (a residual Add, a Relu) goes on after them
 * (op_epilogue_value). ACT on lavapipe had 20 such chains, 12% of its time
 * (docs/history/benchmarks-notebook.md). */
static vki_status fold_channel_affine(op_ctx *c, const conv_geom *g, folded_node *f)
{
    plan_value *w = op_in(c, 1), *b = op_in(c, 2);
    int y = op_out_index(c, 0), out_rank = 2 + g->nsp;
    if (!op_fusion_on(c) || !w->host || (b && !b->host) || !dtype_is_float(w->dtype)) return VKI_OK;
    int mul = op_only_reader(c, y, "Mul");
    const ir_node *mn = mul >= 0 ? op_graph_node(c, mul) : NULL;
    if (!mn || mn->n_inputs != 2) return VKI_OK;
    int s = mn->inputs[0] == y ? mn->inputs[1] : mn->inputs[0], t = -1, tail = mn->outputs[0];
    if (s < 0 || s == y || !per_channel(op_value(c, s), out_rank, g->cout)) return VKI_OK;
    int add = op_only_reader(c, tail, "Add");
    if (add >= 0) {
        const ir_node *an = op_graph_node(c, add);
        t = an->n_inputs == 2 ? (an->inputs[0] == tail ? an->inputs[1] : an->inputs[0]) : -1;
        if (t < 0 || t == tail || !per_channel(op_value(c, t), out_rank, g->cout)) add = -1, t = -1;
    }
    plan_value *sv = op_value(c, s), *tv = t >= 0 ? op_value(c, t) : NULL;
    int64_t w_numel = shape_numel(w->dims, w->rank), per = g->cout ? w_numel / g->cout : 0;
    int w_value, b_value;
    void *wd = op_temp_const(c, w->dtype, w_numel, &w_value);
    void *bd = wd ? op_temp_const(c, w->dtype, g->cout, &b_value) : NULL;
    if (!bd) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory folding a per-channel Mul into W");
    for (int64_t co = 0; co < g->cout; co++) {
        double sc = host_read_f64(sv->dtype, sv->host, shape_numel(sv->dims, sv->rank) > 1 ? (size_t)co : 0);
        double sh = tv ? host_read_f64(tv->dtype, tv->host, shape_numel(tv->dims, tv->rank) > 1 ? (size_t)co : 0) : 0;
        for (int64_t i = 0; i < per; i++)
            host_write_f64(w->dtype, wd, (size_t)(co * per + i), host_read_f64(w->dtype, w->host, (size_t)(co * per + i)) * sc);
        host_write_f64(w->dtype, bd, (size_t)co, (b ? host_read_f64(b->dtype, b->host, (size_t)co) : 0) * sc + sh);
    }
    /* held as W is (16-bit storage, the fp16 mode) */
    plan_value *nw = op_value(c, w_value), *nb = op_value(c, b_value);
    nw->rank = w->rank;
    memcpy(nw->dims, w->dims, sizeof nw->dims);
    nw->storage = nb->storage = w->storage;
    op_fuse_claim(c, mul, y);
    if (add >= 0) {
        op_fuse_claim(c, add, tail);
        tail = op_graph_node(c, add)->outputs[0];
    }
    /* the last claimed value looks as Y does, for op_fuse_add_find's broadcast check */
    plan_value *yv = op_out(c, 0), *last = op_value(c, tail);
    last->dtype = yv->dtype;
    last->storage = yv->storage;
    last->rank = yv->rank;
    memcpy(last->dims, yv->dims, sizeof last->dims);
    last->shaped = true;
    c->epilogue_from = tail + 1;
    f->node = *c->node;
    f->inputs[0] = op_in_index(c, 0);
    f->inputs[1] = w_value;
    f->inputs[2] = b_value;
    f->node.inputs = f->inputs;
    f->node.n_inputs = 3;
    c->node = &f->node;
    return VKI_OK;
}

static vki_status record_kernels(op_ctx *c, const conv_geom *g, bool transposed, int64_t count);

/* Records the shaders for g. A batch too large for one binding runs as several dispatches over
 * windows of whole images (weights and bias bound whole). */
static vki_status record(op_ctx *c, const conv_geom *g, bool transposed)
{
    plan_value *x = op_in(c, 0);
    int64_t out_dims[5] = {g->batch, g->cout};
    for (int d = 0; d < g->nsp; d++) out_dims[2 + d] = g->out[d];
    VKI_TRY(op_set_output(c, 0, x->dtype, 2 + g->nsp, out_dims));
    int64_t count = shape_numel(out_dims, 2 + g->nsp);
    if (count > UINT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "outputs over 2^32 elements are not supported");
    if (count == 0) return VKI_OK;
    const ir_node *node = c->node;
    folded_node folded;
    vki_status st = transposed ? VKI_OK : fold_channel_affine(c, g, &folded);
    if (st == VKI_OK) st = record_kernels(c, g, transposed, count);
    c->node = node; /* the graph's node again, not the local copy with folded W and B */
    return st;
}

static vki_status record_kernels(op_ctx *c, const conv_geom *g, bool transposed, int64_t count)
{
    plan_value *x = op_in(c, 0);
    if (!transposed) {
        bool taken;
        VKI_TRY(conv_winograd_record(c, g, &taken));
        if (taken) return VKI_OK;
    }
    if (conv_matmul_wanted(c, g, transposed)) {
        bool taken;
        VKI_TRY(conv_matmul_record(c, g, &taken));
        if (taken) return VKI_OK;
    }
    if (transposed) {
        bool taken;
        VKI_TRY(conv_transpose_matmul_record(c, g, &taken));
        if (taken) return VKI_OK;
    }
    gpu_storage st = conv_kernel_storage(c);
    uint64_t elem = storage_size(st); /* windows are in the kernel's storage */
    uint64_t x_image = (uint64_t)shape_numel(x->dims + 1, x->rank - 1) * elem, y_image = (uint64_t)(count / g->batch) * elem;
    uint64_t image_bytes[2] = {x_image, y_image};
    int64_t chunk = op_batch_chunk(c, g->batch, image_bytes, 2);
    if (chunk <= 0)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "windows of whole images of X (%llu bytes each) and Y (%llu bytes each) "
                        "cannot both fit the device's maxStorageBufferRange (%llu bytes) and start at multiples of %llu "
                        "bytes; convolutions split their work only along the batch", (unsigned long long)x_image,
                        (unsigned long long)y_image, (unsigned long long)op_max_binding_bytes(c),
                        (unsigned long long)op_binding_alignment(c));
    uint64_t oh = g->nsp == 2 ? (uint64_t)g->out[0] : 1, ow = (uint64_t)g->out[g->nsp - 1];
    uint64_t kernel_hw = (g->nsp == 2 ? (uint64_t)g->kernel[0] : 1) * (uint64_t)g->kernel[g->nsp - 1];
    gemm_choice gemm = conv_gemm_choose(c, g, chunk, oh, ow, kernel_hw);
    fused_act act = {false, -INFINITY, INFINITY};
    act.on = op_fuse_activation(c, 0, &act.lo, &act.hi);
    int partial = -1;
    bool cpu = conv_fast_paths(c, g, transposed) && conv_cpu_device(c) && conv_cpu_grid_fits(c, g, chunk);
    bool gemm_path = conv_fast_paths(c, g, transposed) && g->cin != g->groups && gemm.usable && !cpu;
    if (gemm_path && gemm.splits > 1) VKI_TRY(op_temp(c, VKI_DTYPE_FLOAT, chunk * (count / g->batch) * (int64_t)gemm.splits, &partial));
    int cpu_packed = -1;
    if (cpu && g->cin != g->groups) {
        cpu_packed = conv_cpu_pack_weights(c, g, st);
        if (cpu_packed == -2) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory repacking W");
    }
    if (chunk == g->batch) return record_images(c, g, transposed, g->batch, NULL, &gemm, partial, cpu, cpu_packed, &act, st);
    for (int64_t start = 0; start < g->batch; start += chunk) {
        int64_t n = g->batch - start < chunk ? g->batch - start : chunk;
        op_window win[4] = {{(uint64_t)start * x_image, (uint64_t)n * x_image}, {0, 0}, {0, 0},
                            {(uint64_t)start * y_image, (uint64_t)n * y_image}};
        VKI_TRY(record_images(c, g, transposed, n, win, &gemm, partial, cpu, cpu_packed, &act, st));
    }
    return VKI_OK;
}

static vki_status plan_conv(op_ctx *c)
{
    conv_geom g;
    memset(&g, 0, sizeof g);
    VKI_TRY(check_inputs(c, &g));
    plan_value *w = op_in(c, 1);
    g.cout = w->dims[0];
    if (w->dims[1] * g.groups != g.cin)
        return op_error(c, VKI_ERROR_SHAPE, "W has %lld input channels per group; X's %lld channels in %lld groups need %lld",
                        (long long)w->dims[1], (long long)g.cin, (long long)g.groups, (long long)(g.cin / g.groups));
    if (g.cout % g.groups)
        return op_error(c, VKI_ERROR_SHAPE, "group %lld does not divide the %lld output channels", (long long)g.groups, (long long)g.cout);
    VKI_TRY(check_bias(c, g.cout));
    const char *auto_pad;
    VKI_TRY(read_auto_pad(c, &auto_pad));
    int64_t pads[6];
    VKI_TRY(op_attr_ints_n(c, "pads", 2 * g.nsp, 0, 0, INT64_MAX, pads));
    for (int d = 0; d < g.nsp; d++) {
        int64_t span = (g.kernel[d] - 1) * g.dil[d] + 1;
        if (!strcmp(auto_pad, "SAME_UPPER") || !strcmp(auto_pad, "SAME_LOWER")) {
            g.out[d] = (g.in[d] + g.stride[d] - 1) / g.stride[d];
            int64_t total = (g.out[d] - 1) * g.stride[d] + span - g.in[d];
            if (total < 0) total = 0;
            g.pad_begin[d] = !strcmp(auto_pad, "SAME_UPPER") ? total / 2 : total - total / 2;
        } else {
            int64_t pb = 0, pe = 0;
            if (!strcmp(auto_pad, "NOTSET")) pb = pads[d], pe = pads[g.nsp + d];
            g.pad_begin[d] = pb;
            g.out[d] = floor_div(g.in[d] + pb + pe - span, g.stride[d]) + 1;
        }
        if (g.out[d] < 1 && g.in[d] > 0)
            return op_error(c, VKI_ERROR_SHAPE, "the kernel (span %lld) does not fit spatial dim %d of size %lld with its padding",
                            (long long)span, d, (long long)g.in[d]);
        if (g.out[d] < 0) g.out[d] = 0;
    }
    return record(c, &g, false);
}

static vki_status plan_conv_transpose(op_ctx *c)
{
    conv_geom g;
    memset(&g, 0, sizeof g);
    VKI_TRY(check_inputs(c, &g));
    plan_value *w = op_in(c, 1);
    if (w->dims[0] != g.cin)
        return op_error(c, VKI_ERROR_SHAPE, "W's first dim (%lld) must be X's channel count (%lld)", (long long)w->dims[0], (long long)g.cin);
    g.cout = w->dims[1] * g.groups;
    VKI_TRY(check_bias(c, g.cout));
    const char *auto_pad;
    VKI_TRY(read_auto_pad(c, &auto_pad));
    int64_t pads[6], out_pad[3];
    VKI_TRY(op_attr_ints_n(c, "pads", 2 * g.nsp, 0, 0, INT64_MAX, pads));
    VKI_TRY(op_attr_ints_n(c, "output_padding", g.nsp, 0, 0, INT64_MAX, out_pad));
    const int64_t *out_shape;
    int n_out_shape = ir_attr_ints(c->node, "output_shape", &out_shape);
    if (n_out_shape >= 0 && n_out_shape != g.nsp && n_out_shape != g.nsp + 2)
        return op_error(c, VKI_ERROR_MODEL, "output_shape has %d values; expected %d spatial dims", n_out_shape, g.nsp);
    bool same = !strcmp(auto_pad, "SAME_UPPER") || !strcmp(auto_pad, "SAME_LOWER");
    for (int d = 0; d < g.nsp; d++) {
        int64_t span = (g.kernel[d] - 1) * g.dil[d] + 1;
        int64_t full = g.stride[d] * (g.in[d] - 1) + out_pad[d] + span; /* output size without padding */
        if (n_out_shape >= 0 || same) {
            /* the pads follow from the wanted size; negative ones extend the output with zeros */
            g.out[d] = n_out_shape >= 0 ? out_shape[n_out_shape - g.nsp + d] : g.in[d] * g.stride[d];
            int64_t total = full - g.out[d];
            g.pad_begin[d] = !strcmp(auto_pad, "SAME_UPPER") ? floor_div(total, 2) : total - floor_div(total, 2);
        } else {
            int64_t pb = 0, pe = 0;
            if (!strcmp(auto_pad, "NOTSET")) pb = pads[d], pe = pads[g.nsp + d];
            g.pad_begin[d] = pb;
            g.out[d] = full - pb - pe;
        }
        if (g.out[d] < 0)
            return op_error(c, VKI_ERROR_SHAPE, "output spatial dim %d would be %lld", d, (long long)g.out[d]);
    }
    return record(c, &g, true);
}

const op_def op_Conv = {"Conv", "", "float32 float16 bfloat16", "", plan_conv};
const op_def op_ConvTranspose = {"ConvTranspose", "", "float32 float16 bfloat16", "", plan_conv_transpose};
