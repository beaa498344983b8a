"""The MLflow replica: the run's event file sent through MLflow's own client.

A remote sink (docs/contract/remote-sinks.md "MLflow"): a thread of its own reads the run's
event file from the sink's cursor (``.tally/mlflow.cursor.json``) and calls :meth:`write` once
per step; the rows are held until the follower's ``flush`` at the end of each batch, then sent
with ``MlflowClient.log_batch`` (at most 1000 metrics per request, MLflow's limit), so the
cursor moves only past rows MLflow took. Each scalar is a metric at the event's step, its
timestamp the event's wall time in milliseconds: a row sent again after a failure is a metric
MLflow already holds with the same key, step, timestamp and value, which its store keeps once.

``run_config.json`` flattened (``tally.runs``' columns) becomes the run's params. At finish the
MLflow run is terminated with the status ``run_summary.json`` records (``FINISHED``, ``FAILED``,
``KILLED``; a run still ``running`` is left so). A name MLflow refuses is sent under the name
:func:`mlflow_name` gives it (docs/contract/remote-sinks.md "Names a tracker refuses").
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import re
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from types import ModuleType
from typing import Any, Dict, List, Mapping, Optional

from tally._require import require
from tally._tally import ConfigError
from tally._wandb import DEFAULT_FINISH_TIMEOUT, within
from tally._writer_config import redacted, tracker_params

# The settings ``mlflow={...}`` takes (docs/contract/remote-sinks.md "MLflow").
SETTINGS = ("tracking_uri", "experiment", "run_name", "tags")
DEFAULT_EXPERIMENT = "tally"
# The MLflow run id of the tally run, one line, in its run directory (a resumed run, a later
# follower and ``tally sync`` continue it).
RUN_ID_FILE = "mlflow_run_id"
# MLflow's limits (mlflow/utils/validation.py): metrics and params per ``log_batch``, a name's
# and a param value's length.
METRICS_PER_BATCH = 1000
PARAMS_PER_BATCH = 100
MAX_NAME = 250
MAX_PARAM_VALUE = 6000
# Seconds ``start`` waits for the tracking server to answer at all: a server that is down or
# hung is refused at once, naming it, instead of inside MLflow's own retries.
START_TIMEOUT = 10.0
# The characters MLflow accepts in a name on every platform: ``\w`` (letters, digits, ``_``),
# ``/ . - `` and space (MLflow also takes ``:`` except on Windows servers; tally does not).
_REFUSED = re.compile(r"[^/\w.\- ]")
# How MLflow's run statuses follow run_summary.json's.
STATUS = {"completed": "FINISHED", "failed": "FAILED", "collector_died": "FAILED", "interrupted": "KILLED"}


def import_mlflow() -> ModuleType:
    """``import mlflow``, or an ImportError that says whether it is missing or broken."""
    return require("mlflow", "mlflow={...} (the MLflow replica)", "mlflow")


def _accepted(name: str) -> bool:
    """Whether MLflow takes ``name`` as a metric or param key as it is."""
    if not name or len(name) > MAX_NAME or _REFUSED.search(name):
        return False
    norm = posixpath.normpath(name)
    return norm == name and norm != "." and not norm.startswith("..") and not norm.startswith("/")


def mlflow_name(tag: str) -> str:
    """The name ``tag`` is sent to MLflow under (docs/contract/remote-sinks.md "Names a tracker
    refuses"): itself when MLflow accepts it; with each ``@`` as ``_at_`` when that is all MLflow
    refuses (``mean@4`` → ``mean_at_4``, as Trinity's and verl's MLflow loggers name it);
    otherwise :func:`hashed_name`."""
    if _accepted(tag):
        return tag
    at = tag.replace("@", "_at_")
    if at != tag and _accepted(at):
        return at
    return hashed_name(tag)


def hashed_name(tag: str) -> str:
    """Every character MLflow refuses becomes ``_``, empty, ``.`` and ``..`` path segments become
    ``_``, and ``-`` and the first 8 hex digits of the tag's SHA-256 are appended (the name cut to
    fit 250 characters): two tags never share such a name and a tag always gets the same one."""
    parts = [p if p not in ("", ".", "..") else "_" for p in _REFUSED.sub("_", tag).split("/")]
    suffix = "-" + hashlib.sha256(tag.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    base = "/".join(parts)[: MAX_NAME - len(suffix)]
    # A cut may leave a trailing "/" or a "." segment: those become "_" too.
    base = "/".join(p if p not in ("", ".", "..") else "_" for p in base.split("/"))
    return base + suffix


def _param_value(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v)


def _public_uri(uri: str) -> str:
    """``uri`` without a user or password (the cursor and messages name the server only)."""
    p = urllib.parse.urlsplit(uri)
    if p.username is None and p.password is None:
        return uri
    host = p.hostname or ""
    netloc = host + (f":{p.port}" if p.port else "")
    return urllib.parse.urlunsplit((p.scheme, netloc, p.path, p.query, p.fragment))


def _probe(uri: str, timeout: float) -> None:
    """Refuse a tracking server that does not answer within ``timeout`` (any HTTP answer will
    do: only a refused, reset or silent connection is an error)."""
    if not uri.startswith(("http://", "https://")):
        return
    try:
        # Without its credentials: urllib takes `user:password@` for part of the host name.
        with urllib.request.urlopen(_public_uri(uri).rstrip("/") + "/health", timeout=timeout):
            return
    except urllib.error.HTTPError:
        return
    except (OSError, ValueError) as e:
        reason = getattr(e, "reason", e)
        raise ConnectionError(
            f"the MLflow tracking server {_public_uri(uri)} did not answer within {timeout:g} s ({reason}): "
            f"start it, or give another tracking_uri (or MLFLOW_TRACKING_URI)"
        ) from None


def check_settings(settings: Mapping[str, Any]) -> Dict[str, Any]:
    """``settings`` as a dict, each unknown key refused by name before anything is made."""
    if not isinstance(settings, Mapping):
        raise ConfigError(f"mlflow=: expected a dict of MLflow settings ({', '.join(SETTINGS)}), got {type(settings).__name__}")
    for k, v in settings.items():
        if k not in SETTINGS:
            raise ConfigError(f"mlflow['{k}']: unknown MLflow setting (known: {', '.join(SETTINGS)})")
        if k == "tags":
            _check_tags(v)
        elif v is not None and not isinstance(v, str):
            raise ConfigError(f"mlflow['{k}']: expected a string, got {type(v).__name__}")
    return dict(settings)


def _check_tags(tags: Any) -> None:
    """``tags``: the run's own tags, as ``mlflow.start_run(tags=...)`` takes them."""
    if tags is None:
        return
    if not isinstance(tags, Mapping):
        raise ConfigError(f"mlflow['tags']: expected a dict of tag names to strings, got {type(tags).__name__}")
    for name, value in tags.items():
        if not isinstance(name, str) or not isinstance(value, str):
            raise ConfigError(f"mlflow['tags'][{name!r}]: expected a string, got {type(value).__name__}")


class MlflowSink:
    """A remote tally sink that logs each step of the run's event file to an MLflow run."""

    name = "mlflow"
    # Fed from the event file by a thread of its own, from a cursor in the run directory.
    remote = True

    def __init__(self, settings: Optional[Mapping[str, Any]] = None, finish_timeout: Optional[float] = DEFAULT_FINISH_TIMEOUT) -> None:
        self.settings = check_settings(settings or {})
        self._mlflow = import_mlflow()
        uri = self.settings.get("tracking_uri") or os.environ.get("MLFLOW_TRACKING_URI")
        if not uri:
            raise ConfigError(
                "mlflow: no tracking server: give mlflow={'tracking_uri': ...} (tally sync: --tracking-uri) "
                "or set MLFLOW_TRACKING_URI"
            )
        self.tracking_uri: str = uri
        self.client: Any = None
        self.run_id: Optional[str] = None
        self.experiment_id: Optional[str] = None
        self.run_dir: Optional[Path] = None
        self.finish_timeout = finish_timeout
        # ``tally sync``: the run is terminated when the last row is sent.
        self.finish_on_close = False
        self._held: List[Any] = []
        self._renamed: Dict[str, str] = {}
        # Each name sent and the tag it holds.
        self._taken: Dict[str, str] = {}
        self._finished = False

    # -- start -----------------------------------------------------------------------------------
    def start(self, run_dir: str) -> Optional[str]:
        """Open the MLflow run of ``run_dir`` (the one its ``mlflow_run_id`` names on this
        server, else a new one in the experiment) and log its params. Returns None: the run
        summary's URL field is W&B's (the page is :attr:`url`)."""
        self.run_dir = Path(run_dir)
        _probe(self.tracking_uri, START_TIMEOUT)
        tracking = self._mlflow.tracking
        self.client = tracking.MlflowClient(tracking_uri=self.tracking_uri)
        doc = self._run_config()
        run_id = self._recorded_run()
        if run_id is None:
            run_id = self._create_run(doc)
        else:
            self.client.update_run(run_id, status="RUNNING")
        self.run_id = run_id
        tmp = self.run_dir / f".{RUN_ID_FILE}.tmp"
        tmp.write_text(run_id + "\n", encoding="utf-8")
        os.replace(tmp, self.run_dir / RUN_ID_FILE)
        self._log_params()
        return None

    def _run_config(self) -> Dict[str, Any]:
        assert self.run_dir is not None
        try:
            with open(self.run_dir / "run_config.json", encoding="utf-8") as f:
                doc = json.load(f)
        except FileNotFoundError:
            return {}
        return doc if isinstance(doc, dict) else {}

    def _recorded_run(self) -> Optional[str]:
        """The MLflow run an earlier sink of this run directory sent to, if this server has it."""
        assert self.run_dir is not None
        try:
            run_id = (self.run_dir / RUN_ID_FILE).read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return None
        if not run_id:
            return None
        try:
            run = self.client.get_run(run_id)
        except self._mlflow.exceptions.MlflowException:
            # Another server (or a deleted run): this one gets a run of its own, and the cursor,
            # which names its destination, starts it from the first row.
            return None
        self.experiment_id = str(run.info.experiment_id)
        return str(run_id)

    def _create_run(self, doc: Mapping[str, Any]) -> str:
        assert self.run_dir is not None
        exp_name = self.settings.get("experiment") or os.environ.get("MLFLOW_EXPERIMENT_NAME") or DEFAULT_EXPERIMENT
        exp = self.client.get_experiment_by_name(exp_name)
        self.experiment_id = str(exp.experiment_id) if exp is not None else str(self.client.create_experiment(exp_name))
        run = doc.get("run", {}) if isinstance(doc.get("run"), dict) else {}
        algo, task = run.get("algo", ""), run.get("task", "")
        default = f"{algo}__{task}__{self.run_dir.name}" if algo or task else self.run_dir.name
        name = self.settings.get("run_name") or run.get("name") or default
        # The tags MLflow's own start_run sets (the user, the source), as a native run has them.
        context = require("mlflow.tracking.context.registry", "mlflow={...} (the MLflow replica)", "mlflow")
        given = dict(self.settings.get("tags") or {})
        tags = context.resolve_tags({**given, "tally.log_dir": str(self.run_dir.resolve())})
        created = self.client.create_run(self.experiment_id, run_name=str(redacted(name)), tags=redacted(tags))
        return str(created.info.run_id)

    def _log_params(self) -> None:
        """``run_config.json`` flattened, as params: those the run has not yet. MLflow keeps a
        param's first value, so a resumed run whose configuration changed keeps it and says so."""
        assert self.run_dir is not None and self.run_id is not None
        pairs = tracker_params(str(self.run_dir))
        have = dict(self.client.get_run(self.run_id).data.params)
        params = []
        Param = self._mlflow.entities.Param
        for key, value in pairs:
            name, text = mlflow_name(str(key)), _param_value(value)
            if len(text) > MAX_PARAM_VALUE:
                print(f"tally: mlflow: param {key!r} is {len(text)} characters, MLflow keeps {MAX_PARAM_VALUE}: "
                      "cut to that (run_config.json holds it whole)", file=sys.stderr)
                text = text[:MAX_PARAM_VALUE]
            if name in have:
                if have[name] != text:
                    print(f"tally: mlflow: param {name!r} is {have[name]!r} in the MLflow run, {text!r} now; "
                          "MLflow keeps a param's first value", file=sys.stderr)
                continue
            params.append(Param(name, text))
        for i in range(0, len(params), PARAMS_PER_BATCH):
            self.client.log_batch(self.run_id, params=params[i : i + PARAMS_PER_BATCH], synchronous=True)

    # -- the sink's thread -----------------------------------------------------------------------
    @property
    def url(self) -> Optional[str]:
        """The run's page on the tracking server (None for a local store)."""
        if self.run_id is None or not self.tracking_uri.startswith(("http://", "https://")):
            return None
        return f"{_public_uri(self.tracking_uri).rstrip('/')}/#/experiments/{self.experiment_id}/runs/{self.run_id}"

    @property
    def remote_run(self) -> Optional[str]:
        """Where rows go, ``<tracking server>#<run id>`` (the sink's cursor belongs to it)."""
        return None if self.run_id is None else f"{_public_uri(self.tracking_uri)}#{self.run_id}"

    def resume_at(self, rows: int) -> None:
        """Rows held but not acknowledged are sent again from the cursor: drop them."""
        self._held.clear()

    def _name(self, tag: str) -> str:
        name = self._renamed.get(tag)
        if name is None:
            name = mlflow_name(tag)
            if self._taken.setdefault(name, tag) != tag:
                # Another tag of this run has that name (`x@4` beside `x_at_4`): never merged.
                name = hashed_name(tag)
                self._taken[name] = tag
            if name != tag:
                print(f"tally: mlflow: {tag!r} is sent as {name!r} (MLflow refuses the name; "
                      "docs/contract/remote-sinks.md \"Names a tracker refuses\")", file=sys.stderr)
            self._renamed[tag] = name
        return name

    def write(self, step: int, wall_time: float, iteration: int, scalars: Dict[str, float]) -> None:
        """One step of the event file: a metric per scalar at the step, held until ``flush``."""
        Metric = self._mlflow.entities.Metric
        ts = int(round(wall_time * 1000))
        for tag, v in scalars.items():
            self._held.append(Metric(self._name(tag), float(v), ts, int(step)))

    def flush(self) -> None:
        """Send the held metrics; the follower saves the cursor only once this returns."""
        while self._held:
            chunk = self._held[:METRICS_PER_BATCH]
            self.client.log_batch(self.run_id, metrics=chunk, synchronous=True)
            del self._held[: len(chunk)]

    def close(self) -> None:
        """The last row was sent: ``tally sync`` terminates the run now; a logger's is
        terminated on the caller's thread after the final summary (``finish``)."""
        if self.finish_on_close:
            self.finish()

    def finish(self, run_dir: Optional[str] = None) -> None:
        """Terminate the MLflow run with the status of ``run_summary.json`` (``FINISHED`` for a
        directory without one: another writer's, a SummaryWriter's), waiting for the server at
        most ``finish_timeout`` seconds."""
        if self.client is None or self.run_id is None or self._finished:
            return
        self._finished = True
        base = Path(run_dir) if run_dir else self.run_dir
        status = "completed"
        if base is not None and (base / "run_summary.json").is_file():
            with open(base / "run_summary.json", encoding="utf-8") as f:
                status = str(json.load(f).get("status"))
        if status == "running":
            return
        to = STATUS.get(status, "FAILED")
        client, run_id = self.client, self.run_id
        within(lambda: client.set_terminated(run_id, status=to), self.finish_timeout, "set_terminated()", who="mlflow")

