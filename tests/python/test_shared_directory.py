"""One live writer per directory (docs/contract/run-artifacts.md "Resume", "One writer at a
time"): a SummaryWriter or EventWriter takes the same lock a Logger takes on its run
directory, so a second writer on a live run, in this process or another, is refused naming the
directory and the holder instead of writing a second event file beside the first."""

import os
import subprocess
import sys
import textwrap

import pytest

import tally


def test_a_writer_on_a_live_loggers_run_is_refused_naming_the_holder(tmp_path):
    run = tmp_path / "run"
    with tally.Logger(algo="ppo", task="t", profile="onpolicy", log_dir=run, panel="off") as log:
        log.step(0, metrics={"Loss/value": 1.0})
        with pytest.raises(tally.ConfigError) as e:
            tally.SummaryWriter(run)
        assert str(run) in str(e.value) and "this process" in str(e.value), e.value
        with pytest.raises(tally.ConfigError, match="in use"):
            tally.EventWriter(run)
    assert len(list(run.glob("events.out.tfevents.*"))) == 1
    with tally.SummaryWriter(run) as w:  # the run's logger closed: the directory is free
        w.add_scalar("eval/return", 1.0, 1)


def test_two_writers_on_one_directory_the_second_refused_until_the_first_closes(tmp_path):
    first = tally.SummaryWriter(tmp_path)
    first.add_scalar("a", 1.0, 0)
    with pytest.raises(tally.ConfigError, match="in use"):
        tally.SummaryWriter(tmp_path)
    with pytest.raises(tally.ConfigError, match="in use"):
        tally.Logger(algo="ppo", task="t", profile="onpolicy", log_dir=tmp_path / ".." / tmp_path.name, panel="off")
    first.close()
    second = tally.SummaryWriter(tmp_path)  # free once closed
    second.add_scalar("a", 2.0, 1)
    with pytest.raises(tally.ConfigError, match="in use"):
        first.add_scalar("a", 3.0, 2)  # reopening the first while the second is live
    second.close()
    first.add_scalar("a", 3.0, 2)  # and free again
    first.close()


def test_a_writer_in_another_process_is_named_by_its_pid(tmp_path):
    code = textwrap.dedent(
        """
        import sys, tally
        w = tally.EventWriter(sys.argv[1])
        print("ready", flush=True)
        sys.stdin.readline()
        w.close()
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        with pytest.raises(tally.ConfigError) as e:
            tally.SummaryWriter(tmp_path)
        assert f"process {proc.pid}" in str(e.value), e.value
    finally:
        proc.communicate("\n", timeout=60)
    tally.EventWriter(tmp_path).close()
    assert os.path.isdir(tmp_path)
