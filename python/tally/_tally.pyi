# Hand-written stubs of the compiled module tally._tally (crates/tally-py), checked against the
# real module in CI by `python -m mypy.stubtest tally._tally` (tests/python/test_stubs.py).

import os
import types
from pathlib import Path
from typing import Any, Dict, List, Literal, Mapping, Optional, Protocol, Sequence, SupportsFloat, SupportsIndex, Tuple, Union

from typing_extensions import disjoint_base, final

__all__ = [
    "__version__",
    "METRIC_SCHEMA_VERSION",
    "STEP_FIELDS",
    "TallyError",
    "SchemaError",
    "ConfigError",
    "ClosedError",
    "ValueTypeError",
    "StorageError",
    "SinkError",
    "HealthStop",
    "Logger",
    "Phase",
    "Span",
    "EventWriter",
    "Bucket",
    "RemoteFollower",
    "ColumnBuffer",
    "read_columns",
    "runs_table",
    "flat_config",
    "compare_runs",
    "sql_query",
    "reduction",
    "rft_key",
    "cli_main",
    "_mirror",
    "_cloud_shown",
    "_close_open_loggers",
    "_interpreter_exiting",
    "_write_event_batches",
    "_RankSampler",
    "RANK_SYSTEM_SLOTS",
    "record_config",
    "param_table",
    "redact_json",
    "redact_text",
    "aggregate",
    "summaries",
]
__version__: str
METRIC_SCHEMA_VERSION: int
STEP_FIELDS: list[tuple[str, str]]

# Trinity-style aggregation (docs/contract/rft.md), wrapped by tally.metrics.
aggregate: types.ModuleType
# Serialized Summary protos for tally.SummaryWriter (histogram, image, video, audio, text,
# pr_curve, pr_curve_raw, custom_scalars, hparams), each returning bytes.
summaries: types.ModuleType

_Number = Union[SupportsFloat, SupportsIndex]
_Values = Mapping[str, _Number]
_PathLike = Union[str, "os.PathLike[str]"]

class TallyError(Exception):
    """Base class of every error tally raises."""

class SchemaError(TallyError, ValueError):
    """A step broke the canonical schema or the step-axis contract; nothing was logged for it."""

class ConfigError(TallyError, ValueError):
    """An unusable logger or writer configuration, run name or run directory."""

class ClosedError(TallyError, ValueError):
    """The logger or writer is already closed."""

class ValueTypeError(TallyError, TypeError):
    """A submitted value or key has the wrong Python type (the message names the key)."""

class StorageError(TallyError, OSError):
    """Writing the run directory, an artefact or an event file failed."""

class SinkError(StorageError):
    """A sink (event file, W&B) failed to persist a step; the other sinks kept it."""

class HealthStop(TallyError):
    """A health rule named in stop_on fired (the finding is its `finding` attribute): this step was not taken; every earlier one is kept and the logger can still be closed."""

    finding: Any

class _Sink(Protocol):
    """A Python sink (``Logger(sinks=[...])``); only ``name`` and ``write`` are required.

    ``start`` runs once on the constructing thread after ``run_config.json`` exists and may
    return the hosted run's URL; ``write`` runs on tally's writer thread once per logged
    iteration with exactly the TensorBoard payload; ``finish`` runs on the closing thread.
    A sink with ``remote = True`` (the W&B sink) is fed from the run's event file by a thread
    of its own instead, and is told the next row's index through ``resume_at(rows)``.
    """

    name: str
    def write(self, step: int, wall_time: float, iteration: int, scalars: Dict[str, float]) -> None: ...

@disjoint_base
class Logger:
    """The training logger: one per run (rank 0); ``step()`` once per iteration."""

    def __new__(
        cls,
        *,
        algo: str,
        task: str,
        sim: Optional[str] = None,
        max_iterations: Optional[int] = None,
        num_envs: Optional[int] = None,
        num_gpus: int = 1,
        profile: Optional[Literal["sac_family", "appo", "onpolicy", "rft"]] = None,
        logger: Literal["tensorboard", "wandb", "mlflow", "trackio", "none"] = "tensorboard",
        log_root: _PathLike = ...,
        log_dir: Optional[_PathLike] = None,
        log_interval: int = 1,
        panel: Literal["auto", "on", "plain", "off"] = "auto",
        trace: bool = False,
        trace_output_dir: Optional[_PathLike] = None,
        trace_thread_time: bool = False,
        trace_cuda_events: bool = False,
        config: Optional[Any] = None,
        wandb: Optional[Dict[str, Any]] = None,
        sinks: Optional[List[Any]] = None,
        on_storage_error: Literal["raise", "warn"] = "raise",
        name: Optional[str] = None,
        seed: Optional[int] = None,
        resume: bool = False,
        # With resume=True: the iteration the job's checkpoint holds; the run is rewound to it
        # (docs/contract/run-artifacts.md "Resume").
        resume_from: Optional[int] = None,
        remote_finish_timeout: Optional[float] = None,
        # docs/contract/health.md "In the logger": True/None the defaults, False none, or a
        # list of tally.health rules; stop_on names rules; on_health(finding) is told each one.
        health: Any = None,
        stop_on: Optional[List[str]] = None,
        on_health: Optional[Any] = None,
        # docs/contract/remote-sinks.md "MLflow" and "trackio": replicas fed from the event file.
        mlflow: Optional[Dict[str, Any]] = None,
        trackio: Optional[Dict[str, Any]] = None,
        # docs/contract/health.md "Webhook": each new finding posted once (Slack, Discord);
        # the URL is a secret, kept out of every file of the run.
        health_webhook: Optional[str] = None,
        # docs/contract/health.md "Ending a stalled run": seconds after a stall finding with
        # still no step before the run is recorded failed and the process exits with code 75.
        stall_exit_after: Optional[float] = None,
        # docs/contract/rft.md "Keys outside the namespace": an rft run's key outside it is
        # refused ("refuse") or written as the user's own metric ("user").
        outside_keys: Literal["refuse", "user"] = "refuse",
        # docs/contract/system-metrics.md: the process, the machine and each GPU sampled every
        # system_interval seconds under system/... in the run's event file.
        system_metrics: bool = True,
        system_interval: float = 5.0,
    ) -> Logger: ...
    def step(
        self,
        iteration: SupportsIndex,
        *,
        env_steps: Optional[SupportsIndex] = None,
        metrics: Optional[_Values] = None,
        learner: Optional[_Values] = None,
        iteration_time: Optional[_Number] = None,
        collector: Optional[_Values] = None,
        collector_inference: Optional[_Values] = None,
        rewards: Optional[_Values] = None,
        episode_return: Optional[_Number] = None,
        episode_length: Optional[_Number] = None,
        timeout_rate: Optional[_Number] = None,
        steps_this_iter: Optional[_Number] = None,
        replay_rows_this_iter: Optional[_Number] = None,
        system: Optional[Mapping[str, Any]] = None,
    ) -> None: ...
    def step_with_rates(
        self,
        iteration: SupportsIndex,
        *,
        env_steps_per_sec: Optional[float] = None,
        rows_per_sec: Optional[float] = None,
        env_steps: Optional[SupportsIndex] = None,
        metrics: Optional[_Values] = None,
        learner: Optional[_Values] = None,
        iteration_time: Optional[_Number] = None,
        collector: Optional[_Values] = None,
        collector_inference: Optional[_Values] = None,
        rewards: Optional[_Values] = None,
        episode_return: Optional[_Number] = None,
        episode_length: Optional[_Number] = None,
        timeout_rate: Optional[_Number] = None,
        steps_this_iter: Optional[_Number] = None,
        replay_rows_this_iter: Optional[_Number] = None,
        system: Optional[Mapping[str, Any]] = None,
    ) -> None: ...
    def judge_ranks(self, nonfinite: Sequence[int], iteration_time: Sequence[Optional[float]]) -> None: ...
    def phase(self, name: str) -> Phase: ...
    def span(self, name: str, cat: str = "user") -> Span: ...
    def counter(self, name: str, value: float) -> None: ...
    def add_span(self, name: str, cat: str, start: float, duration: float, track: str = "gpu") -> None: ...
    def define_metric(
        self,
        tag: str,
        *,
        unit: str = "1",
        reduction: Literal["mean", "sum", "max", "min", "last"] = "mean",
        label: Optional[str] = None,
        summary: Literal["last", "max", "min", "mean"] = "last",
    ) -> None: ...
    def status(self, text: str) -> None: ...
    def checkpoint_saved(self, path: _PathLike) -> None: ...
    def set_runtime_manifest(self, manifest: Mapping[str, Any]) -> None: ...
    def set_backend_diagnostics(self, diagnostics: Mapping[str, Any]) -> None: ...
    # Uploads `path` as `key` to each sink that takes videos (W&B) and records it as
    # play_video_path in run_summary.json. Returns True when the file exists, False (doing
    # nothing) when it does not. Without a W&B sink it only records the path and warns once per
    # run (UserWarning); play_video.mp4 in the run directory is recorded and uploaded at close
    # when no call named a video.
    def log_video(self, path: _PathLike, key: str = "media/play_video") -> bool: ...
    def flush(self) -> None: ...
    def close(self, status: str = "completed") -> None: ...
    def __enter__(self) -> Logger: ...
    def __exit__(self, exc_type: Optional[type] = None, exc: Optional[BaseException] = None, tb: Optional[Any] = None) -> bool: ...
    @property
    def run_dir(self) -> Path: ...
    @property
    def event_file(self) -> Optional[Path]: ...
    @property
    def closed(self) -> bool: ...
    # The run's last logged step (env steps on an env-step axis, else the iteration) and
    # iteration: a resumed run's own, or its rewind point's, until a step is logged; None for a
    # new run before its first step.
    @property
    def last_step(self) -> Optional[int]: ...
    @property
    def health(self) -> Any: ...
    def _health_findings(self) -> List[Dict[str, Any]]: ...
    def _stop_pending(self) -> bool: ...
    # The seconds between system samples, None with system_metrics=False.
    @property
    def system_interval(self) -> Optional[float]: ...
    # The other ranks' system samples, world size x RANK_SYSTEM_SLOTS floats (tally.distributed).
    def _rank_system(self, blocks: Sequence[float]) -> None: ...
    @property
    def last_iteration(self) -> Optional[int]: ...
    @property
    def panel(self) -> str: ...
    @property
    def sinks(self) -> List[Any]: ...
    @property
    def trace_cuda_events(self) -> bool: ...

@final
class Phase:
    """``with log.phase(name):`` — times the block into the next step's learner phase."""

    def __enter__(self) -> Phase: ...
    def __exit__(self, exc_type: Optional[Any] = None, exc: Optional[Any] = None, tb: Optional[Any] = None) -> bool: ...
    @property
    def name(self) -> str: ...

@final
class Span:
    """``with log.span(name, cat=...):`` — one span on the calling thread in the trace."""

    def __enter__(self) -> Span: ...
    def __exit__(self, exc_type: Optional[Any] = None, exc: Optional[Any] = None, tb: Optional[Any] = None) -> bool: ...
    @property
    def name(self) -> str: ...
    @property
    def cat(self) -> str: ...

# A rank's own system sampler for tally.distributed (docs/contract/system-metrics.md "Ranks").
RANK_SYSTEM_SLOTS: int

@final
class _RankSampler:
    def __new__(cls, interval: float, gpus: Sequence[str]) -> _RankSampler: ...
    def block(self) -> List[float]: ...
    def close(self) -> None: ...

@final
class Bucket:
    """A run written to object storage: its staging directory and the thread putting it to the URL."""

    def __new__(cls, url: str) -> Bucket: ...
    @property
    def staging(self) -> str: ...
    @property
    def url(self) -> str: ...
    def put(self, path: _PathLike) -> None: ...
    def drain(self) -> int: ...

@final
class EventWriter:
    """An ``events.out.tfevents.*`` file written one step (event) at a time."""

    def __new__(
        cls, log_dir: _PathLike, filename_suffix: str = "", on_storage_error: str = "raise", bucket: Optional[Bucket] = None
    ) -> EventWriter: ...
    def add_scalar(
        self, tag: str, value: Any, global_step: Optional[Any] = None, walltime: Optional[Any] = None, flush_secs: float = 120.0
    ) -> None: ...
    def write_scalars(self, step: int, wall_time: float, scalars: Dict[str, float]) -> None: ...
    def write_summary(self, step: Optional[int], wall_time: float, summary: bytes) -> None: ...
    def write_event(self, event: bytes, step: Optional[int] = None, wall_time: Optional[float] = None) -> None: ...
    def write_session_start(self, step: int, wall_time: float) -> None: ...
    def start_system_metrics(self, interval: float) -> None: ...
    @property
    def system_note(self) -> Optional[str]: ...
    def flush(self) -> None: ...
    def close(self) -> None: ...
    @property
    def path(self) -> Path: ...
    @property
    def closed(self) -> bool: ...

@final
class RemoteFollower:
    """A remote sink following the event files of a directory on its own thread."""

    def __new__(cls, sink: Any, run_dir: _PathLike) -> RemoteFollower: ...
    def finish(self, timeout: float) -> Tuple[List[Dict[str, Any]], List[str]]: ...

@final
class ColumnBuffer:
    """One immutable Rust-owned column of ``read_columns``; pyarrow wraps it in place."""

    @property
    def address(self) -> int: ...
    @property
    def size(self) -> int: ...

def read_columns(
    paths: List[_PathLike], tags: Optional[List[str]] = None, strict: bool = False, skip_unreadable: bool = False
) -> Dict[str, Any]: ...
def runs_table(paths: List[_PathLike], tags: List[str], strict: bool = False) -> Dict[str, Any]: ...
def flat_config(dir: _PathLike) -> str: ...
def compare_runs(
    paths: List[_PathLike], metric: str, by: List[str], at: str, reps: int, seed: int, curve_points: int
) -> Dict[str, Any]: ...
def sql_query(paths: List[_PathLike], query: str, strict: bool = False) -> Dict[str, Any]: ...
def reduction(field: str, key: str) -> Literal["mean", "sum"]: ...
def rft_key(key: str) -> Tuple[Literal["rft", "user", "refused"], Optional[str]]: ...
def cli_main(argv: List[str]) -> int: ...
def _mirror(path: _PathLike) -> "os.PathLike[str]": ...
def _cloud_shown(text: str) -> str: ...
def _close_open_loggers(status: Optional[str] = None, reason: Optional[str] = None) -> None: ...
def _interpreter_exiting() -> None: ...
def _write_event_batches() -> None: ...
def record_config(log_dir: Union[str, "os.PathLike[str]"], update: str) -> None: ...
def param_table(text: str) -> Optional[str]: ...
def redact_json(doc: str) -> str: ...
def redact_text(text: str) -> str: ...
