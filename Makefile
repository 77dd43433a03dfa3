# pipefwd: a thin layer over meson + ninja. Every target installs what it needs.
BUILD ?= build
MESON_OPTS ?= -Dwerror=true
PY := /usr/bin/python3

.PHONY: all deps build run test install bench bench-compare bench-instr bench-instr-baseline fuzz soak clean
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

test: build $(BUILD)-asan/build.ninja
	ninja -C $(BUILD)-asan && ASAN_BUILD=$(BUILD)-asan scripts/run-tests.sh $(BUILD)

bench: build
	@scripts/bench.sh $(BUILD) $(if $(QUICK),--quick) $(if $(WRITE_REPORT),--write-report)

bench-compare: build
	@scripts/bench.sh $(BUILD) --compare $(or $(BASE),main)

# Instructions per packet under callgrind, pipefwd and peers (docs/benchmarks.md).
bench-instr: build
	@scripts/deps.sh dpdk-doc
	@$(PY) scripts/bench_instr.py $(BUILD) $(if $(WRITE_REPORT),--write-report)

# Re-record the gate's baseline (make test's instr_gate) after an intended change.
bench-instr-baseline: build
	@$(PY) scripts/bench_instr.py $(BUILD) --write-baseline test/perf/instr_baseline.json

fuzz: deps
	@scripts/fuzz.sh $(BUILD)-fuzz

soak: build
	@$(PY) scripts/soak.py --pipefwd $(BUILD)/app/pipefwd

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-fuzz
