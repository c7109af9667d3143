# Thin wrappers over CMake, so the README's two commands do all the set-up.
#   make run    install dependencies, build, run the main job
#   make test   install dependencies (Chromium too), build with -Werror, run the fast CPU test suite
#   make test-long  the long CPU cases (label long): every other transform site, the costly walks, the corpus
BUILD ?= build
JOBS  ?= $(shell nproc)

.PHONY: deps build run test test-long corpus test-asan test-fuzz test-gpu test-slurm skills clean

deps:
	scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD) -DKL_WERROR=ON
	cmake --build $(BUILD) -j$(JOBS)

# The main job on the default backend (cuda where a GPU answers, emu
# otherwise): the example kernel of examples/optimize optimized with the
# shipped skills (skills/sm_90); the run folder gets the optimized kernel
# and its report. On emu nothing is timed, and the report says so.
run: build
	$(BUILD)/bin/klineage doctor
	$(BUILD)/bin/klineage optimize examples/optimize/matmul.cu --workload examples/optimize/workload.lua --budget 30

# The browser check of the HTML reports (label browser) needs headless
# Chromium: installed here, so that CI (CI=true, where a missing Chromium
# fails the check instead of skipping it) has it.
# The long cases (label long) are left to `make test-long`.
test: build
	scripts/install-deps.sh scripts/packages.txt scripts/browser-packages.txt
	cd $(BUILD) && ctest -LE 'gpu|slurm|long' --output-on-failure -j$(JOBS)

# The long CPU cases (label long): the transforms at every lineage site
# make test's sample leaves out, the costly walks, and the outside corpus
# (label corpus too; it skips when the corpus was never fetched, unless
# CI is set: `make corpus` fetches it).
test-long: build
	cd $(BUILD) && ctest -L long --output-on-failure -j$(JOBS)

# The outside CUDA corpus of tests/corpus (Debian source packages, pinned),
# fetched once into the user's cache; never into the repository.
corpus:
	scripts/fetch-corpus.sh

# The shipped skill repository (skills/sm_90), learned again from the H200
# walk journals in reports/walks/ and the probe journals in reports/probes/:
# the same journals give the same bytes (tests/lua/skills_shipped_spec.lua
# checks it).
WALKS ?= reports/walks/h200-2026-12-02b.tar.gz
PROBES ?= reports/probes/h200-2026-12-02.tar.gz
skills: build
	rm -rf $(BUILD)/walks && mkdir -p $(BUILD)/walks && tar xzf $(WALKS) -C $(BUILD)/walks && tar xzf $(PROBES) -C $(BUILD)/walks
	$(BUILD)/bin/klineage skills learn $(BUILD)/walks/h200-2026-12-02/walk-* $(BUILD)/walks/probes/probe-* --out skills/sm_90

# The same suite built with AddressSanitizer and UndefinedBehaviorSanitizer.
# NVRTC keeps allocations alive until exit, so leak checking is off. The
# transforms' lineage property tests (label transform) are Lua over the
# same emu gate the rest of the suite runs; they run in `make test` and
# `make test-long` only, as does the browser check (label browser:
# Chromium, not the engine's C) and the corpus (label corpus: NVRTC and
# kl.source on outside files, which the fuzz runs and test_source cover).
# The long walks (label long, not transform) run here as they always did.
test-asan: deps
	cmake -S . -B $(BUILD)-asan -DKL_WERROR=ON -DKL_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
	cmake --build $(BUILD)-asan -j$(JOBS)
	cd $(BUILD)-asan && ASAN_OPTIONS=detect_leaks=0 ctest -LE 'gpu|transform|browser|slurm|shipped|corpus|exhaustive' --output-on-failure -j$(JOBS)

# Short libFuzzer runs of the parser and the pattern compiler (clang).
test-fuzz:
	scripts/install-deps.sh scripts/packages.txt scripts/fuzz-packages.txt
	cmake -S . -B $(BUILD)-fuzz -DCMAKE_C_COMPILER=clang -DKL_FUZZ=ON
	cmake --build $(BUILD)-fuzz -j$(JOBS) --target fuzz_source fuzz_pattern
	cd $(BUILD)-fuzz && ctest -L fuzz --output-on-failure

# klineage eval --slurm against a single-node Slurm that the test starts
# and stops itself (tests/slurm/run.sh): the slurm packages, then label
# slurm. As root (slurmd), as CI runs it.
test-slurm: build
	scripts/install-deps.sh scripts/slurm-packages.txt
	cd $(BUILD) && ctest -L slurm --output-on-failure

# On a GPU machine: everything, the gpu label included.
test-gpu: build
	cd $(BUILD) && ctest --output-on-failure

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-fuzz
