/* Bump allocator for data that lives as long as its owner (a model's IR, a plan). */
#include "util.h"

#include <stdlib.h>
#include <string.h>

struct vki_arena_chunk {
    vki_arena_chunk *next;
    size_t used, size;
    _Alignas(16) unsigned char data[];
};

void *arena_alloc(vki_arena *arena, size_t bytes)
{
    bytes = (bytes + 15) & ~(size_t)15;
    if (bytes == 0) bytes = 16;
    vki_arena_chunk *c = arena->head;
    if (!c || c->size - c->used < bytes) {
        size_t size = bytes > 65536 ? bytes : 65536;
        c = malloc(sizeof *c + size);
        if (!c) return NULL;
        c->next = arena->head;
        c->used = 0;
        c->size = size;
        arena->head = c;
    }
    void *p = c->data + c->used;
    c->used += bytes;
    memset(p, 0, bytes);
    return p;
}

const void *arena_mark(const vki_arena *arena) { return arena->head; }

bool arena_release(vki_arena *arena, const void *mark, void *p, size_t bytes)
{
    bytes = (bytes + 15) & ~(size_t)15;
    if (bytes <= 65536) return false; /* small ones share their chunk */
    for (vki_arena_chunk **at = &arena->head; *at && *at != mark; at = &(*at)->next) {
        vki_arena_chunk *c = *at;
        if ((void *)c->data != p) continue;
        if (c->used != bytes) return false; /* not the chunk's only allocation */
        *at = c->next;
        free(c);
        return true;
    }
    return false;
}

char *arena_strndup(vki_arena *arena, const char *s, size_t n)
{
    char *d = arena_alloc(arena, n + 1);
    if (!d) return NULL;
    if (n) memcpy(d, s, n); /* s may be NULL when n is 0 (an empty protobuf string) */
    d[n] = 0;
    return d;
}

size_t arena_held(const vki_arena *arena)
{
    size_t bytes = 0;
    for (const vki_arena_chunk *c = arena->head; c; c = c->next) bytes += c->size;
    return bytes;
}

void arena_free(vki_arena *arena)
{
    vki_arena_chunk *c = arena->head;
    while (c) {
        vki_arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    arena->head = NULL;
}
