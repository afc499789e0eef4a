# Every target sets itself up on a fresh machine: .venv, dependencies, release build of the Rust core.
.DEFAULT_GOAL := help
PY_BOOT ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.toolweave-deps
BUILT := $(VENV)/.toolweave-built
PEERS := $(VENV)/.toolweave-peers
RUST_SRC := $(shell find rust -name '*.rs') Cargo.toml pyproject.toml

.PHONY: help demo test bench bench-service lint build clean fuzz redis-server soak eval-local

help:
	@echo 'make demo   - real tool-calling conversation against the embedded local model'
	@echo 'make test   - build the Rust core (release) and run the whole test suite'
	@echo 'make eval-local - offline evaluation of the local model (tool choice, arguments, answers), 3-turn chats'
	@echo 'make bench  - benchmarks: Rust core vs pure-Python twin vs peers'
	@echo 'make bench-service - a streaming tool-loop service under load: toolweave vs pydantic-ai vs OpenAI Agents (~2-3 min)'
	@echo 'make lint   - ruff, mypy --strict, cargo fmt --check, cargo clippy -D warnings'
	@echo 'make soak   - reliability attacks randomised and longer, SOAK_SECONDS (60) per area, prints figures'
	@echo 'make fuzz   - cargo fuzz (nightly) on the stream and JSON parsers, FUZZ_SECONDS (60) per target'

$(PY):
	$(PY_BOOT) -m venv $(VENV)

$(STAMP): | $(PY)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q 'maturin>=1.7,<2'
	touch $@

$(BUILT): $(STAMP) $(RUST_SRC)
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH $(VENV)/bin/maturin develop --release --extras local,test,lint,bench,search,mcp
	touch $@

build: $(BUILT)

demo: $(BUILT)
	$(VENV)/bin/toolweave demo

# Offline evaluation of the embedded local model (not part of `make test`): 3-turn conversations with memory over
# the README's tools; prints the rates and writes benches/results/local_eval.md (about 10 minutes on 2 cores).
eval-local: $(BUILT)
	$(PY) benches/eval_local.py

# The Redis memory tests need a redis-server binary; install Debian's when missing and we can (root, as in CI).
redis-server:
	@command -v redis-server >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
		&& apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null; } \
		|| echo 'redis-server unavailable: the Redis memory tests will be skipped'

test: $(BUILT) redis-server
	$(PY) -m pytest -q

# The `peers` extra (litellm: too heavy for build/test/CI) is installed for `make bench` only, once (stamp),
# with pip from pyproject.toml's list, without rebuilding the Rust core.
$(PEERS): pyproject.toml | $(BUILT)
	$(PY) -c "import sys; tomllib = __import__('tomllib' if sys.version_info >= (3, 11) else 'tomli'); print('\\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['peers']))" >$(VENV)/peers.txt
	$(PIP) install -q -r $(VENV)/peers.txt
	touch $@

bench: $(BUILT) $(PEERS)
	$(PY) -m pytest benches -q --benchmark-enable --benchmark-columns=min,mean,median,rounds --benchmark-sort=name

# Starlette + uvicorn, one streaming tool-loop endpoint per framework against a paced mock provider; writes
# benches/results/service.md/.png (benches/service/run.py --help for duration, concurrency, pacing).
bench-service: $(BUILT)
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
	rm -rf $(VENV) target

FUZZ_SECONDS ?= 60
FUZZ_TARGETS := stream_feed json_modes

# Coverage-guided fuzzing of the pure Rust core (fuzz/); needs a nightly toolchain and cargo-fuzz.
# fuzz/seeds/<target>/ holds hand-made starting inputs (e.g. the exact Anthropic event shapes).
fuzz:
	rustup toolchain list | grep -q nightly || rustup toolchain install nightly --profile minimal
	cargo fuzz --version >/dev/null 2>&1 || cargo install cargo-fuzz --locked
	for t in $(FUZZ_TARGETS); do \
		mkdir -p fuzz/corpus/$$t fuzz/seeds/$$t; \
		cargo +nightly fuzz run --fuzz-dir fuzz $$t fuzz/corpus/$$t fuzz/seeds/$$t -- -max_total_time=$(FUZZ_SECONDS) -max_len=4096 || exit 1; \
	done
