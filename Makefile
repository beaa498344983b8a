# One entry point for humans and CI: `make test` is the README's test command and what .ci/run runs.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
CARGO ?= cargo

.PHONY: test lint rust-test py-test venv docs clean-venv

## Everything CI checks: formatting, clippy, Rust tests, Python client tests.
test: lint rust-test py-test

lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

rust-test:
	$(CARGO) test --workspace

## A virtualenv with the real Python clients (tensorboard, tbparse, tensorboardX).
venv: $(VENV)/.installed

$(VENV)/.installed: requirements-test.txt
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-test.txt
	touch $@

py-test: venv
	$(CARGO) build -p tally-cli -p tally-tfevents --examples --bins
	$(PY) -m pytest tests/python -q

## Regenerate committed generated files (docs/metrics.md).
docs:
	$(CARGO) run -q -p tally-cli -- schema --markdown > docs/metrics.md

clean-venv:
	rm -rf $(VENV)
