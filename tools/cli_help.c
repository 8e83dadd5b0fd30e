/* The vkinfer program's help: an overview, and one page per command with an example each. */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char cli_overview[] =
    "usage: vkinfer COMMAND [options]\n"
    "\n"
    "commands:\n"
    "  devices              list the Vulkan devices ('*' marks the default)\n"
    "  ops [--markdown]     list the ops vkinfer runs\n"
    "  options [--markdown] list the library's options (the VKINFER_* variables)\n"
    "  info MODEL.onnx      inputs, outputs, opset, ops used and whether each runs, weights (alias: inspect)\n"
    "  run MODEL.onnx       run the model once, print and save its outputs\n"
    "  bench MODEL.onnx     time whole runs (upload + GPU + download)\n"
    "  help COMMAND         the options of COMMAND, with an example (also: vkinfer COMMAND --help)\n"
    "  --version            the version\n"
    "\n"
    "environment: VKINFER_DEVICE (default device), VKINFER_VALIDATION=1, VKINFER_CACHE_DIR and the other\n"
    "options `vkinfer options` lists (docs/environment.md)\n";

static const struct {
    const char *name, *text;
} pages[] = {
    {"devices",
     "usage: vkinfer devices\n"
     "\n"
     "Lists the Vulkan devices with their driver, memory, limits and features. '*' marks the one used\n"
     "when neither --device nor VKINFER_DEVICE chooses (discrete, integrated, virtual GPU, then CPU).\n"
     "\n"
     "example:\n"
     "  vkinfer devices\n"},
    {"ops",
     "usage: vkinfer ops [--markdown]\n"
     "\n"
     "Lists the ONNX ops vkinfer runs, the dtypes of each and what it does not support yet.\n"
     "  --markdown    as a Markdown table (docs/ops.md's)\n"
     "\n"
     "example:\n"
     "  vkinfer ops | grep Conv\n"},
    {"options",
     "usage: vkinfer options [--markdown]\n"
     "\n"
     "Lists the library's options: each VKINFER_* environment variable it reads when a context is\n"
     "created, with its type, values, default and effect. run and bench take them as --option too.\n"
     "  --markdown    as the Markdown tables of docs/environment.md\n"
     "\n"
     "example:\n"
     "  vkinfer options | grep -A1 KERNELS\n"},
    {"info",
     "usage: vkinfer info MODEL.onnx [--json]     (alias: inspect)\n"
     "\n"
     "What the model file holds, without running it or needing a GPU: inputs and outputs with dtypes\n"
     "and shapes (symbolic dimensions by name), IR version and opset, node count, the ops used with\n"
     "their node counts and whether vkinfer runs each, and the bytes of weights (initializers).\n"
     "Exits 0 even when some ops are not supported (they are marked); 1 if the file cannot be read.\n"
     "  --json        one JSON object instead of text\n"
     "\n"
     "example:\n"
     "  vkinfer info resnet18.onnx\n"},
    {"run",
     "usage: vkinfer run MODEL.onnx [options]\n"
     "\n"
     "Runs the model once and prints a summary of each output (min, max, mean, first values).\n"
     "  --input NAME=FILE.npy     an input (repeat for each input; a bfloat16 input takes float32,\n"
     "                            int4/int2 take int8, uint4/uint2 uint8, float8 and float4e2m1\n"
     "                            their codes in uint8, e.g. ml_dtypes' a.view(np.uint8))\n"
     "  --random-inputs           fill inputs not given with seeded random data (floats in [-1,1),\n"
     "                            integers in [0,10)); symbolic dims are 1 unless --shape sets them\n"
     "  --shape NAME=1x3x224x224  the shape of a random input (repeatable; fixed dims must match)\n"
     "  --seed N                  seed of --random-inputs (default 0)\n"
     "  --output-dir DIR          write each output to DIR/<name>.npy (DIR is created if missing and\n"
     "                            checked before the model runs; bfloat16 is written as float32,\n"
     "                            the 4-/2-bit and float8 dtypes as the inputs above)\n"
     "  --device SPEC             device index or name substring (see `vkinfer devices`)\n"
     "  --precision fp32|fp16     fp16: the fp16 execution mode (float32 weights and activations held\n"
     "                            as float16 on the GPU, fp32 accumulation; inputs, outputs float32)\n"
     "  --option NAME=VALUE       a library option (repeatable; `vkinfer options` lists them), over\n"
     "                            the environment variable of that name\n"
     "  --cpu-threads N           on lavapipe (the CPU device): its compute threads (LP_NUM_THREADS;\n"
     "                            default one per core). 0 runs each dispatch on lavapipe's submit\n"
     "                            thread, without waking others: 2.5-4.5x faster for small networks\n"
     "                            (robot policies), slower for large ones (docs/troubleshooting.md).\n"
     "                            Without it or LP_NUM_THREADS, a model of under 1 MiB of weights and\n"
     "                            declared inputs takes 0, others one per core, or two per core on a\n"
     "                            machine of 2 cores (steadier there)\n"
     "Sequence inputs are refused (set them with the C or Python API); an optional input not given is\n"
     "none. Sequence and optional outputs are summarised tensor by tensor, not written to --output-dir.\n"
     "\n"
     "example:\n"
     "  vkinfer run resnet18.onnx --input input=x.npy --output-dir out    # writes out/<output>.npy\n"
     "  vkinfer run model.onnx --random-inputs --shape x=8x3x224x224\n"},
    {"bench",
     "usage: vkinfer bench MODEL.onnx [options]\n"
     "\n"
     "Times whole vki_session_run calls (input upload + GPU + output download) after warm-up runs,\n"
     "and prints min, mean, median, p90, p99, max and throughput (items per second, the batch being\n"
     "the first dimension of the first input). A progress line goes to stderr on a terminal.\n"
     "  --input NAME=FILE.npy | --random-inputs [--shape NAME=DIMS] [--seed N]   as for run\n"
     "  --warmup N                untimed runs first (default 10)\n"
     "  --runs N                  timed runs (default 50)\n"
     "  --duration SECONDS        time runs for this long instead of --runs (at least one run)\n"
     "  --json                    one JSON object: every statistic, session creation and plan times,\n"
     "                            the run times (times_ms) and, with --profile, GPU time per op type\n"
     "                            and per kernel\n"
     "  --profile                 then (after the timed runs) one run with GPU timestamps: time,\n"
     "                            GFLOP/s and GB/s per op type, kernel and dispatch (slowest first),\n"
     "                            the share outside kernels\n"
     "  --profile-all             as --profile, then every dispatch in recorded order\n"
     "  --plot FILE.png           a latency histogram and GPU time per op type (implies --profile;\n"
     "                            drawn by python3 with matplotlib, see docs/environment.md)\n"
     "  --output-dir DIR          the first (untimed) run's outputs, as run writes them (DIR checked\n"
     "                            before the model loads; with --json the \"wrote\" lines go to stderr)\n"
     "  --device SPEC             device index or name substring\n"
     "  --precision fp32|fp16     as for run\n"
     "  --cpu-threads N           as for run\n"
     "  --option NAME=VALUE       as for run\n"
     "\n"
     "One bench call plans the model once for all of these: a check of its outputs, the timings and\n"
     "the profile (--output-dir out --json --profile).\n"
     "\n"
     "example:\n"
     "  vkinfer bench resnet18.onnx --random-inputs --shape input=8x3x224x224 --duration 10 --json\n"
     "  vkinfer bench resnet18.onnx --input input=x.npy --output-dir out --json --profile\n"},
};

const char *cli_command_help(const char *cmd)
{
    if (!strcmp(cmd, "inspect")) cmd = "info";
    for (size_t i = 0; i < sizeof pages / sizeof *pages; i++)
        if (!strcmp(pages[i].name, cmd)) return pages[i].text;
    return NULL;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "vkinfer: ");
    if (cmd) fprintf(stderr, "%s: ", cmd);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (cmd && cli_command_help(cmd)) fprintf(stderr, " (see `vkinfer %s --help`)\n", cmd);
    else fprintf(stderr, " (see `vkinfer --help`)\n");
    return EXIT_USAGE;
}

bool cli_wants_help(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--")) return false;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return true;
    }
    return false;
}
