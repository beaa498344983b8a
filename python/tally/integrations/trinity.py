"""Trinity-RFT: a ``tally`` monitor in Trinity's monitor registry.

In the Trinity config, either name the class (works in every Ray actor, nothing to import)::

    monitor:
      monitor_type: tally.integrations.trinity.TallyMonitor

or import this module where Trinity builds its monitors (a file in Trinity's plugin directory,
``trinity run --plugin-dir DIR``, holding ``import tally.integrations.trinity``) and write::

    monitor:
      monitor_type: tally

The explorer and the trainer each write their own run, ``<checkpoint job dir>/monitor/tally/
<role>``, through a :class:`tally.Logger` with the ``rft`` profile: a key outside its namespace
is written as the run's own metric and a step logged again after a restart from a checkpoint
rewinds the run, so no name or step order ever raises into Trinity's loop; the explorer's
role-prefixed timings are renamed by one rule, the dicts Trinity logs at one step become one
step, and ``log_table`` writes a
markdown table TensorBoard's Text tab shows. ``monitor_args`` may add the W&B, MLflow and
trackio replicas of each role's run (``wandb``, ``mlflow``, ``trackio``: the Logger's settings
of the same names) and ``remote_finish_timeout`` (docs/contract/integrations.md "Trinity-RFT"). Importing this module imports neither Trinity nor torch: the monitor is
registered when Trinity's ``trinity.utils.monitor`` is (or already was) imported.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
import warnings
from types import ModuleType
from typing import Any, Dict, Mapping, Optional, Set, Tuple

from tally._require import require
from tally.integrations._atexit import close_at_exit

__all__ = ["TallyMonitor", "MONITOR_TYPE", "tally_key", "replica_kwargs"]

#: The name this module registers in Trinity's ``MONITOR`` registry.
MONITOR_TYPE = "tally"
_MONITOR_MODULE = "trinity.utils.monitor"

# Trinity 0.6.0 prefixes two explorer timings with the role ("explorer/time/...",
# "explore/time/..."); each role is its own run here, so the prefix is dropped.
_ROLE_PREFIXES = ("explorer/", "explore/")
# The replicas monitor_args may add, each the tally.Logger keyword of the same name.
_REPLICAS = ("wandb", "mlflow", "trackio")

_class: Optional[type] = None


def tally_key(key: str) -> str:
    """The rft key under which Trinity's ``key`` is written (docs/contract/integrations.md
    "Trinity-RFT"): the explorer's role-prefixed timings lose the prefix, every other key is
    kept as it is (docs/contract/rft.md "The rft profile" takes the step figures Trinity writes
    with no statistic; "Keys outside the namespace" the rest)."""
    for prefix in _ROLE_PREFIXES:
        if key.startswith(prefix + "time/"):
            key = key[len(prefix):]
    return key


def replica_kwargs(args: Mapping[str, Any], project: str, group: str, role: str) -> Dict[str, Any]:
    """The ``tally.Logger`` keywords of ``monitor_args``' replicas: ``wandb`` (``True`` or its
    settings) selects ``logger="wandb"``; ``mlflow`` and ``trackio`` add those replicas. Each
    defaults to where Trinity's own monitor of that tracker logs: W&B's project and group,
    MLflow's experiment and its run's ``group`` and ``role`` tags, trackio's project and group
    are Trinity's (the settings given win). The Logger checks every setting."""
    kw: Dict[str, Any] = {}
    defaults: Dict[str, Dict[str, Any]] = {
        "wandb": {"project": project, "group": group},
        "mlflow": {"experiment": project, "tags": {"group": group, "role": role}},
        "trackio": {"project": project, "group": group},
    }
    for name in _REPLICAS:
        given = args.get(name)
        if given is None or given is False:
            continue
        if given is not True and not isinstance(given, Mapping):
            raise ValueError(f"TallyMonitor: monitor_args[{name!r}] must be a mapping of {name} settings (or true), got {given!r}")
        settings = {**defaults[name], **(dict(given) if isinstance(given, Mapping) else {})}
        if name == "wandb":
            kw["logger"] = "wandb"
        kw[name] = settings
    if "remote_finish_timeout" in args:
        kw["remote_finish_timeout"] = args["remote_finish_timeout"]
    return kw


def _number(key: str, value: Any, step: int) -> float:
    from tally import ValueTypeError

    if hasattr(value, "item") and not isinstance(value, (int, float)):
        value = value.item()  # a numpy scalar or a one-element tensor, as Trinity's own format does
    if not isinstance(value, (int, float)):
        raise ValueTypeError(f"TallyMonitor.log: data[{key!r}] at step {step} is a {type(value).__name__} ({value!r:.80}), not a number")
    return value


def _markdown(frame: Any) -> str:
    """A DataFrame as a markdown table (cells on one line, ``|`` escaped)."""

    def cell(v: Any) -> str:
        return str(v).replace("\\", "\\\\").replace("|", "\\|").replace("\r\n", "<br>").replace("\n", "<br>")

    cols = [cell(c) for c in frame.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False, name=None)]
    return "\n".join(lines)


def _monitor_class() -> type:
    global _class
    if _class is None:
        trinity = require(_MONITOR_MODULE, "tally.integrations.trinity", "trinity-rft")
        import tally

        class TallyMonitor(trinity.Monitor):  # type: ignore[misc,name-defined]
            """Trinity's ``Monitor`` writing each role's metrics through a ``tally.Logger``
            (``rft`` profile); ``monitor_args``: ``panel`` (``"off"`` by default), ``wandb``,
            ``mlflow``, ``trackio`` (replica settings) and ``remote_finish_timeout``."""

            def __init__(self, project: str, group: str, name: str, role: str, config: Any = None) -> None:
                super().__init__(project=project, name=name, role=role, config=config)
                self.logger: Optional[tally.Logger] = None
                self._tables: Optional[tally.SummaryWriter] = None
                self._pending: Dict[str, float] = {}
                self._pending_step: Optional[int] = None
                self._clashes: Set[Tuple[str, str]] = set()
                if config is None:
                    raise TypeError("TallyMonitor needs Trinity's config (the run directory is config.monitor.cache_dir)")
                roles = (config.explorer.name, config.trainer.name)
                if role not in roles:
                    raise ValueError(f"TallyMonitor: role {role!r} is neither the explorer's ({roles[0]!r}) nor the trainer's ({roles[1]!r})")
                args = dict(config.monitor.monitor_args or {})
                panel = args.pop("panel", "off")
                unknown = sorted(set(args) - {*_REPLICAS, "remote_finish_timeout"})
                if unknown:
                    raise ValueError(
                        f"TallyMonitor: unknown monitor_args {unknown}; it takes 'panel', 'wandb', 'mlflow', 'trackio' "
                        "and 'remote_finish_timeout'"
                    )
                replicas = replica_kwargs(args, project, group, role)
                if not config.monitor.cache_dir:
                    raise ValueError("TallyMonitor: config.monitor.cache_dir is empty (Trinity's config check sets it)")
                self.run_dir = os.path.join(config.monitor.cache_dir, "tally", role)
                self._settings: Dict[str, Any] = dict(
                    algo=str(config.algorithm.algorithm_type),
                    task=project,
                    name=f"{name}_{role}",
                    profile="rft",
                    log_dir=self.run_dir,
                    panel=panel,
                    config=config.flatten(),
                    # A key outside the rft namespace is the run's own metric, never a
                    # refused step (docs/contract/rft.md "Keys outside the namespace").
                    outside_keys="user",
                    **replicas,
                )
                self._kinds: Dict[str, str] = {}
                self._written = False
                self._tables_purge: Optional[int] = None
                self.logger = self._open()
                # Trinity closes its monitor from __del__, which may come after tally's exit
                # hook has closed the logger: the open step is written at exit first.
                close_at_exit(self)

            def _open(self, resume_from: Optional[int] = None) -> Any:
                # resume=True: a Trinity job continued from its checkpoint appends to its run
                # (docs/contract/run-artifacts.md "Resume").
                return tally.Logger(resume=True, resume_from=resume_from, **self._settings)

            def log(self, data: Dict[str, Any], step: int, commit: bool = False) -> None:
                """Trinity's metrics of ``step``; dicts logged at one step are written as one.
                A key's name or a step's order never raises here (docs/contract/integrations.md
                "Trinity-RFT"): Trinity stops its loop on an exception."""
                if self.logger is None:
                    raise tally.ClosedError(f"TallyMonitor ({self.role}): log after close")
                step = int(step)
                values: Dict[str, Any] = {}
                for k, v in data.items():
                    key = tally_key(k)
                    if key != k and (key in data or key in values):
                        # Trinity gave the new name too (a workflow's model_version:last beside
                        # the explorer's rollout/model_version), or another key renames to it:
                        # this one keeps Trinity's own name.
                        if (k, key) not in self._clashes:
                            self._clashes.add((k, key))
                            warnings.warn(f"TallyMonitor: {k!r} is written under its own name: its tally name {key!r} is also a key of this step", stacklevel=2)
                        key = k
                    if self._checked(key):
                        values[key] = _number(k, v, step)
                if self._pending_step is None:
                    self._follow(step)
                elif step != self._pending_step:
                    # The new step is kept before the open one is written: when the logger
                    # refuses that one, the new one is not lost with it.
                    previous = (self._pending_step, self._pending)
                    self._pending_step, self._pending = step, values
                    try:
                        self._write(*previous)
                    finally:
                        self._follow(step)
                    return
                self._pending_step = step
                self._pending.update(values)  # a key logged twice at one step keeps the later value

            def _follow(self, step: int) -> None:
                """A step that does not advance past the run's last: Trinity restarted from a
                checkpoint, and the run is rewound before anything of ``step`` is written."""
                last = None if self.logger is None else self.logger.last_iteration
                if last is not None and step <= last:
                    self._rewind(step, last)

            def _checked(self, key: str) -> bool:
                """Whether ``key`` is written: an rft key, or the user's own metric (said once);
                a name no run can hold (a canonical tag) is dropped, said once."""
                kind = self._kinds.get(key)
                if kind is None:
                    kind, why = tally._tally.rft_key(key)
                    self._kinds[key] = kind
                    if kind == "user":
                        warnings.warn(
                            f"TallyMonitor ({self.role}): {key!r} is outside the rft namespace ({why}); "
                            "it is written as the run's own metric (docs/contract/integrations.md \"Trinity-RFT\")",
                            stacklevel=3,
                        )
                    elif kind == "refused":
                        warnings.warn(f"TallyMonitor ({self.role}): {key!r} is not written: {why}", stacklevel=3)
                return kind != "refused"

            def _submit(self) -> None:
                step, values = self._pending_step, self._pending
                self._pending, self._pending_step = {}, None
                self._write(step, values)

            def _write(self, step: Optional[int], values: Dict[str, Any]) -> None:
                if step is None or not values or self.logger is None:
                    return
                last = self.logger.last_iteration
                if last is not None and step <= last and not self._rewind(step, last):
                    return
                self.logger.step(step, metrics=values)
                self._written = True

            def _rewind(self, step: int, last: int) -> bool:
                """Trinity logs ``step`` again (restarted from its checkpoint): the run is
                reopened rewound to ``step - 1`` (docs/contract/run-artifacts.md "Resume"), so
                readers show one series with no step twice. False when no rewind can hold it."""
                if step < 1:
                    warnings.warn(f"TallyMonitor ({self.role}): step {step} is not written: the run already holds step {last}, and no run rewinds before step 0", stacklevel=4)
                    return False
                warnings.warn(
                    f"TallyMonitor ({self.role}): step {step} does not advance past {last}: Trinity restarted "
                    f"from a checkpoint; the run is rewound to step {step - 1}",
                    stacklevel=4,
                )
                logger, self.logger = self.logger, None
                assert logger is not None
                # Closed "failed" before its first step, a resume leaves the run as it found it.
                logger.close("completed" if self._written else "failed")
                if self._tables is not None:
                    self._tables.close()
                    self._tables = None
                self._tables_purge = step
                self._written = False
                self.logger = self._open(resume_from=step - 1)
                return True
            def log_table(self, table_name: str, experiences_table: Any, step: int) -> None:
                """The table as markdown text at ``step`` (TensorBoard's Text tab), in the
                ``tables`` series directory of the role's run."""
                if self.logger is None:
                    raise tally.ClosedError(f"TallyMonitor ({self.role}): log_table after close")
                self._follow(int(step))
                if not hasattr(experiences_table, "itertuples"):
                    raise TypeError(f"TallyMonitor.log_table({table_name!r}): expected a pandas DataFrame, got {type(experiences_table).__name__}")
                if self._tables is None:
                    # The Logger holds its run directory; a series directory under it is its own
                    # writer's (docs/contract/run-artifacts.md "Resume").
                    self._tables = tally.SummaryWriter(os.path.join(self.run_dir, "tables"), purge_step=self._tables_purge)
                self._tables.add_text(table_name, _markdown(experiences_table), int(step))
                self._tables.flush()

            def close(self) -> None:
                """Writes the step still pending and closes the run (idempotent)."""
                logger = getattr(self, "logger", None)
                if logger is None:
                    return
                try:
                    self._submit()
                finally:
                    self.logger = None
                    if self._tables is not None:
                        self._tables.close()
                        self._tables = None
                    logger.close()

            @classmethod
            def default_args(cls) -> Dict[str, Any]:
                return {"panel": "off"}

        TallyMonitor.__module__ = __name__
        _class = TallyMonitor
    return _class


def _register(module: ModuleType) -> None:
    cls = _monitor_class()
    if module.MONITOR.modules.get(MONITOR_TYPE) is not cls:
        module.MONITOR.register_module(MONITOR_TYPE, cls)


class _RegisterOnImport(importlib.abc.MetaPathFinder):
    """Registers the monitor right after Trinity's monitor module is first imported."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != _MONITOR_MODULE:
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None:
            return spec
        inner = spec.loader

        class Loader(importlib.abc.Loader):
            def create_module(self, spec: Any) -> Any:
                return inner.create_module(spec)

            def exec_module(self, module: ModuleType) -> None:
                inner.exec_module(module)
                try:
                    _register(module)
                except Exception as e:  # never make Trinity's own import fail
                    warnings.warn(f"tally.integrations.trinity: the 'tally' monitor was not registered: {e!r}", stacklevel=2)

        spec.loader = Loader()
        return spec


if _MONITOR_MODULE in sys.modules:
    _register(sys.modules[_MONITOR_MODULE])
elif not any(isinstance(f, _RegisterOnImport) for f in sys.meta_path):
    sys.meta_path.insert(0, _RegisterOnImport())


def __getattr__(name: str) -> Any:
    if name == "TallyMonitor":
        return _monitor_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
