"""``tally.SummaryWriter``: a drop-in for the scalar API of torch's ``SummaryWriter``.

Libraries that take a writer (rsl_rl, stable-baselines3, custom loops) log through tally's
event writer: consecutive ``add_scalar`` calls at the same step become **one** event (the
step's batch is written when the step changes, when a tag repeats or a call brings its own
``walltime``, on ``flush``/``close``, or after ``flush_secs``), which TensorBoard, tbparse and
``tally export`` read like torch's files.
With W&B configured (``wandb=``), each step's batch is mirrored to W&B as one ``log`` call,
so a library that only knows torch's writer (rsl_rl) logs to both backends; an existing
``wandb.run`` is reused and never finished (docs/contract/run-artifacts.md "W&B").
"""

from __future__ import annotations

import os
import socket
import time
from datetime import datetime
from typing import Any, Dict, Mapping, Optional, Union

from tally._tally import EventWriter, ValueTypeError
from tally._wandb import DEFAULT_PROJECT, import_wandb

__all__ = ["SummaryWriter"]


def _number(tag: str, v: Any) -> float:
    if isinstance(v, float):
        return v
    if v is None or isinstance(v, (str, bytes)):
        raise ValueTypeError(f"add_scalar('{tag}'): expected a number, got {type(v).__name__} {v!r}")
    try:
        return float(v)  # ints, numpy scalars, 0-d tensors
    except (TypeError, ValueError) as e:
        raise ValueTypeError(f"add_scalar('{tag}'): expected a number, got {type(v).__name__}: {e}") from e


class _Batch:
    """One event file and the scalars of its current step, not yet written."""

    __slots__ = ("writer", "step", "wall_time", "values", "started")

    def __init__(self, writer: EventWriter) -> None:
        self.writer = writer
        self.step: Optional[int] = None
        self.wall_time = 0.0
        self.values: Dict[str, float] = {}
        self.started = 0.0

    def add(self, tag: str, value: float, step: int, wall_time: Optional[float], flush_secs: float) -> None:
        now = time.monotonic()
        explicit_wall = wall_time is not None and float(wall_time) != self.wall_time
        if self.values and (step != self.step or tag in self.values or explicit_wall or now - self.started >= flush_secs):
            self.write()
        if not self.values:
            self.step = step
            self.wall_time = time.time() if wall_time is None else float(wall_time)
            self.started = now
        self.values[tag] = value

    def write(self) -> None:
        if self.values:
            assert self.step is not None
            self.writer.write_scalars(self.step, self.wall_time, self.values)
            self.values = {}


class SummaryWriter:
    """Writes scalars to ``log_dir`` through tally's event writer (torch-compatible signature).

    ``max_queue`` and ``filename_suffix`` are accepted for compatibility; records are never
    queued in-process (each written event reaches the OS at once, so a crash loses at most the
    step still being batched). ``purge_step`` is not supported and raises.
    """

    def __init__(
        self,
        log_dir: Optional[Union[str, "os.PathLike[str]"]] = None,
        comment: str = "",
        purge_step: Optional[int] = None,
        max_queue: int = 10,
        flush_secs: float = 120,
        filename_suffix: str = "",
        *,
        wandb: Union[None, bool, Mapping[str, Any]] = None,
    ) -> None:
        if purge_step is not None:
            raise NotImplementedError("tally.SummaryWriter does not support purge_step")
        if log_dir is None:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")
        self.log_dir = os.fspath(log_dir)
        self.flush_secs = float(flush_secs)
        self._main = _Batch(EventWriter(self.log_dir))
        self._subs: Dict[str, _Batch] = {}
        self._closed = False
        self._wandb_run: Any = None
        self._wandb_owned = False
        self._wb_step: Optional[int] = None
        self._wb_values: Dict[str, float] = {}
        if wandb:
            self._start_wandb({} if wandb is True else dict(wandb))

    # -- W&B mirror ---------------------------------------------------------------------------
    def _start_wandb(self, settings: Dict[str, Any]) -> None:
        wb = import_wandb()
        if wb.run is not None:
            self._wandb_run = wb.run
            self._wandb_run.config.update({"log_dir": self.log_dir}, allow_val_change=True)
            return
        kw: Dict[str, Any] = {
            "project": settings.pop("project", None) or os.environ.get("WANDB_PROJECT") or DEFAULT_PROJECT,
            "name": settings.pop("name", None) or os.path.basename(os.path.abspath(self.log_dir)),
            "config": {"log_dir": self.log_dir},
            "dir": os.path.abspath(self.log_dir),
        }
        kw.update({k: v for k, v in settings.items() if v not in (None, "", [])})
        self._wandb_run = wb.init(**kw)
        self._wandb_owned = True

    def _mirror(self, tag: str, value: float, step: int) -> None:
        if self._wandb_run is None:
            return
        if self._wb_values and (step != self._wb_step or tag in self._wb_values):
            self._mirror_flush()
        self._wb_step = step
        self._wb_values[tag] = value

    def _mirror_flush(self) -> None:
        if self._wandb_run is not None and self._wb_values:
            self._wandb_run.log(self._wb_values, step=self._wb_step)
            self._wb_values = {}

    # -- torch SummaryWriter scalar API ---------------------------------------------------------
    def get_logdir(self) -> str:
        """The directory event files are written to."""
        return self.log_dir

    def add_scalar(
        self,
        tag: str,
        scalar_value: Any,
        global_step: Optional[int] = None,
        walltime: Optional[float] = None,
        new_style: bool = False,
        double_precision: bool = False,
    ) -> None:
        """Add one scalar; same-step calls are batched into one event."""
        self._check_open()
        value = _number(tag, scalar_value)
        step = 0 if global_step is None else int(global_step)
        self._main.add(tag, value, step, walltime, self.flush_secs)
        self._mirror(tag, value, step)

    def add_scalars(
        self,
        main_tag: str,
        tag_scalar_dict: Mapping[str, Any],
        global_step: Optional[int] = None,
        walltime: Optional[float] = None,
    ) -> None:
        """As torch: each ``tag`` goes to ``log_dir/<main_tag>_<tag>/`` under the tag ``main_tag``."""
        self._check_open()
        step = 0 if global_step is None else int(global_step)
        for tag, v in tag_scalar_dict.items():
            value = _number(f"{main_tag}/{tag}", v)
            sub = os.path.join(self.log_dir, main_tag.replace("/", "_") + "_" + tag)
            batch = self._subs.get(sub)
            if batch is None:
                batch = self._subs[sub] = _Batch(EventWriter(sub))
            batch.add(main_tag, value, step, walltime, self.flush_secs)
            self._mirror(f"{main_tag}/{tag}", value, step)

    def flush(self) -> None:
        """Write every pending step's event (and its W&B mirror)."""
        if self._closed:
            return
        for b in (self._main, *self._subs.values()):
            b.write()
            b.writer.flush()
        self._mirror_flush()

    def close(self) -> None:
        """Flush and close the event files; finish the W&B run if this writer started it."""
        if self._closed:
            return
        self.flush()
        self._closed = True
        for b in (self._main, *self._subs.values()):
            b.writer.close()
        if self._wandb_run is not None and self._wandb_owned:
            self._wandb_run.finish()

    def _check_open(self) -> None:
        if self._closed:
            from tally._tally import ClosedError

            raise ClosedError(f"SummaryWriter({self.log_dir!r}) is closed")

    def __enter__(self) -> "SummaryWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- rsl_rl's WandbSummaryWriter extras ---------------------------------------------------------
    def store_config(self, env_cfg: Any, train_cfg: Any) -> None:
        """Put the configs into the W&B run config (no-op without W&B)."""
        if self._wandb_run is not None:
            self._wandb_run.config.update({"runner_cfg": train_cfg, "env_cfg": _as_dict(env_cfg)}, allow_val_change=True)

    def log_config(self, env_cfg: Any, runner_cfg: Any, alg_cfg: Any, policy_cfg: Any) -> None:
        """rsl_rl ≥ 2: store every config in the W&B run config (no-op without W&B)."""
        if self._wandb_run is not None:
            self._wandb_run.config.update(
                {
                    "env_cfg": _as_dict(env_cfg),
                    "runner_cfg": runner_cfg,
                    "alg_cfg": alg_cfg,
                    "policy_cfg": policy_cfg,
                },
                allow_val_change=True,
            )

    def save_model(self, model_path: str, iter: int) -> None:  # noqa: A002 - rsl_rl's name
        """Upload a checkpoint to W&B (no-op without W&B)."""
        self.save_file(model_path)

    def save_file(self, path: str, iter: Optional[int] = None) -> None:  # noqa: A002
        """Upload a file to W&B (no-op without W&B)."""
        if self._wandb_run is not None:
            self._wandb_run.save(path, base_path=os.path.dirname(path))

    def stop(self) -> None:
        """rsl_rl's name for ``close``."""
        self.close()


def _as_dict(cfg: Any) -> Any:
    if hasattr(cfg, "to_dict"):
        return cfg.to_dict()
    return cfg if isinstance(cfg, Mapping) else getattr(cfg, "__dict__", cfg)
