/* A run's host-side copies of large inputs and outputs, split over threads. One core moves
 * about 6-10 GB/s through memcpy, so a batch of 32 ImageNet images (19 MB of float32) costs
 * 2-3 ms on the host before the GPU sees it, a third of resnet50's fp16 run on an H200; the
 * copies are independent per element, so a few threads each take a contiguous part. Below
 * COPY_SPLIT_BYTES the caller's thread does it all (a policy's observation never starts a
 * thread). */
#include "util.h"

#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

enum { COPY_SPLIT_BYTES = 4 << 20, COPY_MAX_THREADS = 8 };

typedef struct copy_part {
    vki_dtype dtype;
    gpu_storage storage;
    const uint8_t *src;
    uint8_t *dst;
    size_t first, count;
    bool to_storage, ok;
    size_t bad; /* to_storage: the failing element, from the tensor's start */
} copy_part;

static void copy_one(copy_part *p)
{
    size_t host = vki_dtype_size(p->dtype), dev = storage_size(p->storage);
    const uint8_t *src = p->src + p->first * (p->to_storage ? host : dev);
    uint8_t *dst = p->dst + p->first * (p->to_storage ? dev : host);
    if (p->to_storage) {
        p->ok = host_to_storage(p->dtype, src, p->storage, dst, p->count, &p->bad);
        p->bad += p->first;
    } else {
        storage_to_host(p->dtype, p->storage, src, dst, p->count);
        p->ok = true;
    }
}

static void *copy_thread(void *arg)
{
    copy_one(arg);
    return NULL;
}

static int copy_threads(size_t bytes)
{
    if (bytes < COPY_SPLIT_BYTES) return 1;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t want = bytes / COPY_SPLIT_BYTES + 1;
    int n = cores < 1 ? 1 : cores > COPY_MAX_THREADS ? COPY_MAX_THREADS : (int)cores;
    return want < (size_t)n ? (int)want : n;
}

/* Element counts split evenly; part 0 runs on the caller's thread, and a part whose thread
 * cannot start runs there too. */
static bool copy_split(copy_part base, size_t count, size_t *bad)
{
    size_t unit = vki_dtype_size(base.dtype) > storage_size(base.storage) ? vki_dtype_size(base.dtype) : storage_size(base.storage);
    int n = copy_threads(count * unit);
    copy_part parts[COPY_MAX_THREADS];
    pthread_t threads[COPY_MAX_THREADS];
    bool started[COPY_MAX_THREADS] = {false};
    for (int i = 0; i < n; i++) {
        parts[i] = base;
        parts[i].first = count / (size_t)n * (size_t)i;
        parts[i].count = i == n - 1 ? count - parts[i].first : count / (size_t)n;
    }
    for (int i = 1; i < n; i++) started[i] = pthread_create(&threads[i], NULL, copy_thread, &parts[i]) == 0;
    copy_one(&parts[0]);
    bool ok = parts[0].ok;
    if (!ok && bad) *bad = parts[0].bad;
    for (int i = 1; i < n; i++) {
        if (started[i]) pthread_join(threads[i], NULL);
        else copy_one(&parts[i]);
        if (ok && !parts[i].ok) {
            ok = false;
            if (bad) *bad = parts[i].bad;
        }
    }
    return ok;
}

bool host_to_storage_parallel(vki_dtype t, const void *src, gpu_storage s, void *dst, size_t count, size_t *bad_index)
{
    copy_part base = {t, s, src, dst, 0, 0, true, false, 0};
    return copy_split(base, count, bad_index);
}

void storage_to_host_parallel(vki_dtype t, gpu_storage s, const void *src, void *dst, size_t count)
{
    copy_part base = {t, s, src, dst, 0, 0, false, false, 0};
    copy_split(base, count, NULL);
}
