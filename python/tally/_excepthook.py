"""An uncaught exception ends the run ``failed``, the exception named in ``status_reason``
(docs/contract/run-artifacts.md "Status").

Python prints an uncaught exception through ``sys.excepthook`` before ``atexit`` runs, where
an open Logger would otherwise close as ``completed`` or ``interrupted``, as if nothing had
gone wrong. ``install()`` (by each Logger and SummaryWriter) puts one hook in front of the one
found, once per process: it closes every open Logger and SummaryWriter as ``failed``, then
calls the hook it found, which prints the traceback; the exit status is Python's. A
KeyboardInterrupt is left to the signal handlers (``interrupted``), and ``threading.excepthook``
is not touched: a worker thread's exception does not end the script. A hook installed later
replaces this one.
"""

from __future__ import annotations

import sys
import threading
import traceback
import weakref
from types import TracebackType
from typing import Any, Callable, Optional, Type

from tally import _tally

# The SummaryWriters to close: each has ``_end_failed(reason)``.
_writers: "weakref.WeakSet[Any]" = weakref.WeakSet()
_lock = threading.Lock()
_installed = False


def reason(exc_type: Type[BaseException], exc: BaseException) -> str:
    """The exception as the last line of its traceback says it: ``RuntimeError: boom``."""
    return "".join(traceback.format_exception_only(exc_type, exc)).strip()


def track(writer: Any) -> None:
    """Close ``writer`` as failed on an uncaught exception (while it is alive)."""
    install()
    _writers.add(writer)


class _FailRun:
    """The installed hook: fail the open runs, then the hook found before."""

    def __init__(self, previous: Callable[..., Any]) -> None:
        self.previous = previous

    def __call__(self, exc_type: Type[BaseException], exc: BaseException, tb: Optional[TracebackType]) -> Any:
        if not issubclass(exc_type, KeyboardInterrupt):
            why = reason(exc_type, exc)
            try:
                _tally._close_open_loggers("failed", why)
                for writer in list(_writers):
                    writer._end_failed(why)
            except BaseException as e:  # noqa: BLE001 - the user's traceback comes first
                print(f"tally: closing the run after an uncaught exception: {e!r}", file=sys.stderr)
        return self.previous(exc_type, exc, tb)


def install() -> None:
    """Put the failing hook in front of ``sys.excepthook`` (once per process)."""
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
        sys.excepthook = _FailRun(sys.excepthook)
