/* The library's version as a string, for bindings that cannot read the header's macros. */
#include "vkinfer.h"

#define VKI_STR2(x) #x
#define VKI_STR(x) VKI_STR2(x)

const char *vki_version(void)
{
    return VKI_STR(VKI_VERSION_MAJOR) "." VKI_STR(VKI_VERSION_MINOR) "." VKI_STR(VKI_VERSION_PATCH);
}
