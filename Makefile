# The README's commands. Each installs what it needs (Debian packages, only those missing),
# configures and builds with CMake, then does its job.
BUILD ?= build
JOBS ?= $(shell nproc)
PYTHON ?= /usr/bin/python3
PREFIX ?= /usr/local
# -Werror for CI and developers only; a plain `cmake` build (users) keeps warnings as warnings
DEV_FLAGS = -DVKINFER_WERROR=ON

BUILD_PACKAGES = cmake make gcc libc6-dev libvulkan-dev glslc
RUN_PACKAGES = libvulkan1 mesa-vulkan-drivers
# tests: pkgconf, g++ and clang (header and installed-library tests), python3-venv and
# python3-setuptools (`pip install ./python` into a venv), python3-matplotlib (bench --plot)
TEST_PACKAGES = vulkan-validationlayers python3-numpy python3-onnx python3-torch python3-torchvision libonnx-testdata \
	pkgconf g++ clang python3-venv python3-setuptools python3-pip python3-matplotlib
CROSS_PACKAGES = gcc-aarch64-linux-gnu libc6-dev-arm64-cross

.PHONY: all build install test demo deps deps-test cross-check warnings-check fuzz fuzz-build sanitize tsan clean

all: build

deps:
	@scripts/install-packages.sh $(BUILD_PACKAGES) $(RUN_PACKAGES)

deps-test:
	@scripts/install-packages.sh $(BUILD_PACKAGES) $(RUN_PACKAGES) $(TEST_PACKAGES)

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(BUILD) -j $(JOBS)

# installs the header, libvkinfer.a, libvkinfer.so.0, the program, vkinfer.pc and the CMake
# package under PREFIX (no test packages needed)
install: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(BUILD) -j $(JOBS) --target vkinfer vkinfer_static vkinfer_shared
	cmake --install $(BUILD) --prefix $(PREFIX)

test: deps-test
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(DEV_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)
	cd $(BUILD) && ctest -j $(JOBS) --output-on-failure --timeout 900
	@cmake -DRESULTS=$(BUILD)/conformance-results -P tests/conformance/summary.cmake
	$(MAKE) fuzz-build
	FUZZ_RUNS=$(TEST_FUZZ_RUNS) tests/fuzz/run.sh $(BUILD)-fuzz $(ONNX_TESTDATA)
	$(MAKE) sanitize
	$(MAKE) tsan

# The unit tests, the CLI test and a slice of the conformance suite (with the convolutions as
# Winograd F(2x2, 3x3) too) built with AddressSanitizer
# and UndefinedBehaviorSanitizer (in $(BUILD)-asan). Leak checks are off: lavapipe's own
# allocations outlive the process; the unit tests check our memory by counters instead.
SANITIZE_TESTS ?= ^unit/|^cli$$|^node/test_(add|averagepool|batchnorm|cast|concat|conv|gather|gemm|matmul|maxpool|reshape|resize|slice|softmax|transpose)|^winograd/node/
sanitize: deps-test
	cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVKINFER_SANITIZE=ON -DVKINFER_ONNX123_TESTS=OFF $(DEV_FLAGS)
	cmake --build $(BUILD)-asan -j $(JOBS)
	cd $(BUILD)-asan && ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		ctest -j $(JOBS) --output-on-failure --timeout 900 -R "$(SANITIZE_TESTS)" -E "unit/test_hostile_models"

# The threads tests built with ThreadSanitizer (in $(BUILD)-tsan): sessions, device tensors and
# the context's locks used from several threads; any report fails
tsan: deps-test
	cmake -S . -B $(BUILD)-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVKINFER_TSAN=ON -DVKINFER_ONNX123_TESTS=OFF $(DEV_FLAGS)
	cmake --build $(BUILD)-tsan -j $(JOBS) --target test_threads test_device_tensors test_device_lost
	cd $(BUILD)-tsan && TSAN_OPTIONS="halt_on_error=1 suppressions=$(CURDIR)/tests/tsan.supp" ctest --output-on-failure --timeout 900 -R "^unit/test_(threads|device_tensors|device_lost)$$"

# libFuzzer targets (ONNX model bytes through load and plan, TensorProto bytes, .npy files)
# built with clang, AddressSanitizer and UndefinedBehaviorSanitizer in $(BUILD)-fuzz, each run
# FUZZ_SECONDS from seeds made from ONNX's test data
FUZZ_SECONDS ?= 60
# `make test` ends with a short, reproducible fuzz run of every target (fixed seed and run
# count, after its regression inputs): about a minute each on two cores
TEST_FUZZ_RUNS ?= 20000
ONNX_TESTDATA ?= /usr/include/onnx/backend/test/data
fuzz-build: deps-test
	cmake -S . -B $(BUILD)-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVKINFER_FUZZ=ON \
		-DBUILD_TESTING=OFF $(DEV_FLAGS)
	cmake --build $(BUILD)-fuzz -j $(JOBS) --target fuzz_model fuzz_tensor fuzz_npy

fuzz: fuzz-build
	tests/fuzz/run.sh $(BUILD)-fuzz $(ONNX_TESTDATA) $(FUZZ_SECONDS)

demo: deps-test
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(BUILD) -j $(JOBS)
	$(PYTHON) tools/demo.py $(BUILD)/vkinfer

# The library and program built for 64-bit Arm Linux with Debian's cross compiler (not part of
# `make test`: the toolchain is a large download). Checks the outputs are aarch64 ELF files.
cross-check: deps
	@scripts/install-packages.sh $(CROSS_PACKAGES)
	cmake -S . -B $(BUILD)-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
		-DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF $(DEV_FLAGS)
	cmake --build $(BUILD)-aarch64 -j $(JOBS)
	file -L $(BUILD)-aarch64/libvkinfer.so $(BUILD)-aarch64/vkinfer | tee /dev/stderr | grep -c "ARM aarch64" | grep -qx 2

# Release, RelWithDebInfo and Debug with gcc and clang, warnings as errors, tests off
warnings-check: deps
	@scripts/install-packages.sh clang
	for cc in gcc clang; do for type in Release RelWithDebInfo Debug; do \
		cmake -S . -B $(BUILD)-$$cc-$$type -DCMAKE_C_COMPILER=$$cc -DCMAKE_BUILD_TYPE=$$type -DBUILD_TESTING=OFF $(DEV_FLAGS) \
		&& cmake --build $(BUILD)-$$cc-$$type -j $(JOBS) || exit 1; done; done

clean:
	rm -rf $(BUILD)
