"""Closing writers a framework never closes, when the interpreter exits."""

from __future__ import annotations

import atexit
import weakref

from tally.summary_writer import SummaryWriter


def close_at_exit(writer: SummaryWriter) -> None:
    """Close ``writer`` at interpreter exit (if still alive), so its last batched step is written."""
    atexit.register(_close, weakref.ref(writer))


def _close(ref: "weakref.ReferenceType[SummaryWriter]") -> None:
    writer = ref()
    if writer is not None:
        writer.close()
