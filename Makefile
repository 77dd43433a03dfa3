# pipefwd: a thin layer over meson + ninja. Every target installs what it needs.
BUILD ?= build
MESON_OPTS ?= -Dwerror=true
PY := /usr/bin/python3

.PHONY: all deps build run test install bench bench-compare bench-instr bench-instr-baseline bench-converge fuzz soak clean
all: build

deps:
	@scripts/deps.sh

$(BUILD)/build.ninja:
	meson setup $(BUILD) $(MESON_OPTS)

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)

# HUGE=1: the hugepage path (needs free hugepages on a mounted hugetlbfs; docs/deploy.md).
run: build
	@scripts/run-default.sh $(BUILD) $(if $(HUGE),--huge)

# DESTDIR=/tmp/stage make install stages it; PREFIX is meson's --prefix (set at setup).
install: build
	meson install -C $(BUILD) --no-rebuild $(if $(DESTDIR),--destdir $(abspath $(DESTDIR)))

$(BUILD)-asan/build.ninja:
	meson setup $(BUILD)-asan $(MESON_OPTS) -Dwerror=false -Dsanitizers=true -Dbuildtype=debugoptimized

# The sanitizer build compiles (niced) while the release build's suites run: they wait
# mostly on the clock and leave the CPUs idle (scripts/run-tests.sh).
test: build $(BUILD)-asan/build.ninja
	ASAN_BUILD=$(BUILD)-asan scripts/run-tests.sh $(BUILD)

bench: build
	@scripts/bench.sh $(BUILD) $(if $(QUICK),--quick) $(if $(WRITE_REPORT),--write-report) $(if $(CPUS),--cpus $(CPUS))

bench-compare: build
	@scripts/bench.sh $(BUILD) --compare $(or $(BASE),main) $(if $(CPUS),--cpus $(CPUS))

# Instructions per packet under callgrind, pipefwd and peers (docs/benchmarks.md).
bench-instr: build
	@scripts/deps.sh dpdk-doc
	@$(PY) scripts/bench_instr.py $(BUILD) $(if $(WRITE_REPORT),--write-report)

# Routes from the network at scale (issue 30 item 9; docs/benchmarks.md "Convergence"):
# FRR and BIRD in namespaces, root, about 6 minutes. CONV_FRR: route counts fed through
# FRR; CONV_FEED: routes of the direct FPM feeder (0 skips either).
CONV_FRR ?= 100000,1000000
CONV_FEED ?= 1000000
bench-converge: build
	@$(PY) scripts/bench_converge.py --pipefwd $(BUILD)/app/pipefwd --frr $(CONV_FRR) \
		--feed $(CONV_FEED) $(if $(JSON),--json $(JSON))

# Re-record the gate's baseline (make test's instr_gate) after an intended change.
bench-instr-baseline: build
	@$(PY) scripts/bench_instr.py $(BUILD) --write-baseline test/perf/instr_baseline.json

fuzz: deps
	@scripts/fuzz.sh $(BUILD)-fuzz

soak: build
	@$(PY) scripts/soak.py --pipefwd $(BUILD)/app/pipefwd

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-fuzz
