# Cross-compiling for 64-bit Arm Linux with Debian's gcc-aarch64-linux-gnu. The Vulkan headers
# (libvulkan-dev) are architecture-independent, so the host's /usr/include serves; glslc runs
# on the host. The library opens libvulkan.so.1 at run time, so nothing Arm is linked but libc.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
# headers: the cross sysroot first, then the host's /usr/include for vulkan/vulkan.h only
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
