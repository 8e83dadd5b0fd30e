/* The per-thread last-error message behind vki_last_error(). */
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char last_error[2048];

const char *vki_last_error(void) { return last_error; }

void vki_clear_error(void) { last_error[0] = 0; }

vki_status vki_fail(vki_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}

vki_status vki_fail_prefix(vki_status status, const char *fmt, ...)
{
    char prefix[768], old[sizeof last_error];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, last_error, sizeof old);
    snprintf(last_error, sizeof last_error, "%s%s", prefix, old);
    return status;
}
