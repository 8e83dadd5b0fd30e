/* placeholder replaced by the CLI */
#include "vkinfer.h"
int main(void) { return vki_vulkan_available() ? 0 : 1; }
