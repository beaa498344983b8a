"""A writer's run configuration (docs/contract/integrations.md "A writer's configuration"):
what ``SummaryWriter(config=...)``, ``add_hparams``, a hyperparameter table given to
``add_text`` (CleanRL's) and the frameworks' config hooks record into ``run_config.json``'s
``config``, where ``tally.read_runs(config=True)`` finds it. The file is merged and written
atomically, secrets redacted, by ``tally._tally.record_config``; :func:`redacted` is the same
redaction for what a writer sends elsewhere (W&B's config, hparams)."""

from __future__ import annotations

import dataclasses
import json
import math
import os
from typing import Any, Dict, List, Mapping, Optional, Tuple

from tally._tally import ConfigError, flat_config, record_config, redact_json
from tally._tally import param_table as native_param_table


def jsonable(v: Any) -> Any:
    """``v`` as JSON data: mappings, sequences and plain values as they are, numpy and torch
    scalars as their Python value, configs by their ``to_dict()``, dataclasses and namespaces
    by their fields, anything else by its ``str``."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    if isinstance(v, Mapping):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if getattr(v, "ndim", None) == 0 and hasattr(v, "item"):
        return jsonable(v.item())
    if hasattr(v, "to_dict"):
        return jsonable(v.to_dict())
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return jsonable(dataclasses.asdict(v))
    if hasattr(v, "__dict__") and type(v).__name__ == "Namespace":
        return jsonable(vars(v))
    return str(v)


def redacted(value: Any) -> Any:
    """``value`` as JSON data (:func:`jsonable`) with every secret replaced by ``<redacted>``,
    the rules of ``run_config.json`` (docs/contract/run-artifacts.md "Secrets")."""
    return json.loads(redact_json(json.dumps(jsonable(value))))


def record(log_dir: str, update: Mapping[str, Any], what: str) -> None:
    """Merge ``update`` into ``log_dir/run_config.json``'s ``config`` (same keys replaced)."""
    if not isinstance(update, Mapping):
        raise ConfigError(f"{what}: a run configuration must be a dict, got {type(update).__name__}")
    os.makedirs(log_dir, exist_ok=True)
    record_config(log_dir, json.dumps(jsonable(update)))


def param_table(text: str) -> Optional[Dict[str, Any]]:
    """The parameters of a two-column markdown table headed ``|param|value|`` (what CleanRL
    logs as ``hyperparameters``), values read back as numbers, booleans and None where they
    spell one; ``None`` for any other text. The rule is the readers' own
    (``tally_read::param_table``), so a table reads the same whoever wrote it."""
    rows = native_param_table(text)
    return None if rows is None else json.loads(rows)


def tracker_params(run_dir: str) -> List[Tuple[str, Any]]:
    """The run's configuration as a tracker's params or config (docs/contract/remote-sinks.md
    "MLflow", "trackio"): ``run_config.json`` flattened, the user's ``config`` under the user's
    own keys (``lr``, as a native tracker run holds them), tally's facts about the run under
    ``tally.`` (``tally.run.algo``); another writer's hyperparameters as they are."""
    pairs = json.loads(flat_config(run_dir))
    if not os.path.isfile(os.path.join(run_dir, "run_config.json")):
        return [(str(k), v) for k, v in pairs]
    return [(k[len("config."):] if k.startswith("config.") else "tally." + k, v) for k, v in pairs]
