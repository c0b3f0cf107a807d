# Thin wrapper around CMake. `make demo` and `make test` work on a fresh
# Debian 12 machine: both install what is missing first.
BUILD    ?= build
SANITIZE ?= 0
JOBS     ?= $(shell nproc)
ifeq ($(SANITIZE),1)
BUILD    := $(BUILD)-asan
CMAKE_SAN := -DMT_SANITIZE=ON
endif

.PHONY: all deps build test unit demo bench clean

all: build

deps:
	@./deploy/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) $(CMAKE_SAN) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure --timeout 600 $(CTEST_ARGS)

unit: build
	cd $(BUILD) && ctest --output-on-failure -R '^unit_' $(CTEST_ARGS)

demo: build
	@./deploy/demo.sh $(BUILD)

bench: build
	@./bench/run.sh $(BUILD)

clean:
	rm -rf build build-asan
