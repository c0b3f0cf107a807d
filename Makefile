# Thin wrapper around CMake. `make demo` and `make test` work on a fresh
# Debian 12 machine: both install what is missing first.
#   make test SANITIZE=1     the same tests under ASan+UBSan (in BUILD-asan)
#   make test BUILD=dir      build somewhere else
#   make fuzz                every libFuzzer harness for FUZZ_SECONDS each
#                            (clang, in BUILD-fuzz; docs/fuzzing.md);
#                            FUZZERS="qty exec_proto" runs only those
# `make test` ends with a fuzz smoke run (FUZZ_SMOKE_SECONDS per harness;
# not with SANITIZE=1: the harnesses are ASan+UBSan builds either way).
#   make chaos               the chaos suite (tests/chaos/README.md) for
#                            CHAOS_SECONDS; counts to BUILD/chaos.json
#   make install             the build into PREFIX (default /usr/local;
#                            DESTDIR= stages it): cmake/install.cmake,
#                            docs/deploy.md; `make uninstall` removes it
#   make package             the Debian package BUILD/manta_<v>_<arch>.deb
#                            (cmake/package.cmake, docs/deploy.md)
BUILD    ?= build
SANITIZE ?= 0
JOBS     ?= $(shell nproc)
FUZZ_BUILD         ?= $(BUILD)-fuzz
FUZZ_SECONDS       ?= 60
FUZZ_SMOKE_SECONDS ?= 3
FUZZERS            ?=
CHAOS_SECONDS      ?= 300
PREFIX             ?= /usr/local
ifeq ($(SANITIZE),1)
BUILD_DIR := $(BUILD)-asan
CMAKE_SAN := -DMT_SANITIZE=ON
else
BUILD_DIR := $(BUILD)
CMAKE_SAN := -DMT_SANITIZE=OFF
endif

.PHONY: all deps build test unit demo bench bench-peers clean fuzz-build fuzz \
	chaos install uninstall package

all: build

deps:
	@./deploy/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD_DIR) $(CMAKE_SAN) >/dev/null
	@cmake --build $(BUILD_DIR) -j $(JOBS) -- --no-print-directory

# The fuzz smoke run is the same binaries (ASan+UBSan already) either way:
# it runs with the plain `make test` only.
ifeq ($(SANITIZE),1)
test: build
	cd $(BUILD_DIR) && ctest --output-on-failure --timeout 600 $(CTEST_ARGS)
else
test: build fuzz-build
	cd $(BUILD_DIR) && ctest --output-on-failure --timeout 600 $(CTEST_ARGS)
	@./tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SMOKE_SECONDS)
endif

unit: build
	cd $(BUILD_DIR) && ctest --output-on-failure -R '^unit_' $(CTEST_ARGS)

demo: build
	@./deploy/demo.sh $(BUILD_DIR)

bench: build
	@./bench/run.sh $(BUILD_DIR)

# Manta's microbenchmark next to dask.distributed's (installs it if missing).
bench-peers: build
	@./bench/peers/compare.py --build $(BUILD_DIR) $(PEERS_ARGS)

# The harnesses need clang and a build dir of their own (MANTA_FUZZ).
fuzz-build: deps
	@cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DMANTA_FUZZ=ON \
		>/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzzers -- \
		--no-print-directory

fuzz: fuzz-build
	@./tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZERS)

# kill -9 workers, executors, the head and Redis under load; CHAOS_STORAGE,
# CHAOS_SEED and the periods come from the environment (the README).
chaos: build
	MANTA_BIN_DIR=$(CURDIR)/$(BUILD_DIR)/bin \
	MANTA_PROTO_DIR=$(CURDIR)/proto PYTHONDONTWRITEBYTECODE=1 \
	/usr/bin/python3 tests/chaos/chaos.py --seconds $(CHAOS_SECONDS) \
		--out $(BUILD_DIR)/chaos.json $(CHAOS_ARGS)

# Binaries, libmanta (.so and .a), headers, manta.pc, the CMake package,
# the Python bridge and the docs under $(DESTDIR)$(PREFIX).
install: build
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD_DIR) --prefix "$(PREFIX)"

# Removes every file the last `make install` from this build dir wrote
# (its install_manifest.txt, under the same DESTDIR), then the folders that
# only Manta used.
uninstall:
	@DESTDIR="$(DESTDIR)" cmake -DMANIFEST=$(BUILD_DIR)/install_manifest.txt \
		-P cmake/uninstall.cmake

# A sanitizer build is no package: SANITIZE=1 is refused.
package: build
ifeq ($(SANITIZE),1)
	@echo "make package: not from a SANITIZE=1 build" >&2; exit 1
endif
	@rm -f $(BUILD_DIR)/manta_*.deb
	@cd $(BUILD_DIR) && cpack -G DEB >/dev/null
	@ls $(CURDIR)/$(BUILD_DIR)/manta_*.deb

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(FUZZ_BUILD)
