"""A ``SummaryWriter``'s event files: torch's ``FileWriter`` surface over them, the writer of
``write_to_disk=False``, and flushing or closing several at once."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional

from tally._writer_args import _serialized, _step

if TYPE_CHECKING:
    from tally.summary_writer import SummaryWriter


class FileWriter:
    """torch's ``FileWriter`` surface over one event file: ``add_summary``, ``add_event``."""

    def __init__(self, owner: "SummaryWriter") -> None:
        self._owner = owner

    def get_logdir(self) -> str:
        return self._owner.log_dir

    def add_summary(self, summary: Any, global_step: Optional[int] = None, walltime: Optional[float] = None) -> None:
        """Write a ``Summary`` protobuf (or its bytes) in one event at ``global_step``."""
        self._owner._write_summary(_serialized(summary, "summary"), global_step, walltime)

    def add_event(self, event: Any, step: Optional[int] = None, walltime: Optional[float] = None) -> None:
        """Write an ``Event`` protobuf (or its bytes); ``walltime`` (default now) and ``step`` override its own."""
        data = _serialized(event, "event")
        with self._owner._lock:
            w = self._owner._events_writer()
            w.write_event(data, _step(step), time.time() if walltime is None else float(walltime))

    def flush(self) -> None:
        self._owner.flush()

    def close(self) -> None:
        self._owner.close()

    @property
    def event_writer(self) -> "FileWriter":
        """Where torch's writer keeps its event file (``file_writer.event_writer``); this
        writer, since it writes the file itself."""
        return self

    @property
    def _ev_writer(self) -> "FileWriter":
        """tensorboardX's ``file_writer.event_writer._ev_writer``: this writer too."""
        return self

    @property
    def _file_name(self) -> Optional[str]:
        """The event file's path, where scripts read it from torch's and tensorboardX's
        writers (``None`` with ``write_to_disk=False``)."""
        path = getattr(self._owner._main, "path", None)
        return None if path is None else str(path)


class _NoDisk:
    """The event writer of ``write_to_disk=False`` (tensorboardX's switch): takes every record,
    keeps none."""

    closed = False

    def add_scalar(self, *args: Any) -> None: ...
    def write_scalars(self, *args: Any) -> None: ...
    def write_summary(self, *args: Any) -> None: ...
    def write_event(self, *args: Any) -> None: ...
    def write_session_start(self, *args: Any) -> None: ...
    def start_system_metrics(self, *args: Any) -> None: ...
    def flush(self) -> None: ...
    def close(self) -> None: ...


def _each(writers: Iterable[Any], call: Callable[[Any], None]) -> None:
    """``call`` on every writer, then the first error raised: one file's fault never keeps
    the others from their flush or close."""
    first: Optional[BaseException] = None
    for w in writers:
        try:
            call(w)
        except Exception as e:  # noqa: BLE001 - re-raised below
            first = first or e
    if first is not None:
        raise first
