"""tensorboardX's flavour of tally's writer: ``from tally.tensorboardX import SummaryWriter``
(was ``from tensorboardX import SummaryWriter``) keeps what tensorboardX does differently from
torch's writer (docs/contract/integrations.md "tensorboardX"):

- ``add_scalars`` lays its series out as ``logdir/<main_tag>/<tag>/`` (torch: ``<main_tag>_<tag>``),
  so runs keep their names in TensorBoard, and keeps them for ``export_scalars_to_json``;
- ``add_hparams(hparam_dict, metric_dict, name=None, global_step=None)``;
- ``add_image_with_boxes(..., walltime, dataformats, labels)`` (``rescale`` by keyword only);
- ``use_metadata(global_step=, walltime=)``: defaults for the calls inside a ``with`` block;
- ``GlobalSummaryWriter``: steps counted per tag, shared by the processes of a pool.

Everything else is ``tally.SummaryWriter``'s, which already takes tensorboardX's ``logdir=`` and
``write_to_disk=`` keywords.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing as mp
import os
import time
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple, Union

from tally._wandb import DEFAULT_FINISH_TIMEOUT
from tally._writer_args import _number, _scalar_step
from tally.summary_writer import SummaryWriter as _TorchFlavour

__all__ = ["SummaryWriter", "GlobalSummaryWriter"]


class SummaryWriter(_TorchFlavour):
    """``tally.SummaryWriter`` with tensorboardX's signature and ``add_scalars`` layout."""

    def __init__(
        self,
        logdir: Optional[Union[str, "os.PathLike[str]"]] = None,
        comment: str = "",
        purge_step: Optional[int] = None,
        max_queue: int = 10,
        flush_secs: float = 120,
        filename_suffix: str = "",
        write_to_disk: bool = True,
        log_dir: Optional[Union[str, "os.PathLike[str]"]] = None,
        *,
        wandb: Union[None, bool, Mapping[str, Any]] = None,
        remote_finish_timeout: float = DEFAULT_FINISH_TIMEOUT,
        config: Optional[Mapping[str, Any]] = None,
        redact: bool = True,
        on_storage_error: str = "raise",
    ) -> None:
        super().__init__(
            log_dir if log_dir is not None else logdir,
            comment,
            purge_step,
            max_queue,
            flush_secs,
            filename_suffix,
            wandb=wandb,
            remote_finish_timeout=remote_finish_timeout,
            write_to_disk=write_to_disk,
            config=config,
            redact=redact,
            on_storage_error=on_storage_error,
        )
        # What add_scalars logged since the last export, as tensorboardX keeps it.
        self.scalar_dict: Dict[str, List[List[Any]]] = {}
        # use_metadata's step and wall time for calls that give none.
        self._defaults: Optional[Tuple[Optional[int], Optional[float]]] = None

    @contextlib.contextmanager
    def use_metadata(self, *, global_step: Optional[int] = None, walltime: Optional[float] = None) -> Iterator["SummaryWriter"]:
        """tensorboardX's defaults: inside the block, a call that gives no step or wall time
        gets these. Blocks do not nest (tensorboardX refuses that too)."""
        if self._defaults is not None:
            raise RuntimeError("use_metadata: a block is already open on this writer; blocks do not nest")
        self._defaults = (global_step, walltime)
        try:
            yield self
        finally:
            self._defaults = None

    def _with_defaults(self, global_step: Any, walltime: Optional[float]) -> Tuple[Any, Optional[float]]:
        if self._defaults is None:
            return global_step, walltime
        step, wall = self._defaults
        return (step if global_step is None else global_step, wall if walltime is None else walltime)

    def _write_summary(self, summary: bytes, global_step: Any, walltime: Optional[float]) -> None:
        super()._write_summary(summary, *self._with_defaults(global_step, walltime))

    def add_scalar(  # type: ignore[override]  # tensorboardX's order, not torch's
        self,
        tag: str,
        scalar_value: Any,
        global_step: Optional[int] = None,
        walltime: Optional[float] = None,
        display_name: str = "",
        summary_description: str = "",
    ) -> None:
        """One scalar, batched with its step's others (``display_name`` and
        ``summary_description`` are accepted and not written)."""
        if self._closed:
            self._ensure_open()
        global_step, walltime = self._with_defaults(global_step, walltime)
        self._main.add_scalar(tag, scalar_value, global_step, walltime, self.flush_secs)

    @property
    def logdir(self) -> str:
        """tensorboardX's name for ``log_dir``."""
        return self.log_dir

    def _subrun(self, main_tag: str, tag: str) -> str:
        return os.path.join(self._dir, main_tag, tag)

    def add_scalars(
        self,
        main_tag: str,
        tag_scalar_dict: Mapping[str, Any],
        global_step: Optional[int] = None,
        walltime: Optional[float] = None,
    ) -> None:
        """Each ``tag`` to ``logdir/<main_tag>/<tag>/`` under the tag ``main_tag``, and kept
        for ``export_scalars_to_json``."""
        global_step, walltime = self._with_defaults(global_step, walltime)
        super().add_scalars(main_tag, tag_scalar_dict, global_step, walltime)
        step = _scalar_step(global_step)
        wall = time.time() if walltime is None else float(walltime)
        for tag, v in tag_scalar_dict.items():
            key = self._subrun(main_tag, tag)
            self.scalar_dict.setdefault(key, []).append([wall, step, _number(f"{main_tag}/{tag}", v)])

    def export_scalars_to_json(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Write what ``add_scalars`` logged since the last export to ``path`` as JSON,
        ``{series directory: [[wall_time, step, value], ...]}``, and forget it."""
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.scalar_dict, f)
        self.scalar_dict = {}

    def add_hparams(  # type: ignore[override]  # tensorboardX's signature, not torch's
        self,
        hparam_dict: Mapping[str, Any],
        metric_dict: Mapping[str, Any],
        name: Optional[str] = None,
        global_step: Optional[int] = None,
    ) -> None:
        """One HParams session in ``logdir/<name>`` (default: the time)."""
        super().add_hparams(hparam_dict, metric_dict, name=name, global_step=global_step)

    def add_image_with_boxes(  # type: ignore[override]  # tensorboardX's order: no rescale before dataformats
        self,
        tag: str,
        img_tensor: Any,
        box_tensor: Any,
        global_step: Optional[int] = None,
        walltime: Optional[float] = None,
        dataformats: str = "CHW",
        labels: Optional[Any] = None,
        rescale: float = 1,
    ) -> None:
        """One image with its boxes drawn (``rescale`` is a keyword, as tensorboardX takes it)."""
        super().add_image_with_boxes(tag, img_tensor, box_tensor, global_step, walltime, rescale, dataformats, labels)


class GlobalSummaryWriter:
    """tensorboardX's ``GlobalSummaryWriter``: ``add_scalar(tag, value)`` with no step, each tag
    counting its own steps from 0, from any process of a pool forked after it was made.

    Every value is written at once as its own event (never held in a batch), so a worker that
    exits without running ``atexit`` (a pool's do not) loses nothing.
    """

    def __init__(
        self,
        logdir: Optional[Union[str, "os.PathLike[str]"]] = None,
        comment: str = "",
        purge_step: Optional[int] = None,
        max_queue: int = 10,
        flush_secs: float = 120,
        filename_suffix: str = "",
        write_to_disk: bool = True,
        log_dir: Optional[Union[str, "os.PathLike[str]"]] = None,
        coalesce_process: bool = True,
    ) -> None:
        self.smw = SummaryWriter(
            logdir, comment, purge_step, max_queue, flush_secs, filename_suffix, write_to_disk, log_dir
        )
        self.lock = mp.Lock()
        self._manager = mp.Manager()
        self._steps: Dict[str, Any] = {kind: self._manager.dict() for kind in ("scalar", "image", "text")}

    def _next_step(self, kind: str, tag: str) -> int:
        steps = self._steps[kind]
        step = int(steps.get(tag, -1)) + 1
        steps[tag] = step
        return step

    def add_scalar(self, tag: str, scalar_value: Any, walltime: Optional[float] = None) -> None:
        """``scalar_value`` at ``tag``'s next step, written at once."""
        value = _number(tag, scalar_value)
        wall = time.time() if walltime is None else float(walltime)
        with self.lock:
            step = self._next_step("scalar", tag)
            self.smw._write_scalars(step, wall, {tag: value})

    def add_image(self, tag: str, img_tensor: Any, walltime: Optional[float] = None, dataformats: str = "CHW") -> None:
        """An image at ``tag``'s next step."""
        with self.lock:
            self.smw.add_image(tag, img_tensor, self._next_step("image", tag), walltime=walltime, dataformats=dataformats)
            self.smw.flush()

    def add_text(self, tag: str, text_string: str, walltime: Optional[float] = None) -> None:
        """A text at ``tag``'s next step."""
        with self.lock:
            self.smw.add_text(tag, text_string, self._next_step("text", tag), walltime=walltime)
            self.smw.flush()

    @property
    def file_writer(self) -> Any:
        """The file writer of the one event file every process writes."""
        return self.smw._get_file_writer()

    def flush(self) -> None:
        self.smw.flush()

    def close(self) -> None:
        """Close the event file (and the step counters' manager process)."""
        self.smw.close()
        self._manager.shutdown()

    def __enter__(self) -> "GlobalSummaryWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @staticmethod
    def getSummaryWriter() -> "GlobalSummaryWriter":  # noqa: N802 - tensorboardX's name
        """The process's default writer, made on first use (tensorboardX's ``logging``-style
        entry point)."""
        global _default_writer
        if _default_writer is None:
            _default_writer = GlobalSummaryWriter()
        return _default_writer


_default_writer: Optional[GlobalSummaryWriter] = None
