# The README's commands. Each installs what it needs (Debian packages, only those missing),
# configures and builds with CMake, then does its job.
BUILD ?= build
JOBS ?= $(shell nproc)
PYTHON ?= /usr/bin/python3

BUILD_PACKAGES = cmake make gcc libc6-dev libvulkan-dev glslc
RUN_PACKAGES = libvulkan1 mesa-vulkan-drivers
TEST_PACKAGES = vulkan-validationlayers python3-numpy python3-onnx python3-torch python3-torchvision libonnx-testdata

.PHONY: all build test demo deps deps-test clean

all: build

deps:
	@scripts/install-packages.sh $(BUILD_PACKAGES) $(RUN_PACKAGES)

deps-test:
	@scripts/install-packages.sh $(BUILD_PACKAGES) $(RUN_PACKAGES) $(TEST_PACKAGES)

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(BUILD) -j $(JOBS)

test: deps-test
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(BUILD) -j $(JOBS)
	cd $(BUILD) && ctest -j $(JOBS) --output-on-failure --timeout 900
	@cmake -DRESULTS=$(BUILD)/conformance-results -P tests/conformance/summary.cmake

demo: deps-test
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(BUILD) -j $(JOBS)
	$(PYTHON) tools/demo.py $(BUILD)/vkinfer

clean:
	rm -rf $(BUILD)
