# Every target sets itself up on a fresh machine: .venv, dependencies, the Rust core.
# Published extras (pyproject [project.optional-dependencies]) are what users install; development tools are
# PEP 735 dependency groups ([dependency-groups]) installed here with `pip install --group` (pip >= 25.1).
.DEFAULT_GOAL := help
PY_BOOT ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
MATURIN := VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH $(VENV)/bin/maturin
STAMP := $(VENV)/.toolweave-deps
BUILT := $(VENV)/.toolweave-built
DEMO_BUILT := $(VENV)/.toolweave-demo-built
BENCH_DEPS := $(VENV)/.toolweave-bench
PEERS := $(VENV)/.toolweave-peers
WHEEL_TOOLS := $(VENV)/.toolweave-wheel-tools
RUST_SRC := $(shell find rust -name '*.rs') Cargo.toml pyproject.toml
# The extras the test suite exercises, with the release core; plus the `test` and `lint` groups.
TEST_EXTRAS ?= local,redis,search,mcp,temporal
DIST ?= dist
WHEEL_TARGETS ?= x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu
# The core tests, run once more with the pure-Python twins selected everywhere (TOOLWEAVE_PURE=1).
PURE_TESTS ?= $(wildcard tests/core/test_*.py)
# Profile-guided optimisation (PGO) of the core that ships (`make wheel`) and that `make bench` measures, as jiter's
# and pydantic-core's wheels are built: an instrumented build runs benches/pgo_workload.py (PGO_SECONDS), LLVM's
# llvm-profdata of rustc's own LLVM major version merges the counts, and the release build uses them. `make test`
# keeps the plain release build (correctness does not need it; two more release builds would cost CI ~5 minutes).
RUST_HOST := $(shell rustc -vV 2>/dev/null | sed -n 's/^host: //p')
RUST_LLVM := $(shell rustc -vV 2>/dev/null | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')
PGO := target/pgo
PGO_DATA := $(PGO)/merged.profdata
PGO_SECONDS ?= 3
PGO_BUILT := $(VENV)/.toolweave-pgo-built
# RUSTFLAGS of a PGO build: the merged profile when there is one (made before the recipe that reads this runs)
PGO_RUSTFLAGS = $(if $(wildcard $(PGO_DATA)),-Cprofile-use=$(abspath $(PGO_DATA)))
# The host wheel's build. The profile names functions by hashes of how each crate was compiled, so the instrumented
# build is this same build (zig included), linked by cc (zig's linker refuses -u __llvm_profile_runtime) and not
# audited; a profile from a plain cargo build matched the zig-built wheel only in part (4% fewer instructions, 21% here).
PGO_WHEEL = $(MATURIN) build --release --zig --compatibility manylinux2014 --target $(RUST_HOST)

.PHONY: help demo test test-pure bench bench-service lint build clean fuzz redis-server soak wheel eval-local

help:
	@echo 'make demo   - real tool-calling conversation against the embedded local model'
	@echo 'make test   - build the Rust core (release) and run the whole test suite'
	@echo 'make test-pure - the core tests again with the pure-Python twins (TOOLWEAVE_PURE=1)'
	@echo 'make wheel  - sdist and abi3 manylinux2014 wheels (x86_64 PGO-built, aarch64) into dist/, checked by auditwheel'
	@echo 'make eval-local - offline evaluation of the local model (tool choice, arguments, answers), 3-turn chats'
	@echo 'make bench  - benchmarks (PGO-built core, as the wheel): Rust core vs pure-Python twin vs peers'
	@echo 'make bench-service - a streaming tool-loop service under load: toolweave vs pydantic-ai vs OpenAI Agents, 1 vs 2 workers (~4-5 min)'
	@echo 'make lint   - ruff, mypy --strict, cargo fmt --check, cargo clippy -D warnings'
	@echo 'make soak   - reliability attacks randomised and longer, SOAK_SECONDS (60) per area, prints figures'
	@echo 'make fuzz   - cargo fuzz (nightly) on the stream, JSON and incremental partial parsers, FUZZ_SECONDS (60) per target'

$(PY):
	$(PY_BOOT) -m venv $(VENV)

$(STAMP): | $(PY)
	$(PIP) install -q --upgrade 'pip>=25.1'
	$(PIP) install -q 'maturin>=1.7,<2'
	touch $@

$(BUILT): $(STAMP) $(RUST_SRC)
	$(MATURIN) develop --release --extras $(TEST_EXTRAS)
	$(PIP) install -q --group test --group lint
	touch $@

build: $(BUILT)

# The demo needs the runtime and the `local` extra only, and a core built with Cargo's `quick` profile (no LTO:
# compiles in a fraction of the release time). A release core already built for the tests and up to date is used
# as it is; the tests rebuild in release whenever the last build was the quick one (BUILT is then out of date).
$(DEMO_BUILT): $(STAMP) $(RUST_SRC)
	$(MATURIN) develop --profile quick --extras local
	touch $@

demo:
	@$(MAKE) --no-print-directory -q $(BUILT) 2>/dev/null || $(MAKE) --no-print-directory $(DEMO_BUILT)
	$(VENV)/bin/toolweave demo

# Offline evaluation of the embedded local model (not part of `make test`): 3-turn conversations with memory over
# the README's tools; prints the rates and writes benches/results/local_eval.md (about 10 minutes on 2 cores).
eval-local:
	@$(MAKE) --no-print-directory -q $(BUILT) 2>/dev/null || $(MAKE) --no-print-directory $(DEMO_BUILT)
	$(PY) benches/eval_local.py

# The Redis memory tests need a redis-server binary; install Debian's when missing and we can (root, as in CI).
redis-server:
	@command -v redis-server >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
		&& apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null; } \
		|| echo 'redis-server unavailable: the Redis memory tests will be skipped'

test: $(BUILT) redis-server
	$(PY) -m pytest -q

test-pure: $(BUILT)
	TOOLWEAVE_PURE=1 $(PY) -m pytest -q $(PURE_TESTS)

$(BENCH_DEPS): pyproject.toml | $(BUILT)
	$(PIP) install -q --group bench
	touch $@

# The `peers` group (litellm: too heavy for build/test/CI) is installed for `make bench` only.
$(PEERS): pyproject.toml | $(BUILT)
	$(PIP) install -q --group peers
	touch $@

# The profile of the host's core (see PGO above). Without a matching llvm-profdata (installed from Debian's llvm-N
# when root with apt, as redis-server) there is no profile and the builds are plain release builds, with a note.
$(PGO_DATA): $(RUST_SRC) benches/pgo_workload.py | $(WHEEL_TOOLS)
	rm -rf $(PGO)/raw $@
	@profdata=$$(command -v llvm-profdata-$(RUST_LLVM)) || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
		&& apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq llvm-$(RUST_LLVM) >/dev/null \
		&& profdata=$$(command -v llvm-profdata-$(RUST_LLVM)); }; \
	if [ -z "$$profdata" ]; then echo "llvm-profdata-$(RUST_LLVM) unavailable: the core is built without PGO"; exit 0; fi; \
	set -e; rm -rf $(PGO)/instrumented; \
	RUSTFLAGS='-Cprofile-generate=$(abspath $(PGO))/raw -Clinker=cc' $(PGO_WHEEL) --auditwheel skip \
		--target-dir $(PGO)/build --out $(PGO)/instrumented; \
	$(PY) -m zipfile -e $$(ls $(PGO)/instrumented/*.whl) $(PGO)/instrumented; \
	$(PY) benches/pgo_workload.py $(PGO)/instrumented/toolweave/_core.abi3.so --seconds $(PGO_SECONDS); \
	$$profdata merge -o $@ $(PGO)/raw

# `make bench` measures the host wheel's own core: built as `make wheel` builds it, put over the editable core.
$(PGO_BUILT): $(BUILT) $(PGO_DATA)
	rm -rf $(PGO)/dist
	RUSTFLAGS='$(PGO_RUSTFLAGS)' $(PGO_WHEEL) --out $(PGO)/dist
	$(PY) -m zipfile -e $$(ls $(PGO)/dist/*.whl) $(PGO)/dist
	cp $(PGO)/dist/toolweave/_core.abi3.so python/toolweave/_core.abi3.so
	touch $@

bench: $(PGO_BUILT) $(BENCH_DEPS) $(PEERS)
	$(PY) -m pytest benches -q --benchmark-enable --benchmark-columns=min,mean,median,rounds --benchmark-sort=name

# Starlette + uvicorn, one streaming tool-loop endpoint per framework against a paced mock provider; writes
# benches/results/service.md/.png (benches/service/run.py --help for duration, concurrency, pacing).
bench-service: $(BUILT) $(BENCH_DEPS)
	$(PY) benches/service/run.py

lint: $(BUILT)
	$(VENV)/bin/ruff check python tests benches
	$(VENV)/bin/ruff format --check python tests benches
	$(VENV)/bin/mypy
	$(PY) -m mypy.stubtest toolweave._core
	cargo fmt --check
	cargo clippy --all-targets -- -D warnings

SOAK_SECONDS ?= 60
SOAK_ARGS ?=

# The attacks of tests/reliability/ randomised and longer; exits non-zero when a lost/broken/hung/leak figure is not 0.
soak: $(BUILT) redis-server
	$(PY) tests/reliability/soak.py --seconds $(SOAK_SECONDS) $(SOAK_ARGS)

clean:
	rm -rf $(VENV) target $(DIST)

$(WHEEL_TOOLS): pyproject.toml | $(STAMP)
	$(PIP) install -q --group wheel
	touch $@

# The sdist and abi3 wheels (one per architecture, any CPython >= 3.10) for any Linux with glibc >= 2.17:
# zig (the ziglang package) links against glibc 2.17 symbols, so x86_64 and aarch64 build here; auditwheel
# then checks each wheel's external symbols and libraries against its manylinux2014 tag. The host's wheel is
# PGO-built (above); another architecture's cannot run the workload here and is a plain release build.
wheel: $(WHEEL_TOOLS) $(PGO_DATA)
	rm -rf $(DIST)
	$(MATURIN) sdist --out $(DIST)
	for t in $(WHEEL_TARGETS); do \
		rustup target list --installed | grep -qx $$t || rustup target add $$t || exit 1; \
		if [ $$t = $(RUST_HOST) ]; then RUSTFLAGS='$(PGO_RUSTFLAGS)' $(PGO_WHEEL) --out $(DIST) || exit 1; \
		else $(MATURIN) build --release --zig --compatibility manylinux2014 --target $$t --out $(DIST) || exit 1; fi; \
	done
	for w in $(DIST)/*.whl; do \
		$(VENV)/bin/auditwheel show $$w | tee $(DIST)/.audit; \
		tr -s ' \n' '  ' <$(DIST)/.audit | grep -q 'consistent with the following platform tag: "manylinux_2_17_' || exit 1; \
	done
	rm -f $(DIST)/.audit
	ls -l $(DIST)

FUZZ_SECONDS ?= 60
FUZZ_TARGETS := stream_feed json_modes partial_incremental

# Coverage-guided fuzzing of the pure Rust core (fuzz/); needs a nightly toolchain and cargo-fuzz.
# fuzz/seeds/<target>/ holds hand-made starting inputs (e.g. the exact Anthropic event shapes).
fuzz:
	rustup toolchain list | grep -q nightly || rustup toolchain install nightly --profile minimal
	cargo fuzz --version >/dev/null 2>&1 || cargo install cargo-fuzz --locked
	for t in $(FUZZ_TARGETS); do \
		mkdir -p fuzz/corpus/$$t fuzz/seeds/$$t; \
		cargo +nightly fuzz run --fuzz-dir fuzz $$t fuzz/corpus/$$t fuzz/seeds/$$t -- -max_total_time=$(FUZZ_SECONDS) -max_len=4096 || exit 1; \
	done
