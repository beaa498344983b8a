"""A ``SummaryWriter``'s mirrors over W&B, MLflow and trackio, fed from its event files
(docs/contract/remote-sinks.md "SummaryWriter"): their settings checked, W&B's run arguments,
and the writer closed at exit while one follows it."""

from __future__ import annotations

import os
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Tuple

from tally._mlflow import MlflowSink
from tally._mlflow import check_settings as _mlflow_check
from tally._mlflow import import_mlflow
from tally._tally import ConfigError
from tally._trackio import TrackioSink
from tally._trackio import check_settings as _trackio_check
from tally._trackio import import_trackio
from tally._wandb import DEFAULT_PROJECT, read_run_id
from tally._writer_config import redacted

if TYPE_CHECKING:
    from tally.summary_writer import SummaryWriter


def checked_replicas(
    mlflow: Optional[Mapping[str, Any]], trackio: Optional[Mapping[str, Any]], write_to_disk: bool
) -> List[Tuple[Any, Mapping[str, Any]]]:
    """The MLflow and trackio replicas asked for, each with its settings, checked before any
    file is made (docs/contract/remote-sinks.md "MLflow", "trackio")."""
    replicas: List[Tuple[Any, Mapping[str, Any]]] = []
    for kind, settings in ((MlflowSink, mlflow), (TrackioSink, trackio)):
        if settings is None:
            continue
        if not write_to_disk:
            raise ConfigError(f"{kind.name}= with write_to_disk=False: it is fed from the event file, which is not written")
        replicas.append((kind, _mlflow_check(settings) if kind is MlflowSink else _trackio_check(settings)))
        # The package too: a replica that cannot be made leaves no writer directory behind.
        import_mlflow() if kind is MlflowSink else import_trackio()
    return replicas


def wandb_init(settings: Dict[str, Any], log_dir: str) -> Dict[str, Any]:
    """``wandb.init``'s arguments for a writer of ``log_dir``: ``settings`` over the defaults."""
    kw: Dict[str, Any] = {
        "project": settings.pop("project", None) or os.environ.get("WANDB_PROJECT") or DEFAULT_PROJECT,
        "name": settings.pop("name", None) or os.path.basename(os.path.abspath(log_dir)),
        "config": {"log_dir": log_dir},
        "dir": os.path.abspath(log_dir),
    }
    kw.update({k: v for k, v in settings.items() if v not in (None, "", [])})
    # What W&B stores and shows: redacted as run_config.json is (docs/contract/run-artifacts.md
    # "Secrets"); `dir`, `id`, `settings` and the like are passed as given.
    for k in ("config", "name", "notes", "tags", "group", "job_type"):
        if k in kw:
            kw[k] = redacted(kw[k])
    run_id = read_run_id(Path(log_dir))
    if run_id is not None and "id" not in kw:
        # An earlier writer of this log_dir sent to that run: continue it, as its cursor says.
        kw.update(id=run_id, resume="allow")
    return kw


def close_if_alive(ref: "weakref.ReferenceType[SummaryWriter]") -> None:
    writer = ref()
    if writer is not None:
        writer.close()
