# Thin front for the commands the README gives. The build itself is CMake's.
BUILD    ?= build
PREFIX   ?= /usr/local
DESTDIR  ?=
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
# Tests `make tsan` runs (a ctest -R pattern): all; `wait` for the wait box's.
TSAN_TESTS ?= .
MAKEFLAGS += --no-print-directory

.PHONY: all deps configure demo test bench install asan tsan fuzz clean

all: configure
	cmake --build $(BUILD) -j $(JOBS)

deps:
	@bash scripts/install-deps.sh

# A configure that failed (say, run before `make deps`) leaves a cache but no
# Makefile; test for the Makefile so that the next make configures again.
configure:
	@test -f $(BUILD)/Makefile || cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_FLAGS) >/dev/null

demo: deps all
	@bash scripts/demo.sh $(BUILD)

test: deps all
	@bash scripts/run-tests.sh $(BUILD)

bench: deps
	@test -f $(BUILD)/Makefile || cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	cmake -S . -B $(BUILD) -DCORUN_BENCH=ON >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

install: all
	DESTDIR=$(DESTDIR) cmake --install $(BUILD) --prefix $(PREFIX)

# The sanitizer build of the tests, as CI runs it.
asan: deps
	cmake -S . -B build-asan -DCORUN_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
	cmake --build build-asan -j $(JOBS)
	@bash scripts/run-tests.sh build-asan

# The wait box's tests under ThreadSanitizer, in its checking build. TSan
# needs a low-entropy address layout: kernels with vm.mmap_rnd_bits above 28
# make it die with "unexpected memory mapping", so the tests run under
# setarch -R (no ASLR) when setarch exists.
tsan: deps
	cmake -S . -B build-tsan -DCORUN_TSAN=ON -DCORUN_WAIT_DEBUG=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
	cmake --build build-tsan -j $(JOBS)
	@CTEST_ARGS="-R $(TSAN_TESTS)" $(if $(shell command -v setarch 2>/dev/null),setarch $(shell uname -m) -R) \
	  bash scripts/run-tests.sh build-tsan

clean:
	rm -rf $(BUILD) build-asan build-tsan build-fuzz

# libFuzzer binaries of every fuzz target (clang), into build-fuzz/fuzz/.
fuzz: deps
	cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCORUN_FUZZ=ON >/dev/null
	cmake --build build-fuzz -j $(JOBS)
