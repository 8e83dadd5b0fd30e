/* NumPy .npy files: read (C or Fortran order, every numeric dtype and bool) and write. */
#ifndef VKI_NPY_H
#define VKI_NPY_H
#include "vkinfer.h"
typedef struct npy_array {
    vki_dtype dtype;
    int32_t rank;
    int64_t dims[VKI_MAX_RANK];
    void *data; /* C order */
    size_t bytes;
} npy_array;
/* 0 on success; on failure writes a message to err. */
int npy_read(const char *path, npy_array *out, char *err, size_t err_size);
int npy_write(const char *path, vki_dtype dtype, const int64_t *dims, int32_t rank, const void *data, size_t bytes,
              char *err, size_t err_size);
void npy_free(npy_array *a);
#endif
