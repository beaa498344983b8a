"""The trackio replica: the run's event file sent into trackio's local store.

A remote sink (docs/contract/remote-sinks.md "trackio"): a thread of its own reads the run's
event file from the sink's cursor (``.tally/trackio.cursor.json``) and calls :meth:`write` once
per step. The trackio run is opened with ``trackio.init`` (the run's flattened
``run_config.json`` as its config, ``resume="allow"`` so a resumed tally run or ``tally sync``
continues it) and finished with its ``finish()``. The rows are held until the follower's
``flush`` and then written by the call trackio's own ``log`` ends in, its local store's
``bulk_log``, synchronously and with a log id per row: ``trackio.log`` only queues a row for a
thread of trackio's that drops it on a failure, and names it with a random id, so it could
neither acknowledge a row nor recognise one sent again. Here a failed write raises (the rows
stay in the event file and are sent again) and a row sent again is one trackio already holds.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from datetime import datetime, timezone
from pathlib import Path
from types import ModuleType
from typing import Any, Dict, List, Mapping, Optional, Tuple

from tally._require import require
from tally._tally import ConfigError
from tally._wandb import DEFAULT_FINISH_TIMEOUT, within
from tally._writer_config import redacted, tracker_params

# The settings ``trackio={...}`` takes (docs/contract/remote-sinks.md "trackio").
SETTINGS = ("project", "name", "group")
DEFAULT_PROJECT = "tally"
# The trackio project and run of the tally run, in its run directory (a resumed run, a later
# follower and ``tally sync`` continue it).
RUN_FILE = "trackio_run.json"


def import_trackio() -> ModuleType:
    """``import trackio``, or an ImportError that says whether it is missing or broken."""
    return require("trackio", "trackio={...} (the trackio replica)", "trackio")


def trackio_name(tag: str, reserved: Tuple[str, ...]) -> str:
    """The key ``tag`` is stored under: trackio's own rule for the keys it reserves
    (``trackio.utils.RESERVED_KEYS``, and any key starting with ``__``) is ``__`` + the key,
    which ``trackio.log`` applies too (docs/contract/remote-sinks.md "Names a tracker
    refuses")."""
    return "__" + tag if tag in reserved or tag.startswith("__") else tag


def check_settings(settings: Mapping[str, Any]) -> Dict[str, Any]:
    """``settings`` as a dict, each unknown key refused by name before anything is made."""
    if not isinstance(settings, Mapping):
        raise ConfigError(f"trackio=: expected a dict of trackio settings ({', '.join(SETTINGS)}), got {type(settings).__name__}")
    for k, v in settings.items():
        if k not in SETTINGS:
            raise ConfigError(f"trackio['{k}']: unknown trackio setting (known: {', '.join(SETTINGS)})")
        if v is not None and not isinstance(v, str):
            raise ConfigError(f"trackio['{k}']: expected a string, got {type(v).__name__}")
    return dict(settings)


class TrackioSink:
    """A remote tally sink that logs each step of the run's event file to a local trackio run."""

    name = "trackio"
    # Fed from the event file by a thread of its own, from a cursor in the run directory.
    remote = True

    def __init__(self, settings: Optional[Mapping[str, Any]] = None, finish_timeout: Optional[float] = DEFAULT_FINISH_TIMEOUT) -> None:
        self.settings = check_settings(settings or {})
        self._trackio = import_trackio()
        self._storage = require("trackio.sqlite_storage", "trackio={...} (the trackio replica)", "trackio").SQLiteStorage
        self._reserved = tuple(require("trackio.utils", "trackio={...} (the trackio replica)", "trackio").RESERVED_KEYS)
        self.run: Any = None
        self.owned = False
        self.run_dir: Optional[Path] = None
        self.finish_timeout = finish_timeout
        # ``tally sync``: the run is finished when the last row is sent.
        self.finish_on_close = False
        self._held: List[Tuple[int, int, float, Dict[str, float]]] = []
        self._row = 0
        self._names: Dict[str, str] = {}
        # The run's config, stored with the first rows written (as ``trackio.log`` stores it).
        self._config: Optional[Dict[str, Any]] = None
        self._finished = False

    def start(self, run_dir: str) -> Optional[str]:
        """Open the trackio run of ``run_dir`` (continued when it exists in the project), or
        reuse a trackio run already open in this process (never finished by tally)."""
        self.run_dir = Path(run_dir)
        current = self._trackio.context_vars.current_run.get()
        if current is not None:
            self.run, self.owned = current, False
            return None
        recorded = self._recorded()
        project = self.settings.get("project") or recorded.get("project") or DEFAULT_PROJECT
        same = recorded.get("project") == project
        name = self.settings.get("name") or (recorded.get("name") if same else None) or self._default_name()
        config = dict(tracker_params(str(self.run_dir)))
        self.run = self._trackio.init(
            project=project,
            name=str(redacted(name)),
            group=self.settings.get("group"),
            config=config,
            resume="allow",
            auto_log_gpu=False,
            auto_log_cpu=False,
        )
        self.owned = True
        # What trackio.init holds as the run's config: ours, with the group and metadata it adds
        # (_Group, _Created, _Username), stored with the first rows as trackio.log stores it.
        self._config = dict(self.run.config) if isinstance(getattr(self.run, "config", None), dict) else config
        tmp = self.run_dir / f".{RUN_FILE}.tmp"
        tmp.write_text(json.dumps({"project": self.run.project, "name": self.run.name}) + "\n", encoding="utf-8")
        os.replace(tmp, self.run_dir / RUN_FILE)
        return None

    def _recorded(self) -> Dict[str, str]:
        """The trackio project and run an earlier sink of this run directory sent to."""
        assert self.run_dir is not None
        try:
            doc = json.loads((self.run_dir / RUN_FILE).read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return {}
        return {k: str(v) for k, v in doc.items() if k in ("project", "name") and v} if isinstance(doc, dict) else {}

    def _default_name(self) -> str:
        assert self.run_dir is not None
        try:
            with open(self.run_dir / "run_config.json", encoding="utf-8") as f:
                doc = json.load(f)
        except FileNotFoundError:
            return self.run_dir.name
        run = doc.get("run", {}) if isinstance(doc, dict) and isinstance(doc.get("run"), dict) else {}
        algo, task = run.get("algo", ""), run.get("task", "")
        return str(run.get("name") or (f"{algo}__{task}__{self.run_dir.name}" if algo or task else self.run_dir.name))

    @property
    def remote_run(self) -> Optional[str]:
        """Where rows go, ``<trackio dir>#<project>/<run name>`` (the cursor belongs to it)."""
        if self.run is None:
            return None
        return f"{self._trackio.utils.TRACKIO_DIR}#{self.run.project}/{self.run.name}"

    def resume_at(self, rows: int) -> None:
        """The next row's index (the cursor's count); rows held but not written are sent again."""
        self._row = int(rows)
        self._held.clear()

    def _name(self, tag: str) -> str:
        name = self._names.get(tag)
        if name is None:
            name = trackio_name(tag, self._reserved)
            if name != tag:
                print(f"tally: trackio: {tag!r} is stored as {name!r} (trackio reserves the key; "
                      "docs/contract/remote-sinks.md \"Names a tracker refuses\")", file=sys.stderr)
            self._names[tag] = name
        return name

    def write(self, step: int, wall_time: float, iteration: int, scalars: Dict[str, float]) -> None:
        """One step of the event file, held until ``flush``."""
        row = {self._name(k): float(v) for k, v in scalars.items()}
        self._held.append((self._row, int(step), wall_time, row))
        self._row += 1

    def _log_id(self, row: int) -> str:
        """Row ``row`` of this run's rows, the same id whenever it is sent."""
        return hashlib.sha256(f"{self.remote_run}#{row}".encode()).hexdigest()[:32]

    def flush(self) -> None:
        """Write the held rows into trackio's store; the follower saves the cursor only once this
        returns."""
        if not self._held or self.run is None:
            return
        held = self._held
        self._storage.bulk_log(
            project=self.run.project,
            run=self.run.name,
            run_id=getattr(self.run, "id", None),
            metrics_list=[r[3] for r in held],
            steps=[r[1] for r in held],
            timestamps=[datetime.fromtimestamp(r[2], timezone.utc).isoformat() for r in held],
            log_ids=[self._log_id(r[0]) for r in held],
            config=self._trackio.utils.to_json_safe(self._config) if self._config else None,
        )
        self._held = []
        self._config = None

    def close(self) -> None:
        """The last row was sent: ``tally sync`` finishes the run now."""
        if self.finish_on_close:
            self.finish()

    def finish(self, run_dir: Optional[str] = None) -> None:
        """Finish a trackio run this sink opened, waiting at most ``finish_timeout`` seconds."""
        if self.run is None or self._finished or not self.owned:
            return
        self._finished = True
        run = self.run
        # As trackio.finish() does: the process's current run is no longer this one (set here,
        # on the thread that opened it: trackio keeps it in a context variable).
        current = self._trackio.context_vars.current_run
        if current.get() is run:
            current.set(None)
        within(run.finish, self.finish_timeout, "trackio.finish()", who="trackio")

