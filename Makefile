# rootlock's front door. It holds no build logic: cmake builds, ctest tests, scripts do the rest.
# `make demo` and `make test` work on a fresh Debian 12 machine; both install what they need.

BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

# What `make demo` needs, and no more (a fresh machine installs only these for it): the
# toolchain and the libraries rootlock links (doctest-dev too: cmake looks for it), mmdebstrap with
# apt-ftparchive, gpg, gpgv and Debian's keyring for the bases, and python3-dev, whose
# python3-config the CUDA fixture's stub extension modules are compiled with.
DEMO_PACKAGES := build-essential cmake ninja-build pkg-config \
	libarchive-dev libcurl4-openssl-dev libssl-dev libtomlplusplus-dev doctest-dev \
	nlohmann-json3-dev libcli11-dev libfmt-dev libzstd-dev zlib1g-dev libisal-dev liburing-dev \
	libyaml-cpp-dev \
	python3 python3-dev mmdebstrap apt-utils gpg gpgv debian-archive-keyring
# Everything `make test` and `make bench` need besides: the e2e tests' referees, registries,
# container tools, the arm64 toolchain and emulation, and xfsprogs for a scratch filesystem that
# shares blocks (tests/fixtures/reflink_fs: frames cloned into an image).
DEB_PACKAGES := $(DEMO_PACKAGES) clang-format \
	python3-pip python3-venv python3-pyelftools python3-pytest lxc pax-utils libtree hyperfine zstd time faketime unzip \
	skopeo umoci docker-registry apache2-utils podman runc \
	qemu-user-static binfmt-support arch-test gcc-aarch64-linux-gnu xfsprogs

# The sanitized build (fuzz targets and unit binary) and its toolchain (clang 14 rejects lambdas
# capturing structured bindings).
SANITIZED_BUILD ?= build-sanitized
FUZZ_CXX ?= clang++-19
FUZZ_PACKAGES := clang-19 libfuzzer-19-dev libclang-rt-19-dev
FUZZ_SECONDS ?= 600
FUZZ_SMOKE_SECONDS ?= 4

.PHONY: all build deps demo-deps test unit-asan format format-check demo bench clean
.PHONY: fuzz-deps fuzz-build fuzz fuzz-smoke

all: build

# Installs only what is missing, so a second run touches neither the network nor apt's lock.
deps:
	@missing=$$(for p in $(DEB_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null \
		| grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		if [ "$$(id -u)" != 0 ]; then SUDO=sudo; fi; \
		$$SUDO apt-get update -q && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends $$missing; \
	fi

demo-deps:
	@$(MAKE) --no-print-directory deps DEB_PACKAGES="$(DEMO_PACKAGES)"

build: deps
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)

format-check:
	@files=$$(git ls-files '*.cpp' '*.hpp'); clang-format --dry-run --Werror $$files && \
		echo "clang-format: $$(echo $$files | wc -w) files clean"

format:
	clang-format -i $$(git ls-files '*.cpp' '*.hpp')

# The sanitized build (docs/fuzzing.md): clang, the library compiled once with ASan, UBSan and
# libFuzzer's coverage, linked into the fuzz harnesses and into the unit binary. Built as OSS-Fuzz
# builds, -O1 with line tables only: reports still name file and line, and the build takes 30%
# less than with -O2 -g. One build for both halves the sanitized compile time of `make test`.
fuzz-deps: deps
	@$(MAKE) --no-print-directory deps DEB_PACKAGES="$(FUZZ_PACKAGES)"

SANITIZED_CONFIGURE = cmake -S . -B $(SANITIZED_BUILD) -G Ninja -DROOTLOCK_FUZZ=ON \
	-DCMAKE_CXX_COMPILER=$(FUZZ_CXX) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG"

# The unit tests once more under AddressSanitizer and UndefinedBehaviorSanitizer.
unit-asan: fuzz-deps
	$(SANITIZED_CONFIGURE)
	cmake --build $(SANITIZED_BUILD) -j $(JOBS) --target rootlock_unit
	$(SANITIZED_BUILD)/rootlock_unit

# Seeds generated from the fixtures, then the targets, one table of executions, coverage and
# findings at the end.
fuzz-build: fuzz-deps
	$(SANITIZED_CONFIGURE)
	cmake --build $(SANITIZED_BUILD) -j $(JOBS) --target rootlock_fuzz
	python3 fuzz/seeds.py $(SANITIZED_BUILD)

fuzz: fuzz-build
	python3 fuzz/run.py $(SANITIZED_BUILD) $(FUZZ_SECONDS)

fuzz-smoke: fuzz-build
	python3 fuzz/run.py $(SANITIZED_BUILD) $(FUZZ_SMOKE_SECONDS)

# The unit binary and each end-to-end module under ctest (two at a time), then one table of
# every pytest case from their JUnit reports, failed ones by name.
test: build format-check unit-asan fuzz-smoke
	rm -rf $(BUILD)/e2e-results
	cd $(BUILD) && ctest --output-on-failure -j 2; status=$$?; \
		/usr/bin/python3 $(CURDIR)/tests/e2e/summary.py e2e-results; exit $$status

# Only what the demo runs: its packages and the rootlock executable, not the unit binary (which
# took 40% of a full build). The same build folder as `make build`, so a later `make test`
# reuses every object.
demo: demo-deps
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS) --target rootlock
	python3 tests/fixtures/demo.py $(BUILD)/rootlock

bench: build
	python3 tests/bench/bench_check.py $(BUILD)/rootlock
	python3 tests/bench/bench_symbols.py $(BUILD)/rootlock
	python3 tests/bench/bench_lock.py $(BUILD)/rootlock
	python3 tests/bench/bench_build.py $(BUILD)/rootlock
	python3 tests/bench/bench_diff.py $(BUILD)/rootlock
	python3 tests/bench/bench_freeze.py $(BUILD)/rootlock
	python3 tests/bench/bench_base.py $(BUILD)/rootlock
	python3 tests/bench/bench_push.py $(BUILD)/rootlock
	python3 tests/bench/bench_arm64.py $(BUILD)/rootlock
	python3 tests/bench/bench_gpu.py $(BUILD)/rootlock

clean:
	rm -rf $(BUILD) $(SANITIZED_BUILD)
