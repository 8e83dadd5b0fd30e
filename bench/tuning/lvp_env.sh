# Sourced (from the repository root) on a machine without a Vulkan loader or driver: Debian 12's
# lavapipe (Mesa 22.3, LLVM 15) from the .debs in .lvp (bench/tuning/lvp_cores.sh lists them), extracted
# into /opt/lvp, as the Vulkan driver; the loader from .gl (tests/gpu/gpu_suite.sh's recipe)
for f in .gl/libvulkan1*.deb; do dpkg -x $f / ; done; ldconfig
mkdir -p /opt/lvp; for f in .lvp/*.deb; do dpkg -x $f /opt/lvp; done
L=/opt/lvp/usr/lib/x86_64-linux-gnu
printf '{"file_format_version":"1.0.0","ICD":{"library_path":"%s/libvulkan_lvp.so","api_version":"1.3.230"}}\n' $L > /opt/lvp/lvp.json
export VK_DRIVER_FILES=/opt/lvp/lvp.json VK_ICD_FILENAMES=/opt/lvp/lvp.json LD_LIBRARY_PATH=$L:/opt/lvp/lib/x86_64-linux-gnu
export VKINFER_VALIDATION=0 VKINFER_CACHE_DIR=/tmp/vkcache
