"""``add_hparams``' arguments into TensorBoard's three HParams summaries, values redacted as
``run_config.json`` holds them (docs/contract/run-artifacts.md "Secrets")."""

from __future__ import annotations

from typing import Any, Dict, Mapping, Tuple, Union

from tally._tally import summaries as _summaries
from tally._writer_args import _media, _number
from tally._writer_config import redacted


def summaries(
    hparam_dict: Mapping[str, Any],
    metric_dict: Mapping[str, Any],
    hparam_domain_discrete: Union[None, Mapping[str, Any]],
    redact: bool,
) -> Tuple[bytes, bytes, bytes, Dict[str, float]]:
    """The experiment, session-start and session-end summaries, and ``metric_dict``'s values
    as numbers; refused (nothing written) when an argument is malformed."""
    if not isinstance(hparam_dict, Mapping) or not isinstance(metric_dict, Mapping):
        raise TypeError("add_hparams: hparam_dict and metric_dict must be dicts")
    domains = dict(hparam_domain_discrete or {})
    for k, d in domains.items():
        if k not in hparam_dict or not isinstance(d, (list, tuple)):
            raise TypeError(f"add_hparams: hparam_domain_discrete[{k!r}] must be a list of the values of hparam_dict[{k!r}]")
    values = [(str(k), _media().hparam_value(str(k), v)) for k, v in hparam_dict.items() if v is not None]
    doms = {str(k): [_media().hparam_value(str(k), x) for x in d] for k, d in domains.items()}
    if redact:
        # Each value redacted under its own name; a discrete domain's values as its value is.
        values = [(k, _redacted_hparam(k, v)) for k, v in values]
        doms = {k: [_redacted_hparam(k, x) for x in d] for k, d in doms.items()}
    metrics = {str(k): _number(str(k), v, "add_hparams: metric_dict") for k, v in metric_dict.items()}
    exp, start, end = _summaries.hparams(values, doms, list(metrics))
    return exp, start, end, metrics


def _redacted_hparam(key: str, v: Any) -> Any:
    """An hparam value as ``run_config.json`` holds it: a string redacted under its name."""
    return redacted({key: v})[key] if isinstance(v, str) else v
