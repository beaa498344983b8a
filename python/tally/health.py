"""Health rules for a :class:`tally.Logger` (docs/contract/health.md "In the logger").

The default rules are on for the canonical tags whose meaning tally knows. Add your own, or turn
one default off, with ``health=[...]``::

    import tally

    log = tally.Logger(
        algo="ppo", task="go2",
        health=[tally.health.above("charts/kl", 0.05), tally.health.off("flat_for")],
        stop_on=["nonfinite", "stall"],
        on_health=lambda f: print("tally found", f.rule, f.tag, f.first_step),
    )

``health=False`` turns every rule off. Each helper makes one entry of the rules file
(docs/contract/health.md "The rules file"); the logger checks them when it is built and refuses
a bad one with a ``tally.ConfigError`` naming it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

__all__ = [
    "Rule",
    "Off",
    "Finding",
    "Health",
    "above",
    "below",
    "nonfinite",
    "flat_for",
    "spike",
    "divergence",
    "collapse",
    "throughput",
    "stall",
    "disk",
    "ranks",
    "overhead",
    "sink",
    "off",
    "RULES",
]

#: Every rule's name, as ``stop_on`` and :func:`off` take it (``spike`` is ``divergence``).
RULES = ("nonfinite", "divergence", "spike", "collapse", "flat_for", "above", "below", "stall", "throughput", "disk", "ranks", "overhead", "sink")

Tags = Union[str, Sequence[str]]


@dataclass(frozen=True)
class Rule:
    """One rule on some tags: ``kind``, the tag globs (``*`` any run of characters) and the
    rule's parameters (those left out keep their defaults)."""

    kind: str
    tag: Optional[Tuple[str, ...]]
    params: Dict[str, Any] = field(default_factory=dict)

    def entry(self) -> Dict[str, Any]:
        """The rules file's entry for this rule."""
        e: Dict[str, Any] = {"kind": self.kind}
        if self.tag is not None:
            e["tag"] = list(self.tag)
        e.update(self.params)
        return e

    def __repr__(self) -> str:
        args = [repr(self.tag[0] if len(self.tag) == 1 else list(self.tag))] if self.tag is not None else []
        args += [f"{k}={v!r}" for k, v in self.params.items()]
        return f"tally.health.{self.kind}({', '.join(args)})"


@dataclass(frozen=True)
class Off:
    """A rule turned off, the defaults' included (``stall`` for the run's stall rule)."""

    kind: str

    def __repr__(self) -> str:
        return f"tally.health.off({self.kind!r})"


@dataclass(frozen=True)
class Finding:
    """One rule firing on one tag (``tag`` is ``""`` for ``stall``), all its firings folded
    together: the step of the first and the latest, how many values it fired on, the latest
    value, and what the first firing saw."""

    rule: str
    tag: str
    first_step: int
    last_step: int
    count: int
    last_value: float
    message: str


class Health:
    """``log.health``: the run's findings so far (``findings``, a list of :class:`Finding`,
    in the order they first fired)."""

    __slots__ = ("_log",)

    def __init__(self, log: Any) -> None:
        self._log = log

    @property
    def findings(self) -> List[Finding]:
        return [Finding(**f) for f in self._log._health_findings()]

    def __repr__(self) -> str:
        return f"<tally.health.Health findings={self.findings!r}>"


def _tags(tag: Tags, helper: str) -> Tuple[str, ...]:
    tags = (tag,) if isinstance(tag, str) else tuple(tag)
    if not tags or not all(isinstance(t, str) for t in tags):
        raise TypeError(f"tally.health.{helper}: tag must be a tag glob or a list of them, not {tag!r}")
    return tags


def _rule(kind: str, tag: Tags, **params: Any) -> Rule:
    return Rule(kind, _tags(tag, kind), {k: v for k, v in params.items() if v is not None})


def above(tag: Tags, value: float) -> Rule:
    """Fires on a value of ``tag`` greater than ``value``."""
    return _rule("above", tag, value=value)


def below(tag: Tags, value: float) -> Rule:
    """Fires on a value of ``tag`` less than ``value``."""
    return _rule("below", tag, value=value)


def nonfinite(tag: Tags) -> Rule:
    """Fires on a NaN or ±inf value of ``tag`` (on by default for every tag)."""
    return _rule("nonfinite", tag)


def flat_for(tag: Tags, for_values: Optional[int] = None) -> Rule:
    """Fires when ``tag`` stays exactly unchanged for ``for_values`` values while steps
    advance, unless it holds at a whole-number best (a solved task)."""
    return _rule("flat_for", tag, for_values=for_values)


def spike(
    tag: Tags,
    z: Optional[float] = None,
    window: Optional[int] = None,
    min_history: Optional[int] = None,
    rel_floor: Optional[float] = None,
    refresh: Optional[int] = None,
    for_values: Optional[int] = None,
) -> Rule:
    """Fires on ``for_values`` values of ``tag`` in a row whose robust z-score against their
    trailing window passes ``z`` (the ``divergence`` rule)."""
    return _rule("divergence", tag, z=z, window=window, min_history=min_history, rel_floor=rel_floor, refresh=refresh,
                 for_values=for_values)  # fmt: skip


divergence = spike


def collapse(
    tag: Tags,
    eps: Optional[float] = None,
    for_values: Optional[int] = None,
    fraction: Optional[float] = None,
    early_values: Optional[int] = None,
) -> Rule:
    """Fires when ``tag`` has fallen to ``fraction`` of its early level (the mean of its first
    ``early_values`` values) or past zero, for ``for_values`` consecutive values; a tag whose
    early level is within ``eps`` of 0 never fires."""
    return _rule("collapse", tag, eps=eps, for_values=for_values, fraction=fraction, early_values=early_values)


def throughput(
    tag: Tags,
    fraction: Optional[float] = None,
    window: Optional[int] = None,
    min_history: Optional[int] = None,
    for_seconds: Optional[float] = None,
) -> Rule:
    """Fires when the run's pace (steps per wall second between values of ``tag``) stays below
    ``fraction`` × its running median for ``for_seconds``."""
    return _rule("throughput", tag, fraction=fraction, window=window, min_history=min_history, for_seconds=for_seconds)


def stall(k: Optional[float] = None, min_gap_s: Optional[float] = None, min_history: Optional[int] = None) -> Rule:
    """Replaces the run's stall rule: no new step for ``k`` × the median gap between steps,
    and at least ``min_gap_s`` seconds."""
    params = {"k": k, "min_gap_s": min_gap_s, "min_history": min_history}
    return Rule("stall", None, {n: v for n, v in params.items() if v is not None})


def disk(min_free_mb: Optional[float] = None) -> Rule:
    """Replaces the run's disk rule: less than ``min_free_mb`` MiB free on the filesystem of the
    run directory (checked by the logger's writer thread, docs/contract/health.md "Disk")."""
    params = {"min_free_mb": min_free_mb}
    return Rule("disk", None, {n: v for n, v in params.items() if v is not None})


def ranks(
    ratio: Optional[float] = None,
    min_excess_s: Optional[float] = None,
    for_steps: Optional[int] = None,
) -> Rule:
    """Replaces the run's ranks rule: a straggler is a rank whose iteration time is above
    ``ratio`` × the other ranks' mean, by ``min_excess_s`` seconds, for ``for_steps`` steps
    (docs/contract/health.md "Ranks"; judged by a logger given every rank's step)."""
    params = {"ratio": ratio, "min_excess_s": min_excess_s, "for_steps": for_steps}
    return Rule("ranks", None, {n: v for n, v in params.items() if v is not None})


def overhead(
    budget: Optional[float] = None,
    window: Optional[int] = None,
    for_seconds: Optional[float] = None,
) -> Rule:
    """Replaces the run's overhead rule: tally's share of the iteration on the step's thread
    (the time inside ``step()`` over the time from one call to the next, summed over blocks of
    ``window`` written steps) above ``budget`` for ``for_seconds`` (docs/contract/health.md
    "Overhead")."""
    params = {"budget": budget, "window": window, "for_seconds": for_seconds}
    return Rule("overhead", None, {n: v for n, v in params.items() if v is not None})


def sink(max_lag_s: Optional[float] = None) -> Rule:
    """Replaces the run's sink rule: a remote sink (W&B, MLflow, trackio) whose oldest row of
    the event file not yet acknowledged has waited more than ``max_lag_s`` seconds (checked by
    the logger's writer thread, docs/contract/health.md "Sink")."""
    params = {"max_lag_s": max_lag_s}
    return Rule("sink", None, {n: v for n, v in params.items() if v is not None})


def off(kind: str) -> Off:
    """Turns the rule ``kind`` off (the defaults' and any added before it in the list)."""
    return Off(kind)


def _rules_document(health: Any) -> Optional[List[Tuple[str, str, Dict[str, Any]]]]:
    """What ``Logger(health=...)`` means, for the logger: ``None`` for the defaults alone, else
    the entries in order, each ``(repr, "off" | "rule", entry)``; ``health=False`` is an
    ``off`` of every rule."""
    if health is None or health is True:
        return None
    if health is False:
        return [("health=False", "off", {"off": k}) for k in RULES if k != "spike"]
    if isinstance(health, (Rule, Off)):
        health = [health]
    if isinstance(health, (str, bytes, dict)) or not hasattr(health, "__iter__"):
        raise TypeError(
            f"Logger(health=...): expected True, False or a list of tally.health rules, not {health!r}"
        )
    out: List[Tuple[str, str, Dict[str, Any]]] = []
    for i, item in enumerate(health):
        if isinstance(item, Off):
            out.append((f"health[{i}] {item!r}", "off", {"off": item.kind}))
        elif isinstance(item, Rule):
            out.append((f"health[{i}] {item!r}", "rule", item.entry()))
        else:
            raise TypeError(
                f"Logger(health=...): health[{i}] is {item!r}, not a tally.health rule "
                "(tally.health.above(...), below, nonfinite, flat_for, spike, collapse, throughput, stall, off)"
            )
    return out
