/* Lookup of the embedded SPIR-V (table generated at build time from shaders/). */
#include "vk.h"

#include <string.h>

extern vk_shader vk_shader_table[];
extern const unsigned vk_shader_table_count;

/* Bindings a shader declares: 1 + the largest Binding decoration in its SPIR-V. */
static uint32_t count_bindings(const vk_shader *s)
{
    const uint32_t *w = s->code;
    size_t n = s->size / 4;
    uint32_t count = 0;
    for (size_t i = 5; i < n;) {
        uint32_t op = w[i] & 0xffff, len = w[i] >> 16;
        if (len == 0) break;
        if (op == 71 /* OpDecorate */ && len >= 4 && w[i + 2] == 33 /* Binding */ && w[i + 3] + 1 > count) count = w[i + 3] + 1;
        i += len;
    }
    return count;
}

const vk_shader *vk_shader_find(const char *name)
{
    for (unsigned i = 0; i < vk_shader_table_count; i++)
        if (!strcmp(vk_shader_table[i].name, name)) {
            vk_shader *s = &vk_shader_table[i];
            if (!s->bindings) s->bindings = count_bindings(s);
            return s;
        }
    return NULL;
}
