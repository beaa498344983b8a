"""An exception inside `with tally.Logger(...)` while the live panel runs on a (pyte-emulated)
pseudo-terminal: the terminal is restored (cursor shown, cooked mode: docs/contract/panel.md
"Terminal restoration"), the run ends `failed` (docs/contract/run-artifacts.md "Status") and
its summary counts exactly the iterations the event file holds."""

import fcntl
import json
import os
import select
import struct
import subprocess
import sys
import termios
import textwrap
import time

import pyte
from tensorboard.backend.event_processing import event_accumulator

from test_console import COLS, ROWS, _Screen, history

SCRIPT = """
    import termios, time
    import tally

    with tally.Logger(algo="sac", task="go2", sim="mujoco", max_iterations=1000, num_envs=4,
                      log_root="logs", panel="on") as log:
        for i in range(1, 1001):
            log.step(i, env_steps=i * 4, metrics={"Loss/critic": 0.5}, iteration_time=0.01)
            if i == 20:
                # The logger's panel reads no keys, so it leaves the terminal in cooked mode
                # (Ctrl-C stays SIGINT); only `tally watch` enters raw mode.
                lflag = termios.tcgetattr(0)[3]
                print("canonical while live:", bool(lflag & termios.ICANON), flush=True)
            if i == 30:
                raise ValueError("injected failure at iteration 30")
            time.sleep(0.002)
"""


def run_on_pty_keeping_the_terminal(script, tmp_path, timeout=60.0):
    """Run `script` on a pty; (screen, raw bytes, exit code, local modes after exit). The
    test keeps its own handle on the terminal so its modes can be read once the child is gone."""
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(script))
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
    env = dict(os.environ, TERM="xterm-256color", LANG="C.UTF-8", PYTHONUNBUFFERED="")
    env.pop("LC_ALL", None)
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen([sys.executable, str(path)], stdin=slave, stdout=slave, stderr=slave,
                            cwd=tmp_path, env=env, start_new_session=True)
    screen = _Screen(lambda b: os.write(master, b))
    stream = pyte.ByteStream(screen)
    raw = bytearray()
    deadline = time.monotonic() + timeout
    while True:
        assert time.monotonic() < deadline, f"the script did not finish:\n{raw.decode(errors='replace')}"
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            data = os.read(master, 65536)
            raw += data
            stream.feed(data)
        elif proc.poll() is not None:
            break
    code = proc.wait(timeout=10)
    lflag = termios.tcgetattr(slave)[3]
    os.close(slave)
    os.close(master)
    return screen, bytes(raw), code, lflag


def file_steps(run_dir):
    acc = event_accumulator.EventAccumulator(str(run_dir), size_guidance={event_accumulator.SCALARS: 0})
    acc.Reload()
    return [e.step for e in acc.Scalars("Loss/critic")]


def test_an_exception_under_the_live_panel_restores_the_terminal_and_ends_the_run_failed(tmp_path):
    screen, raw, code, lflag = run_on_pty_keeping_the_terminal(SCRIPT, tmp_path)
    text = raw.decode(errors="replace")
    assert code == 1, text[-2000:]
    rows = history(screen)
    assert "canonical while live: True" in rows, "\n".join(rows)
    assert "ValueError: injected failure at iteration 30" in text
    # Cursor hidden while live, shown again after; still cooked (canonical input and echo).
    assert b"\x1b[?25l" in raw and raw.rfind(b"\x1b[?25h") > raw.rfind(b"\x1b[?25l")
    assert not screen.cursor.hidden
    assert lflag & termios.ICANON and lflag & termios.ECHO and lflag & termios.ISIG
    (summary_file,) = (tmp_path / "logs").rglob("run_summary.json")
    s = json.loads(summary_file.read_text())
    assert s["status"] == "failed"
    # The env-step axis: iteration i is at step 4 i.
    assert file_steps(summary_file.parent) == [4 * i for i in range(1, 31)]
    assert s["completed_iterations"] == s["persisted_iterations"] == 30


SLOW_SINK_SCRIPT = """
    import time
    import tally

    class Slow:
        name = "slow"

        def write(self, step, wall_time, iteration, scalars):
            time.sleep(0.001)

    with tally.Logger(algo="sac", task="go2", sim="mujoco", max_iterations=1500, num_envs=4,
                      log_root="logs", panel="on", sinks=[Slow()]) as log:
        for i in range(1, 1501):
            log.step(i, env_steps=i * 4, metrics={"Loss/critic": 0.5}, iteration_time=0.0001)
            time.sleep(0.0001)
"""


def test_a_sink_ten_times_slower_than_the_steps_shows_its_back_pressure_on_the_panel(tmp_path):
    # 1 500 steps every 0.1 ms against a sink taking 1 ms each: the 1 024-step queue fills and
    # step() waits; nothing is dropped, and the panel says why the steps slowed down.
    screen, raw, code, _ = run_on_pty_keeping_the_terminal(SLOW_SINK_SCRIPT, tmp_path, timeout=120)
    rows = history(screen)
    assert code == 0, "\n".join(rows)
    assert any("writer behind the steps" in r for r in rows), "\n".join(rows)
    (summary_file,) = (tmp_path / "logs").rglob("run_summary.json")
    s = json.loads(summary_file.read_text())
    assert s["status"] == "completed"
    assert s["backpressure_waits"] > 0
    assert file_steps(summary_file.parent) == [4 * i for i in range(1, 1501)]
