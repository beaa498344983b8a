# One entry point for humans and CI: `make test` is the README's test command and what .ci/run runs.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
CARGO ?= cargo

.PHONY: test lint rust-test py-test py-install venv docs clean-venv

## Everything CI checks: formatting, clippy, Rust tests, Python client tests.
test: lint rust-test py-test

lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

rust-test:
	$(CARGO) test --workspace

## A virtualenv with the real Python clients (tensorboard, tbparse, tensorboardX, wandb,
## mpi4py) and the build/check tools (maturin, mypy).
venv: $(VENV)/.installed

$(VENV)/.installed: requirements-test.txt
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-test.txt
	# The real trinity-rft for the differential aggregation tests: its own dependencies are
	# heavy (torch, vllm, ...) and `trinity.utils.metrics` needs only numpy.
	$(PY) -m pip install --quiet --no-deps trinity-rft==0.6.0
	touch $@

## Build the abi3 wheel (release) and install it into the venv exactly as `pip install .` does
## for a user (maturin is the build backend; it comes from requirements-test.txt).
py-install: venv
	$(PY) -m pip install --quiet --no-build-isolation --no-deps --force-reinstall .

py-test: venv py-install
	$(CARGO) build -p tally-cli -p tally-tfevents --examples --bins
	$(PY) -m pytest tests/python -q

## Regenerate committed generated files (docs/metrics.md, schemas/*.json).
docs:
	TALLY_BLESS=1 $(CARGO) test -q -p tally-schema

clean-venv:
	rm -rf $(VENV)
