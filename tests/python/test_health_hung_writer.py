"""A hung run of a writer that opens its event file for each write (torch's `SummaryWriter`, which
is tensorboard's `EventFileWriter`: stable-baselines3's and CleanRL's default) is found by
`tally health` while it hangs, from the writer process its file name carries, and an ended one
is not (docs/contract/health.md "tally health")."""

import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

HEAD = "import sys, time\n"

WRITERS = {
    # tensorboard's own writer, the one torch's SummaryWriter wraps.
    "tensorboard": """
        from tensorboard.compat.proto import event_pb2, summary_pb2
        from tensorboard.summary.writer.event_file_writer import EventFileWriter
        w = EventFileWriter(sys.argv[1])
        def add(i):
            value = summary_pb2.Summary.Value(tag="losses/value_loss", simple_value=1.0)
            w.add_event(event_pb2.Event(wall_time=time.time(), step=i, summary=summary_pb2.Summary(value=[value])))
    """,
    "torch": """
        from torch.utils.tensorboard import SummaryWriter
        w = SummaryWriter(sys.argv[1])
        def add(i):
            w.add_scalar("losses/value_loss", 1.0, i)
    """,
}

LOOP = """
    for i in range(1, 21):
        add(i)
        time.sleep(0.02)
    w.flush()
    print("hanging", flush=True)
    sys.stdin.readline()  # the loop hangs until the test lets it end
    w.close()
"""

# A stall after 1 s of quiet instead of the default minute, so the test is short
# (docs/contract/health.md "The rules file").
RULES = {"rules": [{"kind": "stall", "min_gap_s": 1.0, "min_history": 3}]}


def health(tally_bin: Path, rules: Path, path: Path) -> tuple[int, dict]:
    out = subprocess.run(
        [str(tally_bin), "health", str(path), "--json", "--rules", str(rules)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode in (0, 1), out.stderr
    return out.returncode, json.loads(out.stdout)


def held_open(pid: int, path: Path) -> bool:
    fds = Path(f"/proc/{pid}/fd")
    return any(os.path.realpath(fd) == str(path) for fd in fds.iterdir())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the writer's process is looked up in /proc")
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_hung_writer_named_in_its_file_is_found_while_it_hangs(tally_bin: Path, tmp_path: Path, writer: str):
    if writer == "torch":
        pytest.importorskip("torch.utils.tensorboard")
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps(RULES))
    run = tmp_path / "run"
    script = HEAD + textwrap.dedent(WRITERS[writer]) + textwrap.dedent(LOOP)
    child = subprocess.Popen(
        [sys.executable, "-c", script, str(run)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdin is not None
        assert child.stdout.readline() == "hanging\n"
        (event_file,) = run.iterdir()
        host = socket.gethostname()
        assert f".{host}.{child.pid}." in event_file.name, event_file.name
        # The writer opens the file for each write: no descriptor shows it is still writing.
        assert not held_open(child.pid, event_file.resolve())
        time.sleep(1.5)

        code, report = health(tally_bin, rules, run)
        (r,) = report["runs"]
        assert code == 1 and r["live"], report
        assert [(f["rule"], f["first_step"]) for f in r["findings"]] == [("stall", 20)], report

        # The same file under names its writer does not carry is not taken for a live one: another
        # host, a process that has ended, and a live process that started after the file was made
        # (its process id reused).
        ended = subprocess.Popen(["true"])
        assert ended.wait() == 0
        secs = event_file.name.split(".")[3]
        names = {
            "other_host": event_file.name.replace(f".{host}.", f".{host}-elsewhere."),
            "ended": event_file.name.replace(f".{host}.{child.pid}.", f".{host}.{ended.pid}."),
            "reused": event_file.name.replace(f".{secs}.", ".1000000000."),
        }
        others = tmp_path / "others"
        for name, file_name in names.items():
            assert file_name != event_file.name
            (others / name).mkdir(parents=True)
            shutil.copy(event_file, others / name / file_name)
        code, report = health(tally_bin, rules, others)
        assert code == 0, report
        assert {r["run"]: (r["live"], r["findings"]) for r in report["runs"]} == {n: (False, []) for n in names}

        # The loop goes on and the script ends: finished, not hung.
        child.stdin.write("\n")
        child.stdin.flush()
        assert child.wait(timeout=30) == 0
    finally:
        child.kill()
        child.wait()
    code, report = health(tally_bin, rules, run)
    (r,) = report["runs"]
    assert code == 0 and not r["live"] and r["findings"] == [], report
