"""The W&B sink: the run's event file sent through the real ``wandb`` SDK.

The sink is remote (docs/contract/remote-sinks.md): a thread of its own reads the run's
event file from the sink's cursor and calls :meth:`WandbSink.write` once per step with exactly
the scalars the file holds, so W&B and the event file never disagree and the training loop
never waits on the network. Each row carries its x-axes (``tally/step``, ``tally/wall_time``)
and W&B plots every metric against ``tally/step``; W&B's own ``_step`` is the row's index,
so a re-sent row is one W&B already has (ignored) and a step that goes back is never dropped.
``start``, ``log_video`` and ``finish`` run on the caller's thread; ``finish`` uploads the
run directory's ``play_video.mp4`` unless that file was uploaded already, and waits for W&B at
most ``finish_timeout`` seconds (docs/contract/remote-sinks.md "The playback video").

An existing ``wandb.run`` is reused (its config updated) and never finished by tally, so a
launcher that opened it keeps owning it; otherwise tally calls ``wandb.init`` with the run
config and the run directory and finishes the run it owns at close
(docs/contract/run-artifacts.md "W&B"). W&B records the process's command line in its run
metadata (``wandb-metadata.json``, uploaded online): ``wandb.init`` sees ``sys.argv`` redacted
(docs/contract/run-artifacts.md "Secrets"). The W&B run id is kept in the run directory, so a
resumed tally run continues the same W&B run (docs/contract/run-artifacts.md "Resume").
"""

from __future__ import annotations

import contextlib
import getpass
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional

from tally._writer_config import redacted

from tally._require import require

DEFAULT_PROJECT = "tally"
VIDEO_KEY = "media/play_video"
# The playback video a run directory may hold, uploaded when the sink finishes.
PLAY_VIDEO = "play_video.mp4"
# The W&B run id of the tally run, one line, in its run directory.
RUN_ID_FILE = "wandb_run_id"
# The W&B config key holding tally's record of the run (identity, host, logger facts).
TALLY_CONFIG_KEY = "tally"
# The x-axes every row carries: the event file's step (env steps, else the iteration) and its
# wall time; tally's rows also hold the iteration as ``Train/iteration``.
STEP_AXIS = "tally/step"
WALL_AXIS = "tally/wall_time"
# Seconds ``finish`` waits for ``wandb.finish`` before leaving it behind on a daemon thread.
DEFAULT_FINISH_TIMEOUT = 5.0


def import_wandb() -> Any:
    """``import wandb``, or an ImportError that says whether it is missing or broken."""
    return require("wandb", "logger='wandb' (the W&B SDK)", "wandb")


def _user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no user database in some containers
        return os.environ.get("USER", "unknown")


def _dedup(items: List[str]) -> List[str]:
    seen: Dict[str, None] = {}
    for t in items:
        if t and t not in seen:
            seen[t] = None
    return list(seen)


def wandb_config(run_doc: Mapping[str, Any]) -> Dict[str, Any]:
    """The W&B config of a run: the user's ``config=`` at the top level (a value that is not a
    mapping under ``config``), and tally's record of the run under ``tally`` unless the user's
    config has that key."""
    user = run_doc.get("config")
    if isinstance(user, Mapping):
        cfg: Dict[str, Any] = dict(user)
    elif user in (None, {}):
        cfg = {}
    else:
        cfg = {"config": user}
    cfg.setdefault(TALLY_CONFIG_KEY, dict(run_doc.get("run", {})))
    return cfg


def read_run_id(run_dir: Path) -> Optional[str]:
    """The W&B run id recorded in ``run_dir`` by an earlier logger of the run, if any."""
    try:
        text = (run_dir / RUN_ID_FILE).read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    return text or None


def write_run_id(run_dir: Path, run_id: str) -> None:
    """Record ``run_id`` in ``run_dir`` (atomically: a reader sees the old id or the new)."""
    tmp = run_dir / f".{RUN_ID_FILE}.tmp"
    tmp.write_text(run_id + "\n", encoding="utf-8")
    os.replace(tmp, run_dir / RUN_ID_FILE)


def init_kwargs(settings: Mapping[str, Any], run_doc: Mapping[str, Any], run_dir: Path) -> Dict[str, Any]:
    """The ``wandb.init`` keywords for a run: the user's settings over tally's defaults.

    Defaults (docs/contract/run-artifacts.md "W&B"): name = the run's ``name``, else
    ``{algo}__{task}__{run_dir.name}``; group = task, job_type = algo, tags = user tags +
    [algo, task, sim_backend, user-<os user>] (deduplicated); config = :func:`wandb_config`.
    A run directory that records a W&B run id (a resumed run) continues that run
    (``id=``, ``resume="allow"``).
    Empty values are left out so the SDK's own defaults and ``WANDB_*`` variables apply.
    """
    run = run_doc.get("run", {})
    algo, task, sim = run.get("algo", ""), run.get("task", ""), run.get("sim_backend", "")
    # Another writer's run (``tally sync``) has no algo or task: its directory names it.
    default_name = f"{algo}__{task}__{run_dir.name}" if algo or task else run_dir.name
    kw: Dict[str, Any] = {
        "project": settings.get("project") or os.environ.get("WANDB_PROJECT") or DEFAULT_PROJECT,
        "entity": settings.get("entity"),
        "group": settings.get("group") or task,
        "job_type": settings.get("job_type") or algo,
        "name": settings.get("name") or run.get("name") or default_name,
        "tags": _dedup(list(settings.get("tags") or []) + [algo, task, sim, f"user-{_user()}"]),
        "notes": settings.get("notes"),
        "mode": settings.get("mode"),
        "config": wandb_config(run_doc),
        # Absolute: the SDK's service process may have another working directory.
        "dir": str(run_dir.resolve()),
    }
    run_id = read_run_id(run_dir)
    if run_id is not None:
        kw["id"] = run_id
        kw["resume"] = "allow"
    return {k: v for k, v in kw.items() if v not in (None, "", [])}


@contextlib.contextmanager
def argv_redacted() -> Iterator[None]:
    """``sys.argv`` with its secrets redacted for the block, then put back: the W&B SDK reads
    it (its ``_args`` setting) when ``wandb.init`` hands the settings to its service, which
    writes it into the run's metadata."""
    argv = sys.argv
    sys.argv = [str(a) for a in redacted(list(argv))]
    try:
        yield
    finally:
        sys.argv = argv


def _stamp(path: Path) -> List[int]:
    """What tells one video file from another at the same path: its size and mtime."""
    st = path.stat()
    return [st.st_size, st.st_mtime_ns]


def within(fn: Any, timeout: Optional[float], what: str, who: str = "wandb") -> bool:
    """Run ``fn()`` on a daemon thread and wait at most ``timeout`` seconds (None: no limit);
    ``who`` names the tracker in the thread's name and the message (the MLflow and trackio
    sinks finish through it too).

    Returns whether it returned in time (re-raising its exception); a call still running is
    left behind and never keeps the process alive."""
    if timeout is None:
        fn()
        return True
    done, failed = threading.Event(), []

    def target() -> None:
        try:
            fn()
        except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
            failed.append(e)
        finally:
            done.set()

    threading.Thread(target=target, name=f"tally-{who}-finish", daemon=True).start()
    if not done.wait(timeout):
        print(f"tally: {who}: {what} did not return within {timeout:g} s; left behind", file=sys.stderr)
        return False
    if failed:
        raise failed[0]
    return True


class WandbSink:
    """A remote tally sink that logs each step of the run's event file to a W&B run."""

    name = "wandb"
    # Fed from the event file by a thread of its own, from a cursor in the run directory.
    remote = True

    def __init__(
        self,
        settings: Optional[Mapping[str, Any]] = None,
        finish_timeout: Optional[float] = DEFAULT_FINISH_TIMEOUT,
        finish_on_close: bool = False,
        init: Optional[Mapping[str, Any]] = None,
    ) -> None:
        self._wandb = import_wandb()
        self.settings: Dict[str, Any] = dict(settings or {})
        self.run: Any = None
        self.owned = False
        self.run_dir: Optional[Path] = None
        self._finished = False
        # The index of the next row: W&B's ``_step`` in a run tally owns.
        self._row = 0
        self.finish_timeout = finish_timeout
        # ``tally sync``: the run is finished when the last row is sent.
        self.finish_on_close = finish_on_close
        # ``wandb.init`` keywords taken as they are (``tally.SummaryWriter``'s), instead of
        # those :func:`init_kwargs` derives from the run directory.
        self.init = dict(init) if init is not None else None

    def start(self, run_dir: str) -> Optional[str]:
        """Open (or reuse) the W&B run for ``run_dir``; returns its URL (None offline).

        A directory without ``run_config.json`` (another writer's run sent by ``tally sync``)
        is named by its directory."""
        self.run_dir = Path(run_dir)
        try:
            with open(self.run_dir / "run_config.json", encoding="utf-8") as f:
                doc = json.load(f)
        except FileNotFoundError:
            doc = {"run": {"log_dir": str(self.run_dir)}}
        wandb = self._wandb
        if wandb.run is not None:
            self.run, self.owned = wandb.run, False
            self.run.config.update(wandb_config(doc), allow_val_change=True)
        else:
            kw = self.init if self.init is not None else init_kwargs(self.settings, doc, self.run_dir)
            with argv_redacted():
                self.run = wandb.init(**kw)
            self.owned = True
        write_run_id(self.run_dir, str(self.run.id))
        self._define_axes()
        run = doc.get("run", {})
        self.run.summary.update(
            {
                "algo": run.get("algo"),
                "task": run.get("task"),
                "sim_backend": run.get("sim_backend"),
                "log_dir": str(self.run_dir),
            }
        )
        return self.url

    @property
    def url(self) -> Optional[str]:
        """The run's URL (None for an offline run)."""
        if self.run is None:
            return None
        try:
            url = self.run.get_url() if hasattr(self.run, "get_url") else self.run.url
        except Exception:  # noqa: BLE001 - offline runs have no URL
            return None
        return str(url) if url else None

    @property
    def remote_run(self) -> Optional[str]:
        """The W&B run rows go to, ``entity/project/id`` (the sink's cursor belongs to it)."""
        if self.run is None:
            return None
        return f"{self.run.entity or ''}/{self.run.project or ''}/{self.run.id}"

    def _define_axes(self) -> None:
        """Declare the x-axes: every metric of a run tally owns plots against ``tally/step``
        (a launcher's own run keeps its own axes; its rows still carry tally's)."""
        self.run.define_metric(STEP_AXIS)
        self.run.define_metric(WALL_AXIS)
        if self.owned:
            self.run.define_metric("*", step_metric=STEP_AXIS)

    def resume_at(self, rows: int) -> None:
        """The rows W&B already acknowledged (the sink's cursor): the next row's index."""
        self._row = int(rows)

    def write(self, step: int, wall_time: float, iteration: int, scalars: Dict[str, float]) -> None:
        """One step of the event file (the sink's own thread): its scalars and x-axes.

        In a run tally owns, W&B's ``_step`` is the row's index, so a row sent again after a
        failure is one W&B already has and ignores; a launcher's run numbers rows itself."""
        row = dict(scalars)
        row[STEP_AXIS] = step
        row[WALL_AXIS] = wall_time
        if self.owned:
            self.run.log(row, step=self._row)
        else:
            self.run.log(row)
        self._row += 1

    def flush(self) -> None:
        """Nothing to do: the SDK streams each ``log`` to its service."""

    def close(self) -> None:
        """The last row was sent: ``tally sync`` finishes the run now; a logger's run is
        finished on the caller's thread after the final summary (``finish``)."""
        if self.finish_on_close:
            self.finish()

    def log_video(self, path: str, key: str = VIDEO_KEY) -> None:
        """Upload ``path`` as ``key`` (no step), record ``play_video_path`` in the summary and
        the upload in the run directory (so the same file is not uploaded again)."""
        if self.run is None or not os.path.isfile(path):
            return
        self.run.summary["play_video_path"] = path
        video = {key: self._wandb.Video(path, format="mp4")}
        if self.owned:
            # Joins the row W&B holds open, leaving the row numbering to the sink's thread.
            self.run.log(video, commit=False)
        else:
            self.run.log(video)
        self._record_upload(Path(path))

    def _uploads_file(self) -> Optional[Path]:
        """Where the videos sent to this W&B run are recorded, beside the sink's cursor."""
        return None if self.run_dir is None else self.run_dir / ".tally" / f"{self.name}.videos.json"

    def _uploads(self) -> Dict[str, Any]:
        """The videos uploaded so far: resolved path -> [size, mtime_ns] at upload."""
        f = self._uploads_file()
        if f is None or not f.is_file():
            return {}
        try:
            doc = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            print(f"tally: wandb: {f} is unreadable ({e}); videos are uploaded again", file=sys.stderr)
            return {}
        return doc if isinstance(doc, dict) else {}

    def _record_upload(self, video: Path) -> None:
        f = self._uploads_file()
        if f is None:
            return
        done = self._uploads()
        done[str(video.resolve())] = _stamp(video)
        f.parent.mkdir(parents=True, exist_ok=True)
        tmp = f.with_name(f".{f.name}.tmp")
        tmp.write_text(json.dumps(done, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, f)

    def _upload_play_video(self, base: Path) -> None:
        """Upload ``base/play_video.mp4`` unless this very file (path, size, mtime) was."""
        video = base / PLAY_VIDEO
        if not video.is_file() or self._uploads().get(str(video.resolve())) == _stamp(video):
            return
        try:
            self.log_video(str(video))
        except Exception as e:  # noqa: BLE001 - the run is still finished; sync retries
            print(f"tally: wandb: {video} was not uploaded ({e}); `tally sync {base} --to wandb` uploads it",
                  file=sys.stderr)

    def finish(self, run_dir: Optional[str] = None) -> None:
        """Upload the run's ``play_video.mp4`` if not yet uploaded, copy ``run_summary.json``
        into the run summary; finish the run if tally started it."""
        if self.run is None or self._finished:
            return
        self._finished = True
        base = Path(run_dir) if run_dir else self.run_dir
        if base is not None:
            self._upload_play_video(base)
        status = None
        if base is not None and (base / "run_summary.json").is_file():
            with open(base / "run_summary.json", encoding="utf-8") as f:
                summary = json.load(f)
            status = summary.get("status")
            self.run.summary.update(summary)
        if self.owned:
            code = 1 if status in ("failed", "collector_died") else 0
            within(lambda: self.run.finish(exit_code=code), self.finish_timeout, "wandb.finish()")
