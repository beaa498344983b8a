# One entry point for humans and CI: `make test` is the README's test command and what .ci/run runs.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
CARGO ?= cargo
DIST ?= dist
# Interpreters `wheel-check` installs the wheel into, each in a fresh virtualenv.
WHEEL_PYTHONS ?= python3

.PHONY: test lint rust-test py-test py-install test-wheel test-wheel-check venv wheel wheel-check wheel-install docs clean-venv fuzz fuzz-replay bench test-faults test-repeat

## Everything CI checks: formatting, clippy, Rust tests, Python client tests, the wheel's packaging.
test: lint rust-test fuzz-replay py-test test-wheel-check

lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	# What `cargo doc` shows is where ARCHITECTURE.md sends a reader: no broken link in it.
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps --workspace --quiet
	python3 tools/import_floors.py

rust-test:
	$(CARGO) test --workspace
	# The README's demo build (no SQL engine): `tally sql` there says how to get it.
	$(CARGO) test -q -p tally-cli --no-default-features --lib

## Every committed fuzz input (fuzz/corpus, fuzz/regressions) through its target, on stable and
## in the workspace's target dir: seconds, no nightly.
fuzz-replay:
	CARGO_TARGET_DIR="$(CURDIR)/target" $(CARGO) run -q --manifest-path fuzz/Cargo.toml --no-default-features --bin replay

## The fuzz campaigns (nightly and cargo-fuzz): each of FUZZ_TARGETS for FUZZ_SECONDS, one at a
## time, memory capped and slow inputs reported as hangs; new corpus inputs land in fuzz/corpus,
## crashes in fuzz/artifacts (see RELIABILITY.md "Fuzzing"). Leak detection is off: the parallel
## reader's threads register thread-local destructors that LeakSanitizer reports as a 32-byte leak;
## memory blow-ups are caught by the RSS cap instead.
FUZZ_SECONDS ?= 600
FUZZ_TARGETS ?= tfrecord event scalar run_summary runtime_manifest soak run_config metric_key read http_head
fuzz:
	cd fuzz && for t in $(FUZZ_TARGETS); do \
	  cargo +nightly fuzz run --debug-assertions $$t -- -max_total_time=$(FUZZ_SECONDS) \
	    -jobs=1 -rss_limit_mb=2048 -timeout=10 -detect_leaks=0 || exit 1; \
	done

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

## The wheel the Python tests install, exactly as a user's pip would: packaged as the published
## wheel is (abi3, manylinux2014 linked through zig, the sdist beside it) but built on the `dev`
## profile. Optimizing the SQL engine for the published wheel was most of a clean CI run and
## changes nothing the tests check but speed (`dev` only adds debug assertions and overflow
## checks), so it is `make wheel`'s alone, checked by `make wheel-check` before publishing
## (README "Install").
TEST_DIST ?= $(DIST)/test
# Both wheels' build: abi3, manylinux2014, linked through zig (found on the venv's PATH).
MATURIN_BUILD = PATH="$(abspath $(VENV))/bin:$$PATH" $(VENV)/bin/maturin build --compatibility manylinux2014 --zig
test-wheel: venv
	rm -rf $(TEST_DIST)
	$(MATURIN_BUILD) --profile dev --out $(TEST_DIST)
	$(VENV)/bin/maturin sdist --out $(TEST_DIST)

py-install: test-wheel
	$(PY) -m pip install --quiet --no-deps --force-reinstall $(TEST_DIST)/tally_rl-*.whl

## The test wheel's tags, glibc floor, offline install and sdist: tests/python/test_wheel.py, as
## `make wheel-check` runs it on the published wheel.
test-wheel-check: test-wheel
	TALLY_WHEEL_DIR="$(TEST_DIST)" TALLY_WHEEL_PYTHONS="$(WHEEL_PYTHONS)" $(PY) -m pytest tests/python/test_wheel.py -q

py-test: venv py-install
	# The whole workspace, as `cargo test --workspace` builds it: the same features, so the
	# dependencies built for the Rust tests are reused, not built again for a subset.
	$(CARGO) build --workspace --examples --bins
	$(PY) -m pytest tests/python -q --ignore=tests/python/test_wheel.py

## The long fault runs, not in `make test`: 8 threads sharing a Logger for 100 000 iterations
## (CI runs 20 000), 50 SIGKILL trials (CI runs 20) and 10 million steps with the resident set
## printed at start and end (CI runs 200 000, debug).
test-faults: wheel-install
	TALLY_STRESS_ITERATIONS=100000 TALLY_KILL_TRIALS=50 $(PY) -m pytest -q tests/python/test_threads.py tests/python/test_signals.py
	TALLY_RSS_STEPS=10000000 $(CARGO) test --release -p tally --test faults_rss -- --nocapture

## Every test that kills a process, waits on a clock or races a thread, REPEAT rounds in a row
## (default 50), stopping at the first failure: a harness race shows here before it costs a CI
## run (RELIABILITY.md "Tests repeated"). Not part of `make test`: about 100 s a round on 2 cores.
REPEAT ?= 50
REPEAT_LOG = target/test-repeat.log
REPEAT_RUST = faults_full_disk faults_slow_sink faults_start faults_vanished health_stall_exit \
	health_webhook health_logger storage_faults summary_during_run kill_safety health_after_stall \
	watch_exit watch_hangup panel_pty hostile_logdirs watch_health console_pty hostile_clients api
REPEAT_PY = $(addprefix tests/python/,$(addsuffix .py,test_signals test_threads test_faults_panel \
	test_health_stall_exit test_health_hung_writer test_summary_writer_durability test_storage_faults \
	test_writer_storage_faults test_uncaught_exception test_closed_stdout test_health_webhook))
REPEAT_CARGO = $(CARGO) test -q -p tally -p tally-tfevents -p tally-cli -p tally-tui -p tally-board \
	$(addprefix --test ,$(REPEAT_RUST))
test-repeat: venv py-install
	$(REPEAT_CARGO) --no-run
	for i in $$(seq $(REPEAT)); do \
	  echo "test-repeat: round $$i of $(REPEAT)"; \
	  $(REPEAT_CARGO) >$(REPEAT_LOG) 2>&1 \
	    && $(PY) -m pytest -q -x -p no:cacheprovider $(REPEAT_PY) >>$(REPEAT_LOG) 2>&1 \
	    || { tail -n 60 $(REPEAT_LOG); echo "test-repeat: failed in round $$i (whole output: $(REPEAT_LOG))" >&2; exit 1; }; \
	done

## What to publish, into $(DIST)/ (Cargo.toml's `wheel` profile): the wheel, abi3 (CPython >= 3.9) and manylinux2014 (glibc >=
## 2.17) so pip installs it without Rust, and the sdist for platforms without a wheel, the wheel
## built from it. maturin links through zig (ziglang, from requirements-test.txt, found as
## `python3 -m ziglang` on PATH) against glibc 2.17 whatever this machine's glibc is. The wheel
## is then deflated again by Debian's advancecomp (7-Zip's deflate encoder): the same files, a
## smaller download (BENCHMARKS.md "Building").
wheel: venv
	@command -v advzip >/dev/null || { echo "make wheel: advzip not found; install Debian's advancecomp (apt-get install advancecomp)" >&2; exit 1; }
	rm -f $(DIST)/tally_rl-*.whl $(DIST)/tally_rl-*.tar.gz
	$(MATURIN_BUILD) --profile wheel --sdist --out $(DIST)
	advzip --recompress -3 --quiet $(DIST)/tally_rl-*.whl

## The published wheel in the venv, for what measures or soaks it (`make bench`, `make test-faults`).
wheel-install: wheel
	$(PY) -m pip install --quiet --no-deps --force-reinstall $(DIST)/tally_rl-*.whl

## That wheel's tags (file name, WHEEL, `auditwheel show`), then a fresh virtualenv per
## WHEEL_PYTHONS with no Rust on PATH: offline install, `import tally`, `tally --version`;
## and the sdist's Cargo workspace.
wheel-check: wheel
	TALLY_WHEEL_DIR="$(DIST)" TALLY_WHEEL_PYTHONS="$(WHEEL_PYTHONS)" $(PY) -m pytest tests/python/test_wheel.py -q

## Every comparison of the performance targets, each printing its figures and ratios
## (BENCHMARKS.md; ~16 minutes on the quiet 2-core machine, minutes of CPU and ~2 GB of temporary disk: not
## part of `make test`). In this order, each a name in BENCH_ONLY:
##   step     `cargo bench -p tally --bench step -- thread_cpu`: Logger::step with 60 values and
##            the writer thread's work per step, caller-thread CPU ("Logger hot path (Rust)")
##   render   `cargo bench -p tally-tui --bench render`: one 140x50 frame ("Terminal panel")
##   rss      `cargo bench -p tally --bench rss_long`: VmRSS growth over 10 million steps
##            ("Memory over a long run"; TALLY_RSS_STEPS sets the count)
##   trinity  bench/trinity_aggregate.py: tally.metrics vs trinity-rft ("Trinity-style
##            aggregation"); BENCH_TRINITY_ARGS
##   python   bench/python_hot_path.py: log.step and add_scalar vs tensorboardX, wandb and the
##            no-op floor ("Logger hot path (Python)"); BENCH_HOT_ARGS
##            (not run here, needs valgrind: bench/python_step_instructions.py, the caller
##            thread's instructions per log.step and per no-op call, stable under load)
##   scaling  bench/write_scaling.py: write cost vs metrics per record and ranks, the Rust
##            criterion bench `scaling` and the Python rows, table and plot ("Scaling (target 8,
##            write rows)"); BENCH_SCALING_ARGS
##   panel    bench/panel_cpu.py: the panel thread's CPU at 2 Hz in a 140x50 pty, stepping at 50
##            and 500 it/s ("Panel thread CPU"); BENCH_PANEL_ARGS
##   read     bench/read_bench.py: tally.read, tally export and the Rust reader against
##            EventAccumulator, tbparse, tensorboard-data-server, a Python TFRecord loop and the
##            read + CRC-32C floor, then the read scaling rows ("Reading event files"); BENCH_ARGS
##   board    bench/board.py: `tally board` against TensorBoard with its data server: first chart,
##            a 1 000-run logdir, 10 million points, peak memory, CPU following 100 growing runs
##            with the page open in headless Chromium ("tally board"); BENCH_BOARD_ARGS
##   curves   bench/watch_curves.py: the first frame of `tally watch --curves` on 20 tags x
##            50 000 steps, the wheel's binary ("Curves in the terminal")
##   health   `cargo bench -p tally --bench health`: the health evaluator's default rules on the
##            60-value step, caller-thread CPU; `--bench health_step`: what they add to
##            Logger::step, rules on and off in alternating blocks ("Health rules")
## A subset: `make bench BENCH_ONLY="panel scaling"`; `BENCH_ARGS=` drops the read scaling rows.
BENCH_ONLY ?= step render rss trinity python scaling panel read board curves health
BENCH_ARGS ?= --scaling --plot docs/read_scaling.png
BENCH_HOT_ARGS ?= --iterations 3000 --runs 5
BENCH_TRINITY_ARGS ?= --trinity-tasks 25
BENCH_SCALING_ARGS ?= --runs 3 --plot docs/write_scaling.png
BENCH_PANEL_ARGS ?= --runs 3 --seconds 60 --rate 50 500
BENCH_BOARD_ARGS ?=
bench-on = $(if $(filter $(1),$(BENCH_ONLY)),$(2),@true)
bench: venv wheel-install
	$(CARGO) build --release -p tally-cli -p tally-tfevents --examples --bins
	$(call bench-on,step,$(CARGO) bench -p tally --bench step -- --warm-up-time 1 --measurement-time 3 thread_cpu)
	$(call bench-on,render,$(CARGO) bench -p tally-tui --bench render)
	$(call bench-on,rss,$(CARGO) bench -p tally --bench rss_long)
	$(call bench-on,trinity,$(PY) bench/trinity_aggregate.py $(BENCH_TRINITY_ARGS))
	$(call bench-on,python,$(PY) bench/python_hot_path.py $(BENCH_HOT_ARGS))
	$(call bench-on,scaling,$(PY) bench/write_scaling.py $(BENCH_SCALING_ARGS))
	$(call bench-on,panel,$(PY) bench/panel_cpu.py $(BENCH_PANEL_ARGS))
	$(call bench-on,read,$(PY) bench/read_bench.py $(BENCH_ARGS))
	$(call bench-on,board,$(PY) bench/board.py $(BENCH_BOARD_ARGS))
	$(call bench-on,curves,$(PY) bench/watch_curves.py --tally $(dir $(PY))tally)
	$(call bench-on,health,$(CARGO) bench -p tally --bench health -- --warm-up-time 1 --measurement-time 5)
	$(call bench-on,health,$(CARGO) bench -p tally --bench health_step)

## Regenerate committed generated files (docs/metrics.md, schemas/*.json).
docs:
	TALLY_BLESS=1 $(CARGO) test -q -p tally-schema

clean-venv:
	rm -rf $(VENV)

## The framework integrations against the real stable-baselines3, CleanRL-style torch, rsl_rl,
## skrl, TorchRL, transformers, Trinity-RFT and verl (tests/integrations). Not part of `make test`: torch is large, so these run
## in their own virtualenv, built here from tests/integrations/requirements.txt.
INTEG_VENV ?= .venv-integrations
INTEG_PY := $(INTEG_VENV)/bin/python
.PHONY: test-integrations integrations-venv

integrations-venv: $(INTEG_VENV)/.installed $(INTEG_VENV)/rsl_rl_2/.installed

$(INTEG_VENV)/.installed: tests/integrations/requirements.txt
	python3 -m venv $(INTEG_VENV)
	$(INTEG_PY) -m pip install --quiet --upgrade pip
	$(INTEG_PY) -m pip install --quiet -r tests/integrations/requirements.txt
	# trinity-rft without its dependencies (verl, vllm, ...): see requirements.txt.
	$(INTEG_PY) -m pip install --quiet --no-deps trinity-rft==0.6.0
	# verl without its dependencies (vllm, ray, flash-attn, ...): see requirements.txt.
	$(INTEG_PY) -m pip install --quiet --no-deps verl==0.9.1
	touch $@

# rsl-rl-lib 2.x (the line Isaac Lab pins) beside the venv's 5.x, for tests/integrations/test_rsl_rl_2.py.
$(INTEG_VENV)/rsl_rl_2/.installed: $(INTEG_VENV)/.installed
	$(INTEG_PY) -m pip install --quiet --no-deps --target $(INTEG_VENV)/rsl_rl_2 rsl-rl-lib==2.3.3
	touch $@

test-integrations: integrations-venv
	$(INTEG_PY) -m pip install --quiet --no-build-isolation --no-deps --force-reinstall .
	$(INTEG_PY) -m pytest tests/integrations -q

## The health corpus (docs/contract/health.md "Honesty"): small real runs of stable-baselines3,
## CleanRL-shaped, rsl_rl-style and tally.Logger loops, healthy and with planted faults, written
## to tests/fixtures/health_corpus/ with manifest.json. `make test` reads the committed files
## (crates/tally-read/tests/health_corpus.rs); this writes them again (torch, minutes: one run
## at a time, niced). RUNS="name ..." writes only those.
CORPUS_VENV ?= .venv-corpus
CORPUS_PY := $(CORPUS_VENV)/bin/python
.PHONY: health-corpus

$(CORPUS_VENV)/.installed: tests/integrations/requirements.txt
	python3 -m venv $(CORPUS_VENV)
	$(CORPUS_PY) -m pip install --quiet $$(grep -E '^(torch|gymnasium|stable-baselines3|tensorboard|numpy)==' tests/integrations/requirements.txt)
	touch $@

health-corpus: $(CORPUS_VENV)/.installed
	$(CARGO) build -q -p tally-py --features extension-module
	cp target/debug/lib_tally.so python/tally/_tally.abi3.so
	nice -n 10 $(CORPUS_PY) tests/corpus/health_corpus.py $(if $(RUNS),--only $(RUNS))

## tensorboardX's and torch's own writer tests against tally's writers (docs/contract/integrations.md
## "Their own test suites"): tensorboardX's come from its PyPI sdist; torch's test/test_tensorboard.py
## from a PyTorch checkout, given as TORCH_TESTS=path/to/test_tensorboard.py (torch has no sdist).
UPSTREAM := build/upstream
TBX_VERSION := 2.6.5
TORCH_TESTS ?=
.PHONY: test-upstream
test-upstream: integrations-venv
	$(INTEG_PY) -m pip install --quiet -r tests/upstream/requirements.txt
	$(INTEG_PY) -m pip install --quiet --no-build-isolation --no-deps --force-reinstall .
	rm -rf $(UPSTREAM) && mkdir -p $(UPSTREAM)
	$(INTEG_PY) -m pip download --quiet --no-binary :all: --no-deps tensorboardX==$(TBX_VERSION) -d $(UPSTREAM)
	tar -xzf $(UPSTREAM)/tensorboardx-$(TBX_VERSION).tar.gz -C $(UPSTREAM)
	# The tests import the installed tensorboardX, not the sdist's source beside them.
	rm -rf $(UPSTREAM)/tensorboardx-$(TBX_VERSION)/tensorboardX
	$(INTEG_PY) tests/upstream/run_suites.py --tensorboardx $(UPSTREAM)/tensorboardx-$(TBX_VERSION) $(if $(TORCH_TESTS),--torch $(TORCH_TESTS))

## The MLflow and trackio replicas against the real trackers (tests/replicas): an `mlflow server`
## on a SQLite store started and stopped by the tests, trackio in local mode. Not part of `make
## test`: mlflow and trackio are heavy, so these run in their own virtualenv, built here from
## tests/replicas/requirements.txt (the main venv and the package's imports never need them).
REPLICAS_VENV ?= .venv-replicas
REPLICAS_PY := $(REPLICAS_VENV)/bin/python
.PHONY: test-replicas replicas-venv

replicas-venv: $(REPLICAS_VENV)/.installed

$(REPLICAS_VENV)/.installed: tests/replicas/requirements.txt
	python3 -m venv $(REPLICAS_VENV)
	$(REPLICAS_PY) -m pip install --quiet --upgrade pip
	$(REPLICAS_PY) -m pip install --quiet -r tests/replicas/requirements.txt
	touch $@

test-replicas: replicas-venv
	$(REPLICAS_PY) -m pip install --quiet --no-build-isolation --no-deps --force-reinstall .
	$(REPLICAS_PY) -m pytest tests/replicas -q
