# pipefwd: a thin layer over meson + ninja. Every target installs what it needs.
BUILD ?= build
MESON_OPTS ?= -Dwerror=true
PY := /usr/bin/python3

.PHONY: all deps build run test bench bench-compare clean
all: build

deps:
	@scripts/deps.sh

$(BUILD)/build.ninja:
	meson setup $(BUILD) $(MESON_OPTS)

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)

run: build
	@scripts/run-default.sh $(BUILD)

test: build
	@scripts/run-tests.sh $(BUILD)

bench: build
	@scripts/bench.sh $(BUILD) $(if $(QUICK),--quick)

bench-compare: build
	@scripts/bench.sh $(BUILD) --compare $(or $(BASE),main)

clean:
	rm -rf $(BUILD)
