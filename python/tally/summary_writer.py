"""``tally.SummaryWriter``: a drop-in for torch's (and tensorboardX's) ``SummaryWriter``.

Libraries that take a writer (rsl_rl, stable-baselines3, CleanRL, custom loops) log through
tally's event writer: consecutive ``add_scalar`` calls at the same step become **one** event
(the step's batch is written when the step changes, when a tag repeats or a call brings its
own ``walltime``, on ``flush``/``close``, after ``flush_secs``, or before any other summary),
which TensorBoard, tbparse and ``tally export`` read like torch's files. Text, histograms,
images, figures, videos (GIF), audio (WAV), hparams, PR curves and custom-scalar layouts are
written as torch writes them, encoded in Rust; ``file_writer.add_summary``/``add_event`` take
protobuf objects built by other libraries (stable-baselines3's hparams) as they are.
With W&B configured (``wandb=``), the scalars are mirrored to W&B local-first, so a library
that only knows torch's writer (rsl_rl) logs to both backends without ever waiting on the
network: a follower thread sends each step of the event file from a cursor in ``log_dir``, and
``close()`` waits for it at most ``remote_finish_timeout`` seconds, leaving the rest to ``tally
sync`` (docs/contract/remote-sinks.md "SummaryWriter"). Only scalars reach W&B: those of
``log_dir``'s event files and of its sub-runs (``add_scalars``' series, sent as
``<sub-run>/<tag>``: docs/contract/remote-sinks.md "Sub-runs"); an existing ``wandb.run`` is reused and never finished
(docs/contract/run-artifacts.md "W&B"). ``mlflow=`` and ``trackio=`` mirror the same way, each
from its own cursor (docs/contract/remote-sinks.md "MLflow", "trackio").
A writer open when an uncaught exception ends the script (or leaving its ``with`` block by
one) records the run ``failed`` in ``run_summary.json`` (docs/contract/run-artifacts.md
"Status"); otherwise it writes no summary.
Any thread may call any method: calls that change the batch or a file are serialised by one
lock per writer (docs/contract/threads-and-signals.md "Sharing a logger between threads").
"""

from __future__ import annotations

import atexit
import functools
import json
import math
import os
import socket
import sys
import threading
import time
import weakref
from datetime import datetime, timezone
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, TypeVar, Union

from tally import _excepthook, _hparams, _mirrors
from tally._event_files import FileWriter, _each, _NoDisk
from tally._tally import Bucket, ConfigError, EventWriter, RemoteFollower, ValueTypeError, redact_text
from tally._tally import summaries as _summaries
from tally._wandb import DEFAULT_FINISH_TIMEOUT, WandbSink, import_wandb
from tally._writer_args import _media, _number, _scalar_step, _step
from tally._writer_config import param_table, redacted
from tally._writer_config import record as _record_config

__all__ = ["SummaryWriter", "FileWriter"]


_F = TypeVar("_F", bound=Callable[..., Any])


def _under_lock(method: _F) -> _F:
    """Run `method` under its writer's lock: a batch is read, written and emptied by one thread
    at a time, so concurrent calls neither lose nor repeat a value."""

    @functools.wraps(method)
    def locked(self: "SummaryWriter", *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)

    return locked  # type: ignore[return-value]


class SummaryWriter:
    """Writes TensorBoard summaries to ``log_dir`` (torch-compatible signature).

    ``max_queue`` is accepted for compatibility: records are never queued in-process (each
    written event reaches the OS at once, so a crash loses at most the step still being
    batched). ``purge_step`` writes a session start at that step, so TensorBoard drops what
    earlier files logged from that step on (a resumed run). ``remote_finish_timeout`` is how
    long ``close()`` waits for W&B, MLflow and trackio (``wandb=``, ``mlflow=``, ``trackio=``)
    to receive the rest (default 5 s). With ``redact`` (the
    default), secrets in ``add_text`` text and ``add_hparams`` values are replaced by
    ``<redacted>`` with the rules of ``run_config.json``; ``redact=False`` writes them as given
    (``run_config.json`` and W&B's config are redacted either way; docs/contract/integrations.md
    "The writer's API, method by method"). ``system_metrics`` (on by default) samples the
    process, the machine and each GPU every ``system_interval`` seconds into the event file
    under ``system/...`` (docs/contract/system-metrics.md). ``log_dir`` may be a bucket's URL
    (``s3://``, ``gs://``, ``az://``): the run is staged locally and put there by a thread of its
    own, the event file as segments, ``flush`` durable in the bucket
    (docs/contract/object-storage.md "Writing").
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
        mlflow: Optional[Mapping[str, Any]] = None,
        trackio: Optional[Mapping[str, Any]] = None,
        remote_finish_timeout: float = DEFAULT_FINISH_TIMEOUT,
        write_to_disk: bool = True,
        logdir: Optional[Union[str, "os.PathLike[str]"]] = None,
        config: Optional[Mapping[str, Any]] = None,
        redact: bool = True,
        on_storage_error: str = "raise",
        system_metrics: bool = True,
        system_interval: float = 5.0,
    ) -> None:
        purge = _step(purge_step, "purge_step")  # before any file is made
        # docs/contract/system-metrics.md: checked before any file is made.
        interval = float(system_interval)
        if system_metrics and not (math.isfinite(interval) and interval >= 0.1):
            raise ConfigError(f"system_interval {system_interval!r} must be a number of seconds >= 0.1")
        if on_storage_error not in ("raise", "warn"):
            raise ConfigError(f"on_storage_error={on_storage_error!r}: expected 'raise' or 'warn'")
        # What a disk that refuses writes does to the calls (the Logger's choice; the refused
        # events are kept either way: docs/contract/run-artifacts.md "Storage faults").
        self.on_storage_error = on_storage_error
        # Text and hparam values redacted before they are encoded (docs/contract/run-artifacts.md
        # "Secrets").
        self.redact = bool(redact)
        if config is not None and not isinstance(config, Mapping):
            raise ConfigError(f"SummaryWriter(config=...): a run configuration must be a dict, got {type(config).__name__}")
        if logdir is not None:
            # tensorboardX's spelling of the same keyword.
            if log_dir is not None:
                raise ConfigError(f"log_dir={log_dir!r} and logdir={logdir!r}: give one")
            log_dir = logdir
        self._write_to_disk = bool(write_to_disk)
        if wandb and not self._write_to_disk:
            raise ConfigError("wandb= with write_to_disk=False: W&B is fed from the event file, which is not written")
        replicas = _mirrors.checked_replicas(mlflow, trackio, self._write_to_disk)
        timeout = float(remote_finish_timeout)
        if not (math.isfinite(timeout) and timeout >= 0):
            raise ConfigError(f"remote_finish_timeout {remote_finish_timeout!r} must be a finite number of seconds >= 0")
        self.remote_finish_timeout = timeout
        if log_dir is None:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")
        self.log_dir = os.fspath(log_dir)
        # A URL's run is written into a local staging directory and put to the bucket by an
        # uploader thread, the event file as segments (docs/contract/object-storage.md
        # "Writing"); never a local folder named `s3:`. `_dir` is where the files are written.
        self._bucket: Optional[Bucket] = None
        self._dir = self.log_dir
        if "://" in self.log_dir and self._write_to_disk:
            self._bucket = Bucket(self.log_dir)
            self._dir = self._bucket.staging
        # Reentrant: close() flushes, add_event() writes the pending batch first.
        self._lock = threading.RLock()
        self.flush_secs = float(flush_secs)
        self.filename_suffix = str(filename_suffix)
        self.max_queue = max_queue
        self._main = self._event_writer(self._dir)
        if purge is not None:
            self._main.write_session_start(purge, time.time())
        if system_metrics and self._write_to_disk:
            # The process, the machine and each GPU under system/..., every system_interval
            # seconds, from a thread of their own (docs/contract/system-metrics.md).
            self._main.start_system_metrics(interval)
        self._subs: "Dict[str, Union[EventWriter, _NoDisk]]" = {}
        self._closed = False
        self._wandb: Optional[WandbSink] = None
        self._follower: Optional[RemoteFollower] = None
        # The MLflow and trackio replicas, each with its follower.
        self._replicas: List[Tuple[Any, RemoteFollower]] = []
        self._at_exit: Optional[Callable[[], None]] = None
        if self._bucket is not None:
            # A writer left open (torch's often is) puts its last segment at exit: the uploader
            # thread would die with the interpreter.
            self._close_at_exit()
        if self._write_to_disk:
            # A script dying of an uncaught exception leaves the run `failed`.
            _excepthook.track(self)
        if config is not None:
            self.record_config(config)
        if wandb:
            self._start_wandb({} if wandb is True else dict(wandb))
        try:
            for kind, settings in replicas:
                self._start_replica(kind(settings, finish_timeout=self.remote_finish_timeout))
        except BaseException:
            # A replica that cannot start (its server down) is refused naming it; what was
            # written stays, and the mirrors already started are finished.
            self.close()
            raise

    def record_config(self, config: Mapping[str, Any]) -> None:
        """Record ``config`` as the run's configuration (``run_config.json``'s ``config``, keys
        already there replaced), for ``tally.read_runs(config=True)``; secrets redacted."""
        if self._write_to_disk:
            _record_config(self._dir, config, "SummaryWriter.record_config")
            self._put("run_config.json")

    def _put(self, name: str) -> None:
        """A JSON artefact written whole in the staging directory, put to the bucket whole."""
        if self._bucket is not None:
            self._bucket.put(os.path.join(self._dir, name))

    @property
    def _wandb_run(self) -> Any:
        return None if self._wandb is None else self._wandb.run

    # -- W&B mirror ---------------------------------------------------------------------------
    def _start_wandb(self, settings: Dict[str, Any]) -> None:
        """Open (or reuse) the W&B run and follow this writer's event file into it, from the
        cursor in ``log_dir``; the event file exists already, so it is among those followed."""
        import_wandb()
        kw = _mirrors.wandb_init(settings, self._dir)
        sink = WandbSink(finish_timeout=self.remote_finish_timeout, init=kw)
        self._follower = RemoteFollower(sink, self._dir)
        self._wandb = sink
        # A writer left open (torch's is, often) is closed before wandb's own exit hook, which
        # was registered by ``wandb.init`` just before and so runs after this one: the last
        # step is written, W&B gets the rest within the timeout, and the follower stops before
        # the interpreter finalizes (a thread calling into it then would abort the process).
        self._close_at_exit()

    def _close_at_exit(self) -> None:
        """Close this writer at interpreter exit while a follower runs (once)."""
        if self._at_exit is None:
            ref = weakref.ref(self)
            self._at_exit = lambda: _mirrors.close_if_alive(ref)
            atexit.register(self._at_exit)

    def _start_replica(self, sink: Any) -> None:
        """Open the replica's run and follow this writer's event files into it from its own
        cursor in ``log_dir``, as W&B is (docs/contract/remote-sinks.md "SummaryWriter")."""
        self._replicas.append((sink, RemoteFollower(sink, self._dir)))
        self._close_at_exit()

    def _finish_replicas(self) -> None:
        """As :meth:`_finish_wandb`, for the MLflow and trackio replicas."""
        replicas, self._replicas = self._replicas, []
        for sink, follower in replicas:
            _, left = follower.finish(self.remote_finish_timeout)
            for line in left:
                print(f"tally: {line}", file=sys.stderr)
            sink.finish(self._dir)

    def _finish_wandb(self) -> None:
        """The event files are closed: let W&B receive the rest within ``remote_finish_timeout``
        (what is left is ``tally sync``'s, said in one line), then finish a run this writer
        started, waiting at most as long."""
        if self._at_exit is not None:
            atexit.unregister(self._at_exit)
            self._at_exit = None
        if self._follower is None or self._wandb is None:
            return
        _, left = self._follower.finish(self.remote_finish_timeout)
        for line in left:
            print(f"tally: {line}", file=sys.stderr)
        self._follower = None
        self._wandb.finish(self._dir)

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
        display_name: str = "",
        summary_description: str = "",
    ) -> None:
        """Add one scalar; same-step calls are batched into one event (the batch lives in the
        event writer, behind its own lock: this is the hot path, one call per value).

        ``new_style=True`` writes torch's tensor form, float64 whole with
        ``double_precision=True`` (what the W&B, MLflow and trackio replicas then send:
        docs/contract/remote-sinks.md "Values are float32")."""
        if new_style:
            value = _number(tag, scalar_value)
            summary = _summaries.scalar_tensor(tag, value, bool(double_precision))
            self._write_summary(summary, _scalar_step(global_step), walltime)
            return
        if self._closed:
            self._ensure_open()
        self._main.add_scalar(tag, scalar_value, global_step, walltime, self.flush_secs)

    @_under_lock
    def add_scalars(
        self,
        main_tag: str,
        tag_scalar_dict: Mapping[str, Any],
        global_step: Optional[int] = None,
        walltime: Optional[float] = None,
    ) -> None:
        """As torch: each ``tag`` goes to ``log_dir/<main_tag>_<tag>/`` under the tag ``main_tag``
        (``tally.tensorboardX.SummaryWriter`` lays them out as tensorboardX does). W&B, MLflow
        and trackio get it as ``<main_tag>_<tag>/<main_tag>`` (docs/contract/remote-sinks.md
        "Sub-runs")."""
        self._ensure_open()
        step = _scalar_step(global_step)
        for tag, v in tag_scalar_dict.items():
            value = _number(f"{main_tag}/{tag}", v)
            sub = self._subrun(main_tag, tag)
            writer = self._subs.get(sub)
            if writer is None:
                writer = self._subs[sub] = self._event_writer(sub)
            writer.add_scalar(main_tag, value, step, walltime, self.flush_secs)

    def _subrun(self, main_tag: str, tag: str) -> str:
        """The directory of ``add_scalars``' series ``tag``: torch's layout."""
        return os.path.join(self._dir, main_tag.replace("/", "_") + "_" + tag)

    def _event_writer(self, directory: str) -> "Union[EventWriter, _NoDisk]":
        """A new event file in ``directory``; nothing at all with ``write_to_disk=False``."""
        if not self._write_to_disk:
            return _NoDisk()
        return EventWriter(directory, self.filename_suffix, self.on_storage_error, self._bucket)

    # -- everything else torch's writer adds ------------------------------------------------------
    @property
    def file_writer(self) -> Optional[FileWriter]:
        """torch's ``writer.file_writer``: ``add_summary``/``add_event`` for prebuilt protos;
        ``None`` once closed, as torch's."""
        return None if self._closed else FileWriter(self)

    def _get_file_writer(self) -> FileWriter:
        """The file writer, reopened after ``close()`` as torch's ``_get_file_writer`` does."""
        self._ensure_open()
        return FileWriter(self)

    def _events_writer(self) -> "Union[EventWriter, _NoDisk]":
        self._ensure_open()
        return self._main  # which writes its scalar batch first: the file keeps the call order

    @_under_lock
    def _write_scalars(self, step: int, walltime: float, scalars: Dict[str, float]) -> None:
        """One event of ``scalars`` at ``step``, written at once (no batch)."""
        self._events_writer().write_scalars(step, walltime, scalars)

    @_under_lock
    def _write_summary(self, summary: bytes, global_step: Any, walltime: Optional[float]) -> None:
        w = self._events_writer()
        w.write_summary(_step(global_step), time.time() if walltime is None else float(walltime), summary)

    def add_text(self, tag: str, text_string: str, global_step: Optional[int] = None, walltime: Optional[float] = None) -> None:
        """Markdown text, shown by TensorBoard's Text tab under ``<tag>/text_summary``."""
        if not isinstance(text_string, str):
            raise ValueTypeError(f"add_text('{tag}'): text_string must be str, got {type(text_string).__name__}")
        shown = redact_text(text_string) if self.redact else text_string
        self._write_summary(_summaries.text(tag, shown), global_step, walltime)
        params = param_table(text_string)
        if params:
            # A hyperparameter table (CleanRL's): the run's configuration too.
            self.record_config(params)

    def add_histogram(
        self,
        tag: str,
        values: Any,
        global_step: Optional[int] = None,
        bins: Any = "tensorflow",
        walltime: Optional[float] = None,
        max_bins: Optional[int] = None,
    ) -> None:
        """Histogram of ``values``; ``bins`` is ``"tensorflow"`` (default exponential buckets), a
        count, a numpy estimator name (``"auto"``, ``"fd"``...) or explicit edges."""
        import numpy as np

        arr = _media().to_numpy(values, "values").astype(np.float64).reshape(-1)
        if arr.size == 0:
            raise ValueError(f"add_histogram('{tag}'): values is empty")
        count, edges = None, None
        if isinstance(bins, str) and bins == "tensorflow":
            pass
        elif isinstance(bins, str):
            try:
                edges = np.histogram_bin_edges(arr, bins=bins).tolist()
            except ValueError as e:
                raise ValueError(f"add_histogram('{tag}'): bins={bins!r}: {e}") from e
        elif isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
            count = int(bins)
        else:
            edges = _media().to_numpy(bins, "bins").astype(np.float64).reshape(-1).tolist()
        try:
            summary = _summaries.histogram(tag, _media().float_buffer(arr), count, edges, max_bins)
        except ValueError as e:
            raise ValueError(f"add_histogram('{tag}'): {e}") from None
        self._write_summary(summary, global_step, walltime)

    def add_histogram_raw(
        self,
        tag: str,
        min: float,  # noqa: A002 - torch's names
        max: float,  # noqa: A002
        num: int,
        sum: float,  # noqa: A002
        sum_squares: float,
        bucket_limits: Any,
        bucket_counts: Any,
        global_step: Optional[int] = None,
        walltime: Optional[float] = None,
    ) -> None:
        """A histogram from precomputed buckets (right edges ``bucket_limits``)."""
        limits = _media().to_numpy(bucket_limits, "bucket_limits").reshape(-1).tolist()
        counts = _media().to_numpy(bucket_counts, "bucket_counts").reshape(-1).tolist()
        if len(limits) != len(counts):
            raise ValueError(f"add_histogram_raw('{tag}'): bucket_limits has {len(limits)} entries, bucket_counts {len(counts)}")
        summary = _summaries.histogram_raw(tag, float(min), float(max), float(num), float(sum), float(sum_squares), limits, counts)
        self._write_summary(summary, global_step, walltime)

    def _image(self, tag: str, hwc: Any, global_step: Any, walltime: Optional[float]) -> None:
        px = _media().to_uint8(hwc)
        h, w, c = px.shape
        self._write_summary(_summaries.image(tag, px.tobytes(), h, w, c), global_step, walltime)

    def add_image(
        self, tag: str, img_tensor: Any, global_step: Optional[int] = None, walltime: Optional[float] = None, dataformats: str = "CHW"
    ) -> None:
        """One image (PNG); floats are taken in [0, 1], uint8 in [0, 255]; PIL images as they are."""
        self._image(tag, _media().image_hwc(img_tensor, dataformats), global_step, walltime)

    def add_images(
        self, tag: str, img_tensor: Any, global_step: Optional[int] = None, walltime: Optional[float] = None, dataformats: str = "NCHW"
    ) -> None:
        """A batch of images tiled into one grid (8 per row), as torch does; a list of images
        each in ``dataformats`` ``'CHW'`` or ``'HWC'`` is a batch, as tensorboardX takes it."""
        if isinstance(img_tensor, (list, tuple)) and dataformats.upper() in ("CHW", "HWC"):
            img_tensor = _media().stacked(img_tensor, "img_tensor")
            dataformats = "N" + dataformats
        self._image(tag, _media().image_hwc(img_tensor, dataformats), global_step, walltime)

    def add_figure(
        self, tag: str, figure: Any, global_step: Optional[int] = None, close: bool = True, walltime: Optional[float] = None
    ) -> None:
        """A matplotlib figure (or list of figures, tiled) rendered to an image."""
        chw = _media().figure_chw(figure, close)
        self.add_image(tag, chw, global_step, walltime, dataformats="NCHW" if chw.ndim == 4 else "CHW")

    def add_video(
        self, tag: str, vid_tensor: Any, global_step: Optional[int] = None, fps: float = 4, walltime: Optional[float] = None, dataformats: str = "NTCHW"
    ) -> None:
        """Videos (N, T, C, H, W) tiled into one animated GIF at ``fps``."""
        v = _media().video_thwc(vid_tensor, dataformats)
        self._write_summary(_summaries.video(tag, v.tobytes(), v.shape, float(fps)), global_step, walltime)

    def add_audio(
        self, tag: str, snd_tensor: Any, global_step: Optional[int] = None, sample_rate: float = 44100, walltime: Optional[float] = None
    ) -> None:
        """A clip of samples in [-1, 1] (clipped) as a 16-bit WAV."""
        frames = _media().audio_frames(snd_tensor)
        summary = _summaries.audio(tag, _media().float_buffer(frames), frames.shape[1], float(sample_rate))
        self._write_summary(summary, global_step, walltime)

    def add_pr_curve(
        self,
        tag: str,
        labels: Any,
        predictions: Any,
        global_step: Optional[int] = None,
        num_thresholds: int = 127,
        weights: Any = None,
        walltime: Optional[float] = None,
    ) -> None:
        """Precision-recall curve of binary ``labels`` against ``predictions`` in [0, 1]."""
        import numpy as np

        lab = _media().to_numpy(labels, "labels").reshape(-1)
        pred = _media().to_numpy(predictions, "predictions").reshape(-1)
        if lab.shape != pred.shape:
            raise ValueError(f"add_pr_curve('{tag}'): labels has {lab.size} elements, predictions {pred.size}")
        w = None
        if weights is not None:
            w = _media().float_buffer(np.broadcast_to(_media().to_numpy(weights, "weights").astype(np.float64), lab.shape))
        try:
            summary = _summaries.pr_curve(tag, _media().float_buffer(lab), _media().float_buffer(pred), int(num_thresholds), w)
        except ValueError as e:
            raise ValueError(f"add_pr_curve('{tag}'): {e}") from None
        self._write_summary(summary, global_step, walltime)

    def add_pr_curve_raw(
        self,
        tag: str,
        true_positive_counts: Any,
        false_positive_counts: Any,
        true_negative_counts: Any,
        false_negative_counts: Any,
        precision: Any,
        recall: Any,
        global_step: Optional[int] = None,
        num_thresholds: int = 127,
        weights: Any = None,
        walltime: Optional[float] = None,
    ) -> None:
        """A precision-recall curve from precomputed rows (one entry per threshold)."""
        import numpy as np

        names = ("true_positive_counts", "false_positive_counts", "true_negative_counts", "false_negative_counts", "precision", "recall")
        rows = [_media().to_numpy(r, n).astype(np.float64).reshape(-1) for r, n in zip(
            (true_positive_counts, false_positive_counts, true_negative_counts, false_negative_counts, precision, recall), names)]
        for r, n in zip(rows, names):
            if r.shape != rows[0].shape:
                raise ValueError(f"add_pr_curve_raw('{tag}'): {n} has {r.size} entries, true_positive_counts {rows[0].size}")
        self._write_summary(_summaries.pr_curve_raw(tag, _media().float_buffer(np.stack(rows))), global_step, walltime)

    def add_custom_scalars(self, layout: Mapping[str, Mapping[str, Any]]) -> None:
        """Charts for TensorBoard's Custom Scalars tab: ``{category: {title: ["Multiline", [tags]]
        or ["Margin", [value, lower, upper]]}}``."""
        self._write_summary(_summaries.custom_scalars(_media().layout_spec(layout)), None, None)

    def add_custom_scalars_multilinechart(self, tags: Any, category: str = "default", title: str = "untitled") -> None:
        """tensorboardX's shortcut: one multiline chart of ``tags``."""
        self.add_custom_scalars({category: {title: ["Multiline", list(tags)]}})

    def add_custom_scalars_marginchart(self, tags: Any, category: str = "default", title: str = "untitled") -> None:
        """tensorboardX's shortcut: one margin chart of ``[value, lower, upper]``."""
        self.add_custom_scalars({category: {title: ["Margin", list(tags)]}})

    def add_hparams(
        self,
        hparam_dict: Mapping[str, Any],
        metric_dict: Mapping[str, Any],
        hparam_domain_discrete: Union[None, Mapping[str, Any], str] = None,
        run_name: Optional[str] = None,
        global_step: Optional[int] = None,
        *,
        name: Optional[str] = None,
    ) -> None:
        """One HParams session in the run ``log_dir/<run_name>`` (default: the time), with
        ``metric_dict`` logged there as scalars, as torch does. tensorboardX calls the run
        ``name`` and takes it third, where torch takes ``hparam_domain_discrete``: a ``str``
        there is tensorboardX's name (a domain is a dict)."""
        if isinstance(hparam_domain_discrete, str):
            name, hparam_domain_discrete = hparam_domain_discrete, None
        exp, start, end, metrics = _hparams.summaries(hparam_dict, metric_dict, hparam_domain_discrete, self.redact)
        self._ensure_open()
        self.record_config({k: v for k, v in hparam_dict.items() if v is not None})
        run = run_name or name or str(time.time())
        with SummaryWriter(
            os.path.join(self.log_dir, run), filename_suffix=self.filename_suffix, write_to_disk=self._write_to_disk
        ) as hp:
            for s in (exp, start, end):
                hp._write_summary(s, global_step, None)
            for k, v in metrics.items():
                hp.add_scalar(k, v, global_step)

    def add_tensor(self, tag: str, tensor: Any, global_step: Optional[int] = None, walltime: Optional[float] = None) -> None:
        """torch's ``add_tensor``: the array or tensor whole, under the ``tensor`` plugin
        (TensorBoard's ``Tensors(tag)``; ``tensor_util.make_ndarray`` gives it back)."""
        arr = _media().to_numpy(tensor, f"add_tensor('{tag}')")
        little = arr.astype(arr.dtype.newbyteorder("<"), copy=False)
        summary = _summaries.tensor(tag, arr.dtype.name, list(arr.shape), little.tobytes(order="C"))
        self._write_summary(summary, global_step, walltime)

    def add_graph(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("tally.SummaryWriter.add_graph is not supported (it needs torch.jit tracing); log the graph with torch's writer")

    def add_onnx_graph(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("tally.SummaryWriter.add_onnx_graph is not supported")

    def add_embedding(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("tally.SummaryWriter.add_embedding is not supported (TensorBoard's projector files are not written)")

    def add_mesh(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("tally.SummaryWriter.add_mesh is not supported (TensorBoard's mesh plugin is not written)")

    def add_image_with_boxes(
        self,
        tag: str,
        img_tensor: Any,
        box_tensor: Any,
        global_step: Optional[int] = None,
        walltime: Optional[float] = None,
        rescale: float = 1,
        dataformats: str = "CHW",
        labels: Optional[Any] = None,
    ) -> None:
        """One image with boxes (N × 4, ``[xmin, ymin, xmax, ymax]`` in pixels) drawn as torch
        draws them: red outlines, each label in black on a red band (a string is one label).
        ``rescale`` scales the image (nearest pixel) and the boxes before drawing."""
        name = f"add_image_with_boxes('{tag}')"
        px = _media().to_uint8(_media().image_hwc(img_tensor, dataformats, name))
        boxes = _media().to_numpy(box_tensor, f"{name} box_tensor").astype("float64")
        if boxes.size == 0:
            boxes = boxes.reshape(0, 4)
        if boxes.ndim != 2 or boxes.shape[1] != 4:
            raise ValueError(f"{name}: box_tensor has the shape {boxes.shape}; expected (N, 4) rows of [xmin, ymin, xmax, ymax]")
        if not rescale > 0:
            raise ValueError(f"{name}: rescale={rescale!r}; expected a number above 0")
        if rescale != 1:
            px, boxes = _media().rescaled(px, rescale), boxes * rescale
        names = [labels] if isinstance(labels, str) else None if labels is None else [str(x) for x in labels]
        summary = _summaries.image_with_boxes(tag, px.tobytes(), px.shape, boxes.tolist(), names)
        self._write_summary(summary, global_step, walltime)

    @_under_lock
    def flush(self) -> None:
        """Write every pending step's event (W&B follows the file): when it returns, every value
        so far is in the files. While a full disk keeps events, it raises ``SinkError`` (with
        ``on_storage_error="raise"``), after flushing every file."""
        if self._closed:
            return
        _each((self._main, *self._subs.values()), lambda w: w.flush())

    @_under_lock
    def close(self) -> None:
        """Close the event files (each writes its step's batch and retries what a full disk
        kept); give W&B at most ``remote_finish_timeout`` seconds to receive the rest, then
        finish the W&B run if this writer started it. A file's error is raised after all that."""
        if self._closed:
            return
        self._closed = True
        try:
            _each((self._main, *self._subs.values()), lambda w: w.close())
        finally:
            try:
                self._finish_wandb()
            finally:
                self._finish_replicas()

    def _ensure_open(self) -> None:
        """A record after ``close()`` reopens the writer, as torch's does: a new event file in
        ``log_dir`` (read with the earlier ones as one run). W&B is not mirrored again: its run
        was finished at ``close()``."""
        if not self._closed:
            return
        with self._lock:
            if self._closed:
                self._main = self._event_writer(self._dir)
                self._subs = {}
                self._closed = False

    def __enter__(self) -> "SummaryWriter":
        return self

    def __exit__(self, exc_type: Any = None, exc: Any = None, tb: Any = None) -> None:
        if exc_type is None or issubclass(exc_type, KeyboardInterrupt):
            self.close()
        else:
            self._end_failed(_excepthook.reason(exc_type, exc))

    def _end_failed(self, reason: str) -> None:
        """Close a writer still open when an exception ended its script, and record the run
        ``failed`` in ``run_summary.json``, which holds only that: the status, the exception as
        ``status_reason`` (redacted) and the end time (docs/contract/run-artifacts.md "Status")."""
        if self._closed or not self._write_to_disk:
            return
        try:
            self.close()
        finally:
            doc = {
                "status": "failed",
                "status_reason": redact_text(reason),
                "end_time_utc": datetime.now(timezone.utc).isoformat(timespec="microseconds"),
            }
            path = os.path.join(self._dir, "run_summary.json")
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(doc, f, indent=2)
            os.replace(tmp, path)
            self._put("run_summary.json")
            if self._bucket is not None and self._bucket.drain():
                print(f"tally: warning: {self.log_dir}/run_summary.json is not in the bucket yet: "
                      f"it stays in {self._dir} and is put while this process lives", file=sys.stderr)

    # -- rsl_rl's WandbSummaryWriter extras ---------------------------------------------------------
    def store_config(self, env_cfg: Any, train_cfg: Any) -> None:
        """Record the configs as the run's (and in the W&B run config, with W&B)."""
        self._rsl_rl_config({"runner_cfg": train_cfg, "env_cfg": _as_dict(env_cfg)})

    def log_config(self, env_cfg: Any, runner_cfg: Any, alg_cfg: Any, policy_cfg: Any) -> None:
        """rsl_rl ≥ 2: record every config as the run's (and in the W&B run config, with W&B)."""
        self._rsl_rl_config({"env_cfg": _as_dict(env_cfg), "runner_cfg": runner_cfg, "alg_cfg": alg_cfg, "policy_cfg": policy_cfg})

    def _rsl_rl_config(self, configs: Dict[str, Any]) -> None:
        self.record_config(configs)
        if self._wandb_run is not None:
            self._wandb_run.config.update(redacted(configs), allow_val_change=True)

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
