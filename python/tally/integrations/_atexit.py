"""Closing what a framework never closes (or closes too late), when the interpreter exits."""

from __future__ import annotations

import atexit
import weakref

from typing import Protocol


class _Closable(Protocol):
    def close(self) -> None: ...


def close_at_exit(obj: _Closable) -> None:
    """Close ``obj`` at interpreter exit (if still alive), so its last batched step is written.
    Registered after ``tally`` is imported, the hook runs before tally's own, which closes the
    loggers still open (``atexit`` runs the last registered first)."""
    atexit.register(_close, weakref.ref(obj))


def _close(ref: "weakref.ReferenceType[_Closable]") -> None:
    obj = ref()
    if obj is not None:
        obj.close()
