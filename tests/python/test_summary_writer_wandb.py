"""`tally.SummaryWriter(wandb=...)` mirrors to W&B local-first (docs/contract/remote-sinks.md
"SummaryWriter"): the event file is written first and a follower thread sends its scalar rows
from a cursor in the writer's log_dir, so a W&B that hangs never stalls `add_scalar`, `close()`
keeps its deadline, and `tally sync` sends the rest exactly once. W&B runs offline; its `log`
is wrapped to block, a network that stopped answering as seen from the SDK's boundary."""

import os
import statistics
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

import tally

wandb = pytest.importorskip("wandb")

from test_remote_sinks import (  # noqa: E402
    assert_rows_equal_the_event_file,
    event_rows,
    gate,  # noqa: F401 - fixture
    offline,  # noqa: F401 - autouse fixture
    sync,
    wait_for_exit_records,
    wandb_rows,
)
from test_wandb import history_rows, wandb_file, wandb_records  # noqa: E402

N = 10_000


def timed_steps(writer, n):
    """Log `n` steps of two scalars on a worker thread; the per-step times, or a failure when
    the loop is still stuck after two minutes (an inline W&B call would block it forever)."""
    per_step = []

    def loop():
        for i in range(1, n + 1):
            t0 = time.perf_counter()
            writer.add_scalar("Loss/critic", 1.0 / i, i)
            writer.add_scalar("Train/mean_reward", i / 7, i)
            per_step.append(time.perf_counter() - t0)

    t = threading.Thread(target=loop, daemon=True)
    t.start()
    t.join(120)
    assert not t.is_alive(), f"add_scalar stalled on a hung W&B after {len(per_step)} steps"
    return per_step


def test_a_hung_wandb_never_stalls_add_scalar_and_gets_every_row_once_when_released(tmp_path, gate):
    base = tally.SummaryWriter(tmp_path / "baseline")
    base_times = timed_steps(base, N)
    base.close()
    w = tally.SummaryWriter(tmp_path / "hung", wandb={"project": "tally-test"}, remote_finish_timeout=300)
    times = timed_steps(w, N)
    # A loose bound on a ratio of medians: the loop does not wait on W&B at all.
    ratio = statistics.median(times) / statistics.median(base_times)
    print(f"add_scalar per-step median with a hung W&B: {ratio:.2f}x the writer without W&B")
    assert ratio < 2.0, f"per-step median {ratio:.2f}x the writer without W&B"
    w.flush()
    assert len(event_rows(w.log_dir)) == N  # the event file is complete while W&B hangs
    gate.set()
    w.close()
    wait_for_exit_records(w.log_dir)
    rows = wandb_rows(w.log_dir)
    assert len(rows) == N
    assert_rows_equal_the_event_file(w.log_dir, rows)


def test_close_keeps_its_deadline_with_a_hung_wandb_and_tally_sync_completes_the_run(tmp_path, gate, capfd):
    w = tally.SummaryWriter(tmp_path / "run", wandb={"project": "tally-test"}, remote_finish_timeout=1.0)
    for i in range(1, 301):
        w.add_scalar("Loss/critic", 1.0 / i, 64 * i)
    t0 = time.monotonic()
    w.close()
    # Sending and wandb.finish() each wait at most the timeout; the bound is loose for a busy box.
    assert time.monotonic() - t0 < 15.0
    err = capfd.readouterr().err
    assert f"tally sync {w.log_dir} --to wandb" in err
    gate.set()  # the abandoned call returns into a finished run; its thread stops there
    time.sleep(0.5)
    proc = sync(w.log_dir, "--to", "wandb")
    assert proc.returncode == 0, proc.stderr
    assert "sent 300 rows to wandb (through step 19200)" in proc.stdout
    wait_for_exit_records(w.log_dir)
    rows = wandb_rows(w.log_dir)
    assert len(rows) == 300
    assert_rows_equal_the_event_file(w.log_dir, rows)
    # Both offline files belong to one W&B run: sync continued the writer's run.
    ids = {r.run.run_id for f in Path(w.log_dir, "wandb").rglob("run-*.wandb")
           for r in wandb_records(f) if r.WhichOneof("record_type") == "run"}
    assert ids == {(Path(w.log_dir) / "wandb_run_id").read_text().strip()}


def test_only_scalars_reach_wandb_and_other_summaries_stay_in_the_event_file(tmp_path):
    np = pytest.importorskip("numpy")
    with tally.SummaryWriter(tmp_path / "run", wandb={"project": "tally-test"}) as w:
        for step in (10, 20, 30):
            w.add_scalar("Loss/critic", 1.0 / step, step)
            w.add_histogram("Policy/actions", np.arange(5.0) * step, step)
            w.add_text("notes", f"step {step}", step)
    wait_for_exit_records(w.log_dir)
    rows = wandb_rows(w.log_dir)
    assert [r["tally/step"] for r in rows] == [10, 20, 30]
    assert {k for r in rows for k in r if not k.startswith(("_", "tally/"))} == {"Loss/critic"}
    assert_rows_equal_the_event_file(w.log_dir, rows)


def test_a_tag_written_twice_at_one_step_reaches_wandb_as_two_rows_at_that_step(tmp_path):
    # Two episodes ending at one step (CleanRL's `charts/episodic_return`): W&B keeps one
    # value per key per row, so each value gets a row of its own, both at tally/step 100.
    with tally.SummaryWriter(tmp_path / "run", wandb={"project": "tally-test"}) as w:
        w.add_scalar("charts/episodic_return", 10.0, 100)
        w.add_scalar("charts/episodic_length", 7.0, 100)
        w.add_scalar("charts/episodic_return", 12.0, 100)
        w.add_scalar("charts/episodic_return", 15.0, 200)
    wait_for_exit_records(w.log_dir)
    rows = [{k: v for k, v in r.items() if not k.startswith("_")} for r in wandb_rows(w.log_dir)]
    got = [(r["tally/step"], r.get("charts/episodic_return"), r.get("charts/episodic_length")) for r in rows]
    assert got == [(100, 10.0, 7.0), (100, 12.0, None), (200, 15.0, None)]


def test_double_precision_scalars_reach_wandb_and_tensorboard_as_float64(tmp_path):
    # torch's `add_scalar(new_style=True, double_precision=True)`: the event file holds a
    # DT_DOUBLE tensor, so the replica sends the float64 the script logged, not the float32
    # a simple_value holds (docs/contract/remote-sinks.md "Values are float32").
    from tensorboard.backend.event_processing import event_accumulator
    from tensorboard.util import tensor_util

    lr = 3e-4 + 1e-12  # float32 holds 0.0003000000142492354
    with tally.SummaryWriter(tmp_path / "run", wandb={"project": "tally-test"}) as w:
        w.add_scalar("lr", lr, 1, new_style=True, double_precision=True)
        w.add_scalar("lr32", lr, 1, new_style=True)
        w.add_scalar("lr_simple", lr, 1)
    wait_for_exit_records(w.log_dir)
    (row,) = [r for r in wandb_rows(w.log_dir)]
    assert row["lr"] == lr
    assert row["lr32"] == row["lr_simple"] == float(np_float32(lr)) != lr
    acc = event_accumulator.EventAccumulator(w.log_dir, size_guidance={event_accumulator.TENSORS: 0})
    acc.Reload()
    (lr_event,) = acc.Tensors("lr")
    assert lr_event.tensor_proto.dtype == 2  # DT_DOUBLE, as torch writes it
    assert float(tensor_util.make_ndarray(lr_event.tensor_proto)) == lr
    assert acc.SummaryMetadata("lr").plugin_data.plugin_name == "scalars"
    table = tally.read(w.log_dir, tags="lr").to_pydict()
    assert table["value"] == [lr]


def np_float32(x):
    np = pytest.importorskip("numpy")
    return np.float32(x)


def test_a_second_writer_on_the_log_dir_continues_the_wandb_run_without_resending(tmp_path):
    with tally.SummaryWriter(tmp_path / "run", wandb={"project": "tally-test"}) as w:
        for step in (1, 2, 3):
            w.add_scalar("Loss/critic", float(step), step)
    time.sleep(0.05)  # the next event file starts at a later wall time
    with tally.SummaryWriter(tmp_path / "run", wandb={"project": "tally-test"}) as w:
        for step in (4, 5):
            w.add_scalar("Loss/critic", float(step), step)
    wait_for_exit_records(w.log_dir)
    rows = wandb_rows(w.log_dir)
    assert [r["tally/step"] for r in rows] == [1, 2, 3, 4, 5]
    assert_rows_equal_the_event_file(w.log_dir, rows)


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
def test_remote_finish_timeout_must_be_a_finite_non_negative_number(tmp_path, bad):
    with pytest.raises(tally.ConfigError, match="remote_finish_timeout"):
        tally.SummaryWriter(tmp_path / "run", wandb={"project": "tally-test"}, remote_finish_timeout=bad)
    assert not (tmp_path / "run").exists()  # refused before any file is made


def test_a_writer_never_closed_is_closed_at_exit_and_wandb_gets_every_row(tmp_path):
    # torch's writer is often left open at the end of a script: the last step is still written
    # and W&B still gets every row of the file before the interpreter exits.
    code = textwrap.dedent(
        """
        import tally
        w = tally.SummaryWriter('run', wandb={'project': 'tally-test'})
        for i in range(1, 50):
            w.add_scalar('Loss/critic', 1.0 / i, i)
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    run_dir = tmp_path / "run"
    wait_for_exit_records(run_dir)
    rows = wandb_rows(run_dir)
    assert [r["tally/step"] for r in rows] == list(range(1, 50))
    assert_rows_equal_the_event_file(run_dir, rows)


def test_a_launchers_wandb_run_is_reused_gets_the_rows_and_is_left_open(tmp_path):
    run = wandb.init(project="tally-test", dir=str(tmp_path))
    with tally.SummaryWriter(tmp_path / "run", wandb=True) as w:
        for step in (5, 6, 7):
            w.add_scalar("Loss/critic", 1.0 / step, step)
    assert wandb.run is run  # the launcher owns its run: the writer never finishes it
    assert (tmp_path / "run" / "wandb_run_id").read_text().strip() == run.id
    run.finish()
    # finish() can return before W&B's service has flushed the file: wait for its exit record.
    rows = history_rows(wandb_file(Path(tmp_path, "wandb")))
    assert [r["tally/step"] for r in rows] == [5, 6, 7]
    assert_rows_equal_the_event_file(w.log_dir, rows)
