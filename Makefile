# Thin wrapper around CMake. `make demo` and `make test` work on a fresh
# Debian 12 machine: both install what is missing first.
#   make test SANITIZE=1     the same tests under ASan+UBSan (in BUILD-asan)
#   make test BUILD=dir      build somewhere else
BUILD    ?= build
SANITIZE ?= 0
JOBS     ?= $(shell nproc)
ifeq ($(SANITIZE),1)
BUILD_DIR := $(BUILD)-asan
CMAKE_SAN := -DMT_SANITIZE=ON
else
BUILD_DIR := $(BUILD)
CMAKE_SAN := -DMT_SANITIZE=OFF
endif

.PHONY: all deps build test unit demo bench bench-peers clean

all: build

deps:
	@./deploy/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD_DIR) $(CMAKE_SAN) >/dev/null
	@cmake --build $(BUILD_DIR) -j $(JOBS) -- --no-print-directory

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure --timeout 600 $(CTEST_ARGS)

unit: build
	cd $(BUILD_DIR) && ctest --output-on-failure -R '^unit_' $(CTEST_ARGS)

demo: build
	@./deploy/demo.sh $(BUILD_DIR)

bench: build
	@./bench/run.sh $(BUILD_DIR)

# Manta's microbenchmark next to dask.distributed's (installs it if missing).
bench-peers: build
	@./bench/peers/compare.py --build $(BUILD_DIR) $(PEERS_ARGS)

clean:
	rm -rf $(BUILD) $(BUILD)-asan
