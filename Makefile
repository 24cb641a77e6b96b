# headroom's front door. `make run` and `make test` work on a fresh Debian 12 machine: they
# install what is missing (scripts/install-deps.sh), configure, build, then run or test.
PRESET ?= $(if $(CI),ci,default)
BUILD_DIR := build
HEADROOM := $(BUILD_DIR)/bin/headroom
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# Most integration tests wait on daemons and child processes rather than compute: twice as many
# test processes as cores keeps the cores busy.
TEST_JOBS ?= $(shell echo $$(( $(JOBS) * 2 )))
# The sanitizer run leaves out (by name) the tests whose time goes to Chromium and to bash
# running the guide pages, and the twin tests (an hour of a row twice: ~165 s a case in the
# sanitizer build; the controller, agent and simulator code they run is run there by the
# controller, agent and row simulator tests), the tests on a real local Slurm (their time goes to
# Slurm's scheduling; the same headroom code runs under FakeSlurmTest), and the package test (it
# packages the build it runs in: an instrumented binary is not what a package holds). See .ci/run.
ASAN_EXCLUDE ?= ^(ReportBrowserTest|Guide|TwinTest|SlurmTest)\.|^PackageInstallRemove$$

.PHONY: all deps configure build run test package bench asan clang-tsa fuzz format check-format check-includes check-function-size clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake --preset $(PRESET) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# The main job on its embedded default: how many more servers fit in the POLCA row's power
# budget, per policy (data/scenarios/polca-a100-row.yaml, docs/row-simulator.md). Prints the
# table and writes plan.json and report.html (docs/report.md) into $(PLAN_DIR).
PLAN_DIR ?= headroom-plan
run: build
	@$(HEADROOM) plan --report --out $(PLAN_DIR)

test: build
	@ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(TEST_JOBS)

# The Debian package (cmake/Packaging.cmake, docs/deploy.md "Install"):
# $(BUILD_DIR)/package/headroom_VERSION_ARCH.deb.
package: build
	@cd $(BUILD_DIR) && cpack -G DEB
	@ls $(BUILD_DIR)/package/*.deb

bench: build
	@$(BUILD_DIR)/bench/headroom_bench --benchmark_min_time=0.2

# The tests under AddressSanitizer + UndefinedBehaviorSanitizer (all but $(ASAN_EXCLUDE)).
asan: deps
	@cmake --preset asan >/dev/null
	@cmake --build build-asan -j $(JOBS)
	@ctest --test-dir build-asan --output-on-failure -j $(TEST_JOBS) -E '$(ASAN_EXCLUDE)'

# clang with -Wthread-safety -Werror: compiler-checked locking (every library and executable;
# not the tests, which gcc builds and runs twice and which take no locks of their own),
# instrumented for libFuzzer; also builds the fuzz targets.
clang-tsa: deps
	@cmake --preset clang-tsa >/dev/null
	@cmake --build build-clang -j $(JOBS)

# Every parser of outside input under libFuzzer (fuzz/, docs/fuzzing.md): the kept regression
# inputs once, then each target for $(FUZZ_SECONDS) s from its seed corpus, $(JOBS) at a time.
FUZZ_SECONDS ?= 60
fuzz: clang-tsa
	@scripts/fuzz.sh --seconds $(FUZZ_SECONDS) --jobs $(JOBS)

format:
	@git ls-files '*.h' '*.cc' | xargs clang-format -i

check-format:
	@scripts/check-format.sh

check-includes:
	@scripts/check-includes.sh

check-function-size:
	@scripts/check-function-size.sh

clean:
	@rm -rf build build-asan build-clang
