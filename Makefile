# A thin front door: every real step is CMake/CTest. `make demo` and
# `make test` install what is missing first (packaging/install-deps.sh): the
# demo its own group of packages only, the rest every group.
JOBS ?= $(shell nproc)
BUILD ?= build
CMAKE_FLAGS ?= -DLB_WERROR=ON -DLB_BUILD_BENCH=ON
# CMake's Makefiles are recursive: without this, every sub-make run from a
# recipe here prints its Entering/Leaving directory lines.
MAKEFLAGS += --no-print-directory

.PHONY: all deps build windows demo test test-release report-skipped test-asan test-tsan test-fuzz fuzz fuzz-run soak bench bench-icount package abi-update format clean

all: build

deps:
	@./packaging/install-deps.sh all

# The parts `make demo` switches off in the folder it shares with this one:
# switched on again here, before CMAKE_FLAGS, so a CMAKE_FLAGS of
# -DLB_JAVA=OFF still wins.
LB_PARTS = LB_BUILD_TESTS LB_JAVA LB_LUA LB_PYTHON LB_PHP LB_CSHARP LB_GO LB_NODE LB_CBCTL
build: deps
	cmake -S . -B $(BUILD) $(LB_PARTS:%=-D%=ON) $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)

# lazybreaker.dll for 64-bit Windows, cross-built with mingw-w64
# (cmake/toolchain-mingw64.cmake) into build-windows/: the DLL, its import
# library liblazybreaker.dll.a and the static library, and all of it with
# the headers, lazybreaker.pc and the CMake package in
# build-windows/packages/lazybreaker-<version>-win-x64.zip (docs/install.md,
# "Windows").
WINDOWS_BUILD ?= build-windows
windows:
	@./packaging/install-deps.sh demo test csharp windows
	cmake -S . -B $(WINDOWS_BUILD) --toolchain cmake/toolchain-mingw64.cmake -DLB_WERROR=ON
	cmake --build $(WINDOWS_BUILD) -j $(JOBS)
	cd $(WINDOWS_BUILD) && cpack

# The first run: the library and the demo only (no test, benchmark, binding
# or tool), in the build folder `make test` then completes; CMake's warnings
# and its progress lines, nothing else. ARGS go to the demo
# (`make demo ARGS=--help`). Only the demo group of packages, and the other
# parts off: configuring them costs seconds, and each toolchain missing on a
# first run would be one more SKIPPING warning.
demo:
	@./packaging/install-deps.sh demo
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) $(LB_PARTS:%=-D%=OFF) -DLB_BUILD_BENCH=OFF --log-level=WARNING
	@cmake --build $(BUILD) -j $(JOBS) --target lazybreaker-demo
	@$(BUILD)/examples/lazybreaker-demo $(ARGS)

# Every test of every language, then the suite again under ASan+UBSan and
# under TSan, each in a build folder of its own. The sanitizer runs leave
# out the bindings that run in a managed runtime, each for its own reason:
# - csharp: dotnet cannot load an ASan/TSan-built library without the
#   sanitizer runtime in LD_PRELOAD, and the runtime's own GC and signal
#   tricks then read as errors (cmake/csharp.cmake does not build it there);
# - go: Go's race detector is a TSan runtime of its own that cannot share a
#   process with a TSan-built library, and an ASan-built library needs Go's
#   -asan build and the sanitizers' runtimes in every test binary; the
#   release run has the Go tests under -race (cmake/go.cmake);
# - java: below.
# node runs in the ASan run, with the runtimes preloaded into the system
# node, and not in the TSan one (cmake/node.cmake says why).
# The library under them is covered there by the C, C++ and Lua suites.
# Last, the fuzz targets (tests/fuzz) for a minute each.
test: test-release test-asan test-tsan test-fuzz
	@$(MAKE) --no-print-directory report-skipped

test-release: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)
	@$(MAKE) --no-print-directory report-skipped

# A language whose toolchain is missing (or cbctl, whose libraries are) is skipped (outside CI, where that
# fails the configure): say so loudly, last, where it cannot be missed.
report-skipped:
	@if [ -s $(BUILD)/skipped-bindings.txt ]; then \
	  echo; echo "************************************************************"; \
	  echo "make test: these languages and tools were SKIPPED, not tested:"; \
	  sed 's/^/  - /' $(BUILD)/skipped-bindings.txt; \
	  echo "Install their toolchains: packaging/install-deps.sh (all, or their groups)"; \
	  echo "************************************************************"; \
	fi

# The sanitizer runs leave out the java label too: a JVM cannot load an ASan-
# or TSan-built library without the sanitizer's runtime preloaded into the
# java launcher, and the sanitizers then report the JVM's own signal handling
# and JIT memory. cmake/java.cmake does not build the binding there at all.
test-asan: deps
	cmake -S . -B build-asan -DLB_WERROR=ON -DCMAKE_BUILD_TYPE=Debug -DLB_SANITIZE=address,undefined
	cmake --build build-asan -j $(JOBS)
	ctest --test-dir build-asan --output-on-failure -j $(JOBS) -LE 'packaging|abi|bench|csharp|java|go|docs'

test-tsan: deps
	cmake -S . -B build-tsan -DLB_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLB_SANITIZE=thread
	cmake --build build-tsan -j $(JOBS)
	ctest --test-dir build-tsan --output-on-failure -j $(JOBS) -LE 'packaging|abi|bench|csharp|java|go|docs'

# The libFuzzer targets of tests/fuzz, in a clang tree of their own
# (build-fuzz: the library's objects and the targets only, ASan+UBSan, never
# with TSan): each replays its corpus, then fuzzes for 60 s in `make test`
# (test-fuzz) or FUZZ_SECONDS in `make fuzz`. Without clang and libFuzzer
# (clang, libclang-rt-14-dev) they are skipped loudly, or fail under CI=true.
FUZZ_SECONDS ?= 600
test-fuzz:
	@./packaging/install-deps.sh demo fuzz
	@$(MAKE) --no-print-directory fuzz-run FUZZ_TIME=60

fuzz:
	@./packaging/install-deps.sh demo fuzz
	@$(MAKE) --no-print-directory fuzz-run FUZZ_TIME=$(FUZZ_SECONDS)

fuzz-run:
	@if ! echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char *, unsigned long) { return 0; }' | \
	    clang++ -x c++ -fsanitize=fuzzer,address,undefined -o /dev/null - >/dev/null 2>&1; then \
	  if [ "$$CI" = true ]; then \
	    echo "make: clang++ with libFuzzer is missing (clang, libclang-rt-14-dev): the fuzz tests cannot run (CI=true)" >&2; exit 1; \
	  fi; \
	  mkdir -p $(BUILD); \
	  echo "fuzz (tests/fuzz): clang++ with libFuzzer is missing (clang, libclang-rt-14-dev)" >> $(BUILD)/skipped-bindings.txt; \
	  echo; echo "************************************************************"; \
	  echo "make: the fuzz targets were SKIPPED: clang++ with libFuzzer is missing"; \
	  echo "************************************************************"; \
	  exit 0; \
	fi; \
	CC=clang CXX=clang++ cmake -S . -B build-fuzz -DLB_FUZZ=ON -DLB_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DLB_FUZZ_SECONDS=$(FUZZ_TIME) && \
	cmake --build build-fuzz -j $(JOBS) --target fuzz_api fuzz_registry_file fuzz_close && \
	ctest --test-dir build-fuzz --output-on-failure -j $(JOBS) -L fuzz

# The kill test of shared registries (tests/shared/test_kill.cpp) for ten
# minutes instead of the suite's one round of 4,000 kills: rounds of 4,000
# kills, each on a fresh file and checked, until SOAK_SECONDS have passed.
SOAK_SECONDS ?= 600
soak: build
	cmake --build $(BUILD) --target test_kill -j $(JOBS)
	./$(BUILD)/tests/shared/test_kill --kills 4000 --seconds $(SOAK_SECONDS)

# .deb and .rpm packages in $(BUILD)/packages (packaging/make-packages.sh
# configures one clean build tree per format under $(BUILD)/packaging).
package: deps
	./packaging/make-packages.sh --work $(BUILD)/packaging --out $(BUILD)/packages

# Writes this release's baseline abi/lazybreaker-MAJOR.MINOR.abi and abi/symbols.txt from this build, on
# purpose: review the diff, it is the ABI change you are making.
abi-update: build
	cmake --build $(BUILD) --target abi-update

# Runs every benchmark this build has (the bindings' when their toolchains
# were found) and rewrites bench/RESULTS.md from their tables, with the
# machine, the compiler and the load they ran under (bench/write-results.sh).
bench: build
	JOBS=$(JOBS) ./bench/write-results.sh $(BUILD)

# Only the exact instruction count (callgrind), against LB_ICOUNT_MAX_PAIR.
bench-icount: build
	ctest --test-dir $(BUILD) -L bench --output-on-failure

# The files the format check (label format) checks, as clang-format writes them.
format:
	cmake/check-format.sh clang-format $(CURDIR) --fix

clean:
	rm -rf build build-asan build-tsan build-fuzz build-windows
