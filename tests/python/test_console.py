"""The user's output under the panel (docs/contract/panel.md, "The user's output under the
panel"): under a real pseudo-terminal, print(), logging and warnings written while the live
panel runs land whole, in order, above it and stay in the scrollback; the panel's frame is
intact after; the streams come back at close. `panel="off"` prints exactly the user's lines;
`panel="plain"` adds the periodic plain lines.

The pty is emulated with pyte, which answers the cursor-position query ratatui's inline
viewport asks on start.
"""

import fcntl
import io
import logging
import os
import re
import select
import struct
import subprocess
import sys
import termios
import textwrap
import threading
import time

import pyte
import pytest

import tally._console as console_mod

ROWS, COLS = 70, 110
ARGS = "algo='sac', task='go2', sim='mujoco', max_iterations=30, num_envs=4"


class _Screen(pyte.HistoryScreen):
    """A terminal whose replies (the cursor position) go back to the child."""

    def __init__(self, reply):
        super().__init__(COLS, ROWS, history=2000)
        self._reply = reply

    def write_process_input(self, data):
        self._reply(data.encode())


def run_on_pty(script, tmp_path, timeout=60.0):
    """Run `script` with stdin/stdout/stderr on a pty; (screen, raw bytes, exit code)."""
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(script))
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
    env = dict(os.environ, TERM="xterm-256color", LANG="C.UTF-8", PYTHONUNBUFFERED="")
    env.pop("LC_ALL", None)
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen(
        [sys.executable, str(path)], stdin=slave, stdout=slave, stderr=slave,
        cwd=tmp_path, env=env, start_new_session=True,
    )
    os.close(slave)
    screen = _Screen(lambda b: os.write(master, b))
    stream = pyte.ByteStream(screen)
    raw = bytearray()
    deadline = time.monotonic() + timeout
    while True:
        assert time.monotonic() < deadline, f"the script did not finish:\n{raw.decode(errors='replace')}"
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed its side
                data = b""
            if not data:
                break
            raw += data
            stream.feed(data)
        elif proc.poll() is not None:
            # Exited and nothing left to read.
            ready, _, _ = select.select([master], [], [], 0.2)
            if not ready:
                break
    os.close(master)
    return screen, bytes(raw), proc.wait(timeout=10)


def history(screen):
    """Every row the terminal showed, oldest first: scrolled-off rows, then the screen."""
    rows = ["".join(line[x].data for x in range(COLS)) for line in screen.history.top]
    rows += screen.display
    return [r.rstrip() for r in rows]


def position(rows, line):
    found = [i for i, r in enumerate(rows) if r == line]
    assert len(found) == 1, f"{line!r} should be one whole row, found at {found}:\n" + "\n".join(rows)
    return found[0]


LIVE_SCRIPT = f"""
    import logging, sys, threading, warnings
    import tally

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    handler = logging.getLogger().handlers[0]
    real_stdout, real_stderr = sys.stdout, sys.stderr
    log = tally.Logger({ARGS}, log_root="logs", panel="on")
    assert sys.stdout is not real_stdout and handler.stream is not real_stderr

    def worker():
        for i in range(20):
            print(f"worker line {{i:02d}}")

    t = threading.Thread(target=worker)
    t.start()
    for it in range(1, 21):
        log.step(it, env_steps=it * 4, metrics={{"Loss/critic": 0.5}}, iteration_time=0.01)
        print(f"print line {{it:02d}}")
        logging.info("logging line %02d", it)
    t.join()
    warnings.warn("a user warning")
    print("partial ", end="")
    print("then whole")
    print("flushed without newline", end="", flush=True)
    log.close()
    print("after close")
    print("restored", sys.stdout is real_stdout, sys.stderr is real_stderr,
          handler.stream is real_stderr)
"""


def test_prints_logging_and_warnings_land_whole_and_in_order_above_the_live_panel(tmp_path):
    screen, raw, code = run_on_pty(LIVE_SCRIPT, tmp_path)
    rows = history(screen)
    assert code == 0, "\n".join(rows)
    last = -1
    for it in range(1, 21):
        p = position(rows, f"print line {it:02d}")
        g = position(rows, f"INFO logging line {it:02d}")
        assert last < p < g, f"iteration {it} out of order:\n" + "\n".join(rows)
        last = g
    last = -1
    for i in range(20):
        w = position(rows, f"worker line {i:02d}")
        assert last < w
        last = w
    warning = [i for i, r in enumerate(rows) if r.endswith("UserWarning: a user warning")]
    assert len(warning) == 1, "\n".join(rows)
    whole = position(rows, "partial then whole")
    flushed = position(rows, "flushed without newline")
    # The panel's last frame is whole below every line: borders on each of its rows.
    top = max(i for i, r in enumerate(rows) if r.startswith(("╭", "┌")))
    bottom = next(i for i in range(top, len(rows)) if rows[i].startswith(("╰", "└")))
    assert max(whole, flushed, warning[0]) < top < bottom, "\n".join(rows)
    torn = [r for r in rows[top + 1:bottom] if not (r.startswith("│") and r.endswith("│"))]
    assert not torn, "\n".join(rows[top:bottom + 1])
    after = position(rows, "after close")
    assert bottom < after
    assert position(rows, "restored True True True") == after + 1


def test_a_burst_of_prints_reaches_the_terminal_complete_and_in_order(tmp_path):
    # Far more lines than a frame draws: the panel inserts them in batches, none dropped.
    script = f"""
        import tally
        log = tally.Logger({ARGS}, log_root="logs", panel="on")
        for i in range(1500):
            print("burst", i)
            if i % 150 == 0:
                log.step(i // 150 + 1, env_steps=i + 1, metrics={{"Loss/critic": 0.5}}, iteration_time=0.01)
        log.close()
    """
    screen, raw, code = run_on_pty(script, tmp_path)
    assert code == 0, raw[-2000:]
    assert [int(n) for n in re.findall(rb"burst (\d+)", raw)] == list(range(1500))


def test_streams_come_back_after_an_exception_and_at_exit(tmp_path):
    script = f"""
        import atexit, sys, tally
        real = sys.stdout
        try:
            with tally.Logger({ARGS}, log_root="logs", panel="on") as log:
                print("inside with")
                raise RuntimeError("boom")
        except RuntimeError:
            pass
        print("after with", sys.stdout is real)
        # atexit runs last-registered first: this runs after the Logger's close hook.
        atexit.register(lambda: print("at exit", sys.stdout is real))
        forgotten = tally.Logger({ARGS}, log_root="logs2", panel="on")
        print("inside forgotten", sys.stdout is real)
    """
    screen, raw, code = run_on_pty(script, tmp_path)
    rows = history(screen)
    assert code == 0, "\n".join(rows)
    inside = position(rows, "inside with")
    after = position(rows, "after with True")
    forgotten = position(rows, "inside forgotten False")
    assert inside < after < forgotten < position(rows, "at exit True")


def test_panel_off_prints_exactly_the_users_lines(tmp_path):
    script = f"""
        import logging, tally
        logging.basicConfig(format="%(message)s")
        with tally.Logger({ARGS}, log_root="logs", panel="off") as log:
            log.status("Warming up...")
            for it in range(1, 6):
                log.step(it, env_steps=it, metrics={{"Loss/critic": 0.5}}, iteration_time=0.01)
                print(f"line {{it}}")
            logging.warning("a warning")
    """
    _, raw, code = run_on_pty(script, tmp_path)
    assert code == 0, raw
    # On a terminal, yet nothing of tally's: the pty turns each \n into \r\n.
    assert raw == b"".join(f"line {i}\r\n".encode() for i in range(1, 6)) + b"a warning\r\n"


def test_panel_plain_prints_the_users_lines_and_the_periodic_plain_lines(tmp_path):
    script = f"""
        import tally
        with tally.Logger({ARGS}, log_root="logs", panel="plain") as log:
            for it in range(1, 6):
                log.step(it, env_steps=it, metrics={{"Loss/critic": 0.5}}, iteration_time=0.01)
                print(f"line {{it}}", flush=True)
    """
    (tmp_path / "s.py").write_text(textwrap.dedent(script))
    out = subprocess.run([sys.executable, "s.py"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=60, check=True).stdout
    lines = out.splitlines()
    assert [l for l in lines if l.startswith("line ")] == [f"line {i}" for i in range(1, 6)]
    # The run ends with one plain summary line (docs/contract/panel.md, "Plain output").
    assert lines[-1].startswith("iter 5/30 |"), out
    assert "\x1b" not in out


class _FakeConsole:
    def __init__(self):
        self.live = True
        self.lines = []
        self.lock = threading.Lock()

    def above(self, line):
        with self.lock:
            if self.live:
                self.lines.append(line)
            return self.live


@pytest.fixture
def terminal_streams(monkeypatch):
    """Call it in the test (pytest swaps its capture in after fixtures): sys.stdout and
    sys.stderr then write to a pty, as on a terminal. Returns (out, err, written)."""
    master, slave = os.openpty()
    out = io.TextIOWrapper(io.FileIO(slave, "w", closefd=False), line_buffering=True)
    err = io.TextIOWrapper(io.FileIO(slave, "w", closefd=False), line_buffering=True)

    def written():
        data = b""
        while select.select([master], [], [], 0.05)[0]:
            data += os.read(master, 65536)
        return data.decode().replace("\r\n", "\n")

    def install():
        monkeypatch.setattr(sys, "stdout", out)
        monkeypatch.setattr(sys, "stderr", err)
        return out, err, written

    yield install
    os.close(master)
    os.close(slave)


def test_a_stream_the_user_replaced_meanwhile_is_left_alone(terminal_streams):
    out, err, _ = terminal_streams()
    redirect = console_mod.Redirect(_FakeConsole())
    assert isinstance(sys.stdout, console_mod.LineProxy) and isinstance(sys.stderr, console_mod.LineProxy)
    theirs = io.StringIO()
    sys.stdout = theirs
    redirect.restore()
    assert sys.stdout is theirs
    assert sys.stderr is err


def test_handlers_holding_the_real_stream_follow_it_and_come_back(terminal_streams):
    out, err, _ = terminal_streams()
    handler = logging.StreamHandler(err)
    to_file = logging.StreamHandler(io.StringIO())
    named = logging.getLogger("tally.test_console")
    named.addHandler(handler)
    named.addHandler(to_file)
    try:
        fake = _FakeConsole()
        redirect = console_mod.Redirect(fake)
        assert handler.stream is sys.stderr and to_file.stream is not sys.stderr
        named.warning("from a named logger")
        redirect.restore()
        assert handler.stream is err
        assert fake.lines == ["from a named logger"]
    finally:
        named.removeHandler(handler)
        named.removeHandler(to_file)


def test_lines_written_after_the_panel_stopped_reach_the_original_stream(terminal_streams):
    out, _, written = terminal_streams()
    fake = _FakeConsole()
    redirect = console_mod.Redirect(fake)
    print("while live")
    fake.live = False
    print("after the panel")
    redirect.restore()
    assert fake.lines == ["while live"]
    assert written() == "after the panel\n"


def test_flush_hands_over_a_partial_line_but_a_bar_redrawn_in_place_waits_for_its_end(terminal_streams):
    terminal_streams()
    fake = _FakeConsole()
    redirect = console_mod.Redirect(fake)
    print("no newline", end="", flush=True)
    for pct in (10, 50, 100):
        sys.stderr.write(f"\r{pct:3d}%")
        sys.stderr.flush()
    assert fake.lines == ["no newline"]
    sys.stderr.write("\n")
    print("unfinished", end="")
    redirect.restore()
    # The panel draws what a terminal would show of the bar: its last state (the Rust side).
    assert fake.lines == ["no newline", "\r 10%\r 50%\r100%", "unfinished"]


def test_concurrent_prints_arrive_as_whole_lines(terminal_streams):
    terminal_streams()
    fake = _FakeConsole()
    redirect = console_mod.Redirect(fake)

    def spam(name):
        for i in range(200):
            print(name, i, "x" * 30)

    threads = [threading.Thread(target=spam, args=(n,)) for n in ("a", "b", "c")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    redirect.restore()
    expected = {f"{n} {i} {'x' * 30}" for n in "abc" for i in range(200)}
    assert len(fake.lines) == 600 and set(fake.lines) == expected


def test_streams_that_are_not_a_terminal_are_not_redirected(monkeypatch):
    piped = io.StringIO()
    monkeypatch.setattr(sys, "stdout", piped)
    redirect = console_mod.Redirect(_FakeConsole())
    assert sys.stdout is piped
    redirect.restore()
