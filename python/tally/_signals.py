"""SIGTERM, SIGHUP and SIGINT close a run's Loggers as ``interrupted``
(docs/contract/threads-and-signals.md "Signals").

A cluster scheduler ends a job with SIGTERM, a closed terminal sends SIGHUP, Ctrl-C sends
SIGINT. Python's defaults end the process (or raise KeyboardInterrupt) without closing the
logger, leaving ``run_summary.json`` at ``running``. ``install()`` (called by each Logger from
the main thread) puts one handler per signal in front of the handler found there, once per
process:

- the handler found is the user's own: it runs first and decides. If it raises (``sys.exit``,
  KeyboardInterrupt), every open Logger is closed as ``interrupted`` and the exception goes on;
  if it returns, the run goes on (the user stops it their way).
- the handler found is Python's default: every open Logger is closed as ``interrupted``, then
  Python's behaviour follows: SIGINT raises KeyboardInterrupt in the main thread; SIGTERM and
  SIGHUP end the process with the signal's own status.
- the signal is ignored (``nohup``) or handled outside Python: nothing is installed.

A handler the user installs later replaces this one and is never replaced in turn.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from types import FrameType
from typing import Any, List, Optional, Set

from tally import _tally

# The signals that end a run; SIGHUP does not exist on Windows.
_SIGNALS: List[signal.Signals] = [signal.SIGINT, signal.SIGTERM]
if hasattr(signal, "SIGHUP"):
    _SIGNALS.append(signal.SIGHUP)

# Signals this process already considered: install once, never over a later handler (only
# the main thread installs, so no lock).
_considered: Set[int] = set()


def _close_all() -> None:
    _tally._close_open_loggers("interrupted")


class _CloseRun:
    """The installed handler: close the open Loggers, chained to ``previous``."""

    def __init__(self, signum: int, previous: Any) -> None:
        self.signum = signum
        self.previous = previous

    def __call__(self, signum: int, frame: Optional[FrameType]) -> Any:
        previous = self.previous
        if previous is signal.default_int_handler or previous == signal.SIG_DFL:
            _close_all()
            if previous is signal.default_int_handler:
                return previous(signum, frame)  # KeyboardInterrupt, as Python would
            # The process ends with the signal's status, as without a handler.
            for stream in (sys.stdout, sys.stderr):
                try:
                    if stream is not None:
                        stream.flush()
                except (OSError, ValueError):
                    pass
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return None
        try:
            return previous(signum, frame)
        except BaseException:
            _close_all()
            raise

    def __repr__(self) -> str:
        return f"<tally signal handler for {signal.Signals(self.signum).name}, then {self.previous!r}>"


def install() -> None:
    """Put the closing handler in front of each signal's handler (main thread only, once)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in _SIGNALS:
        if sig in _considered:
            continue
        _considered.add(sig)
        current = signal.getsignal(sig)
        if current is None or current == signal.SIG_IGN:
            continue  # handled outside Python, or deliberately ignored (nohup)
        try:
            signal.signal(sig, _CloseRun(sig, current))
        except (OSError, ValueError, RuntimeError):
            continue  # an embedding interpreter that keeps signals to itself: runs go on unhandled
