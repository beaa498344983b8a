"""Reading runs back as Arrow tables: :func:`read`, :func:`read_runs`, :func:`runs` and
:func:`compare`.

The event files are read in Rust (``tally._tally.read_columns``) with the GIL released: a
directory's event files are one run (a resumed run's files, ordered by first wall time), read
as TensorBoard reads them (docs/contract/consumers.md "A run's event files"): a purge marker
drops the earlier files' points from its step on, a step going back across files is kept; both
are said as warnings naming the files, as is a truncated final record. A corrupt record raises
:class:`tally.StorageError` naming the file and byte offset. The columns come back as
Rust-owned buffers that pyarrow wraps in place, one record batch per chunk read (a large run,
or a thread's share of a large file, is a chunk as read: never copied into one array); ``run``
and ``tag`` are dictionary-encoded, every chunk sharing one dictionary. pyarrow is imported
only here, when a table is asked for.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from tally._require import require
from tally._tally import ColumnBuffer, StorageError, _cloud_shown, _mirror, compare_runs, flat_config, read_columns, runs_table, sql_query

PathLike = Union[str, "os.PathLike[str]"]


class TruncatedEventFileWarning(RuntimeWarning):
    """An event file ends inside a record (a writer killed mid-record, a live writer, or a
    file cut short): its rows up to the last complete record were read. The message names the
    file and the byte offset of the incomplete record. Make it an error with
    ``warnings.simplefilter("error", TruncatedEventFileWarning)``."""


class StepsGoBackWarning(RuntimeWarning):
    """A run's file holds points whose steps do not pass a step an earlier file of the same
    run reached, and no purge marker drops the earlier ones (a script run twice into one
    directory, an evaluation series logged at earlier steps): they are kept, as TensorBoard
    draws them. The message names the file, the first such step, how many points, and the
    earlier file. ``strict=True`` refuses such a run instead."""


class PurgedPointsWarning(RuntimeWarning):
    """A purge marker (what ``purge_step`` and a rewinding resume write) dropped an earlier
    file's points from its step on, as TensorBoard drops them: the message names both files,
    the step and how many points."""


class UnreadableRunWarning(RuntimeWarning):
    """:func:`read_runs` skipped a run it could not read (the message is the reader's);
    ``errors="raise"`` raises instead."""


_WARNINGS = {
    "truncated_tail": ("truncated tail", TruncatedEventFileWarning),
    "steps_back": ("steps going back", StepsGoBackWarning),
    "purged": ("purge", PurgedPointsWarning),
}


def _local(path: PathLike) -> PathLike:
    """``path`` itself, or for an object-store URL (``s3://``, ``gs://``, ``az://``, ...) its
    mirror's local directory, polled once (docs/contract/object-storage.md): a URL is never
    taken as a local path."""
    text = os.fspath(path)
    return _mirror(text) if "://" in text else path


def _naming_urls(call: Any, *args: Any) -> Any:
    """``call(*args)``, a ``StorageError`` naming a mirror's file raised naming its URL."""
    try:
        return call(*args)
    except StorageError as e:
        shown = _cloud_shown(str(e))
        if shown == str(e):
            raise
        raise StorageError(shown) from None


def _read_columns(paths: List[PathLike], tags: Optional[List[str]], strict: bool, skip: bool = False) -> Dict[str, Any]:
    _check_strict(strict)
    cols: Dict[str, Any] = _naming_urls(read_columns, paths, tags, strict, skip)
    _warn_findings(cols, stacklevel=4)
    return cols


def _check_strict(strict: Any) -> None:
    if not isinstance(strict, bool):
        raise TypeError(f"tally.read: strict must be True or False, got {type(strict).__name__} {strict!r}")


def _warn_findings(found: Dict[str, Any], stacklevel: int) -> None:
    """The reader's damage and skipped runs as warnings, each pointing at the caller of
    tally.read / read_runs / runs (``stacklevel`` frames up)."""
    for file, offset, kind, detail in found["damage"]:
        what, category = _WARNINGS.get(kind, (kind, RuntimeWarning))
        text = _cloud_shown(f"{file}: {what} at byte {offset}: {detail}")
        warnings.warn(text, category, stacklevel=stacklevel)
    for run, why in found["skipped"]:
        warnings.warn(_cloud_shown(f"{run}: skipped: {why}"), UnreadableRunWarning, stacklevel=stacklevel)


def _pyarrow(who: str) -> ModuleType:
    return require("pyarrow", f"{who} (which returns a pyarrow Table)", "pyarrow")


def _paths(paths: Union[PathLike, Iterable[PathLike]]) -> List[PathLike]:
    if isinstance(paths, (str, os.PathLike)):
        return [_local(paths)]
    if isinstance(paths, bytes):
        raise TypeError(f"tally.read: paths must be str or os.PathLike, got bytes {paths!r}")
    out = list(paths)
    if not out:
        raise ValueError("tally.read: no path given (pass an event file, a directory, or a list of them)")
    for i, p in enumerate(out):
        if not isinstance(p, (str, os.PathLike)):
            raise TypeError(f"tally.read: paths[{i}] must be str or os.PathLike, got {type(p).__name__} {p!r}")
    return [_local(p) for p in out]


def _tags(tags: Union[str, Iterable[str], None]) -> Optional[List[str]]:
    if tags is None:
        return None
    if isinstance(tags, str):
        return [tags]
    out = list(tags)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise TypeError(f"tally.read: tags[{i}] must be a str glob, got {type(t).__name__} {t!r}")
    return out


def _buffer(pa: ModuleType, column: ColumnBuffer) -> Any:
    # The pyarrow buffer keeps `column` alive; `column` is immutable, so the memory is stable.
    return pa.foreign_buffer(column.address, column.size, base=column)


def _strings(pa: ModuleType, strings: Tuple[ColumnBuffer, ColumnBuffer, int]) -> Any:
    offsets, data, count = strings
    return pa.Array.from_buffers(pa.string(), count, [None, _buffer(pa, offsets), _buffer(pa, data)])


def _table(pa: ModuleType, cols: Dict[str, Any]) -> Tuple[Any, Any]:
    """The five-column table, one record batch per chunk read (a large run's rows as its
    reading thread left them, no copy), and the run codes (for per-run columns)."""
    runs, tags = _strings(pa, cols["runs"]), _strings(pa, cols["tags"])
    batches = []
    for chunk in cols["chunks"]:
        rows = chunk["rows"]

        def codes(key: str, dictionary: Any) -> Any:
            indices = pa.Array.from_buffers(pa.int32(), rows, [None, _buffer(pa, chunk[key])])
            # Not re-checked here (safe=False): every code was made by entering its string in
            # this dictionary, and checking would read (and fault in) 8 bytes per row.
            return pa.DictionaryArray.from_arrays(indices, dictionary, safe=False)

        batches.append(
            pa.record_batch(
                {
                    "run": codes("run_codes", runs),
                    "tag": codes("tag_codes", tags),
                    "step": pa.Array.from_buffers(pa.int64(), rows, [None, _buffer(pa, chunk["step"])]),
                    "wall_time": pa.Array.from_buffers(pa.float64(), rows, [None, _buffer(pa, chunk["wall_time"])]),
                    "value": pa.Array.from_buffers(pa.float64(), rows, [None, _buffer(pa, chunk["value"])]),
                }
            )
        )
    table = pa.Table.from_batches(batches)
    run_codes = pa.chunked_array([b.column(0).indices for b in batches], pa.int32())
    return table, run_codes


def read(paths: Union[PathLike, Iterable[PathLike]], tags: Union[str, Sequence[str], None] = None, *, strict: bool = False) -> Any:
    """Every scalar of event files as a ``pyarrow.Table``, one row per scalar, in file order.

    ``paths``: an event file (read alone), a directory (searched recursively for
    ``events.out.tfevents.*``; each directory's files are one run, read in order of their first
    event's wall time, then name, as TensorBoard reads them), or a list of them.
    ``tags``: ``*`` globs (e.g. ``"Loss/*"``); a row is kept when its tag matches one of them
    (``None`` keeps every tag, ``[]`` none).

    Columns: ``run`` (the event file's directory relative to the common root of ``paths``,
    ``"."`` for the root itself; dictionary-encoded), ``tag`` (dictionary-encoded), ``step``
    (int64), ``wall_time`` and ``value`` (float64). Scalars are ``simple_value`` summaries and
    one-element float tensors of the scalars plugin (``docs/contract/consumers.md`` "Scalars
    tally reads"). ``.to_pandas()`` and ``polars.from_arrow(table)`` convert it.

    A truncated final record is the end of a file's data and warns
    (:class:`TruncatedEventFileWarning`, naming the file and byte offset). A later file's purge
    marker drops the earlier files' points from its step on (:class:`PurgedPointsWarning`); a
    step going back across one directory's files without one is kept
    (:class:`StepsGoBackWarning`), or, with ``strict=True``, raises :class:`tally.StorageError`
    naming both files. A corrupt record raises :class:`tally.StorageError` naming the file and
    byte offset.
    """
    pa = _pyarrow("tally.read")
    table, _ = _table(pa, _read_columns(_paths(paths), _tags(tags), strict))
    return table


def read_runs(
    root: PathLike,
    config: bool = False,
    tags: Union[str, Sequence[str], None] = None,
    *,
    strict: bool = False,
    errors: str = "skip",
) -> Any:
    """:func:`read` over every run below the directory ``root`` (runs named relative to it).

    A run that cannot be read (a corrupt record, with ``strict=True`` steps going back, an
    unreadable ``run_config.json`` with ``config=True``) is skipped with an
    :class:`UnreadableRunWarning` carrying the reader's message, and the others are read;
    ``errors="raise"`` raises the first such run's error instead.

    With ``config=True``, each run's ``run_config.json`` is flattened into extra columns
    ``config.<dotted.key>`` (e.g. ``config.run.algo``, ``config.config.training.lr``), the
    run's value repeated on each of its rows (a run another writer made, without that file,
    gives what it recorded: ``add_hparams``' values as ``config.hparams.<name>``, a
    ``|param|value|`` text table's rows as ``config.config.<param>``; and any run's
    ``key=value`` folder names give ``config.path.<key>``: docs/contract/consumers.md "A run's
    configuration"); a key a run lacks is null. A key whose values across runs have no common Arrow type holds their JSON text.
    """
    if not isinstance(root, (str, os.PathLike)):
        raise TypeError(f"tally.read_runs: root must be str or os.PathLike, got {type(root).__name__} {root!r}")
    root = _local(root)
    if not Path(root).is_dir():
        raise StorageError(f"{os.fspath(root)}: not a directory (tally.read_runs reads the runs below a directory)")
    if errors not in ("skip", "raise"):
        raise ValueError(f"tally.read_runs: errors={errors!r}; expected 'skip' or 'raise'")
    pa = _pyarrow("tally.read_runs")
    cols = _read_columns([root], _tags(tags), strict, errors == "skip")
    table, run_codes = _table(pa, cols)
    if not config:
        return table
    per_run = [_run_config(Path(d), errors) for d in cols["run_dirs"]]
    keys = sorted({k for flat in per_run for k in flat})
    for key in keys:
        values = _per_run_array(pa, [flat.get(key) for flat in per_run])
        taken = [values.take(codes) for codes in run_codes.chunks]
        table = table.append_column(f"config.{key}", pa.chunked_array(taken, values.type))
    return table


def _run_config(run: Path, errors: str) -> Dict[str, Any]:
    """The run's flattened configuration; under ``errors="skip"`` one that cannot be read is
    said (the run's rows stay, its config columns null)."""
    try:
        return _flat_config(run / "run_config.json")
    except StorageError as e:
        if errors == "raise":
            raise
        warnings.warn(f"{run}: configuration skipped: {e}", UnreadableRunWarning, stacklevel=4)
        return {}


def _flat_config(path: Path) -> Dict[str, Any]:
    """The run's configuration as dotted keys (docs/contract/consumers.md "A run's
    configuration"); empty when nothing records one."""
    return dict(json.loads(flat_config(path.parent)))


def _per_run_array(pa: ModuleType, values: List[Any]) -> Any:
    """One value per run as an Arrow array of the type pyarrow infers; JSON text when none fits."""
    try:
        return pa.array(values)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return pa.array([None if v is None else json.dumps(v) for v in values], pa.string())


def runs(
    paths: Union[PathLike, Iterable[PathLike]],
    tags: Union[str, Sequence[str], None] = None,
    *,
    strict: bool = False,
) -> Any:
    """The runs table: one row per run under ``paths`` (as :func:`read` finds runs), a
    ``pyarrow.Table`` (docs/contract/consumers.md "The runs table").

    Columns: ``run``, ``dir``, ``status`` (``run_summary.json``'s, null for another writer's
    run), ``start`` (the first scalar's wall time, a UTC timestamp), ``duration`` (seconds to the
    last scalar), ``last_step``, ``points``, ``findings`` and ``health`` (how many findings the
    default health rules made, and each as ``rule tag@first_step``, as ``tally health`` finds
    them), then ``config.<dotted.key>`` for each key of ``run_config.json``, and for each tag matching ``tags`` (``*`` globs; none: no tag columns)
    ``<tag>:count``, ``:last``, ``:min``, ``:max`` (finite values), ``:max_step``,
    ``:final_mean`` (the mean over the last 10 % of the tag's steps), ``:last_step`` and
    ``:nonfinite``. A column takes the type its values share; one whose values mix types, or hold
    lists or objects, is JSON text. A run that cannot be read is skipped with an
    :class:`UnreadableRunWarning`.
    """
    _check_strict(strict)
    pa = _pyarrow("tally.runs")
    globs = _tags(tags)
    found = _naming_urls(runs_table, _paths(paths), [] if globs is None else globs, strict)
    _warn_findings(found, stacklevel=3)
    return pa.ipc.open_stream(found["ipc"]).read_all()


def compare(
    paths: Union[PathLike, Iterable[PathLike]],
    metric: str,
    by: Union[str, Sequence[str]] = (),
    at: Union[str, int] = "final",
    *,
    reps: int = 50_000,
    seed: int = 0,
    curve_points: int = 100,
) -> Any:
    """Seed statistics: the runs under ``paths`` grouped by the configuration keys ``by``, each
    run scored on ``metric``, a ``pyarrow.Table`` with one row per group, best mean first
    (docs/contract/consumers.md "Comparing runs").

    ``by``: flat configuration columns of :func:`runs` (``"config.config.lr"``), or the same
    without the leading ``config.`` (``"config.lr"``, ``"run.algo"``). ``at``: ``"final"`` (the
    mean over the last 10 % of a run's steps), ``"auc"`` (the curve's mean height) or a step
    (the last value at or before it; runs that have not reached it are left out with a
    warning). Columns: each ``by`` key, ``n``, ``mean`` with ``mean_low``/``mean_high`` (its
    95 % percentile-bootstrap interval), ``std`` (n - 1), ``iqm`` (interquartile mean, as
    ``scipy.stats.trim_mean(x, 0.25)``) with ``iqm_low``/``iqm_high``, ``runs``, ``scores`` and
    ``curve`` (on ``curve_points`` aligned steps: the group's mean, std and the mean's 95 %
    bootstrap band ``low``/``high``, and its IQM with ``iqm_low``/``iqm_high``). The bootstrap draws
    ``reps`` resamples of the group's runs with ``numpy.random.RandomState(seed).randint``'s
    stream, as rliable does for one task.
    """
    if isinstance(by, str):
        by = [by]
    if not isinstance(metric, str) or not metric:
        raise TypeError(f"tally.compare: metric must be a non-empty str, got {metric!r}")
    for name, v in (("reps", reps), ("seed", seed), ("curve_points", curve_points)):
        if not isinstance(v, int) or isinstance(v, bool) or v < (1 if name == "reps" else 0):
            raise ValueError(f"tally.compare: {name}={v!r}; expected an integer >= {1 if name == 'reps' else 0}")
    if seed >= 2**32:
        raise ValueError(f"tally.compare: seed={seed!r}; expected an integer below 2**32 (numpy's RandomState)")
    pa = _pyarrow("tally.compare")
    found = _naming_urls(compare_runs, _paths(paths), metric, list(by), str(at), reps, seed, curve_points)
    _warn_findings(found, stacklevel=3)
    for run, why in found["unscored"]:
        warnings.warn(f"{run}: not scored: {why}", UnreadableRunWarning, stacklevel=2)
    for message in found["absent"]:
        warnings.warn(message, UserWarning, stacklevel=2)
    groups = json.loads(found["groups"])
    columns: Dict[str, Any] = {k: _per_run_array(pa, [g["key"][k] for g in groups]) for k in by}
    for k in ("n", "mean", "mean_low", "mean_high", "std", "iqm", "iqm_low", "iqm_high"):
        columns[k] = pa.array([g[k] for g in groups], pa.int64() if k == "n" else pa.float64())
    columns["runs"] = pa.array([g["runs"] for g in groups], pa.list_(pa.string()))
    columns["scores"] = pa.array([g["scores"] for g in groups], pa.list_(pa.float64()))
    point = pa.struct(
        [("step", pa.int64()), ("n", pa.int64())]
        + [(k, pa.float64()) for k in ("mean", "std", "low", "high", "iqm", "iqm_low", "iqm_high")]
    )
    columns["curve"] = pa.array([g["curve"] for g in groups], pa.list_(point))
    return pa.table(columns)


def sql(paths: Union[PathLike, Iterable[PathLike]], query: str, *, strict: bool = False) -> Any:
    """Answers a read-only SQL ``query`` over the runs under ``paths``, a ``pyarrow.Table``
    (docs/contract/consumers.md "SQL over runs").

    Two tables: ``runs`` (the columns of :func:`runs` without tag figures: ``run``, ``dir``,
    ``status``, ``start``, ``duration``, ``last_step``, ``points``, ``"config.<key>"``; quote
    dotted names) and ``scalars`` (``run``, ``tag``, ``step``, ``wall_time``, ``value``: every
    point, as :func:`read` returns them). The dialect is Apache DataFusion's, the engine the
    ``tally sql`` command runs too. A query that does not parse, names an unknown table or
    column, or would change anything raises ``ValueError``; a run that cannot be read is left
    out with an :class:`UnreadableRunWarning`.
    """
    if not isinstance(query, str) or not query.strip():
        raise TypeError(f"tally.sql: query must be a non-empty str, got {query!r}")
    _check_strict(strict)
    pa = _pyarrow("tally.sql")
    found = _naming_urls(sql_query, _paths(paths), query, strict)
    _warn_findings(found, stacklevel=3)
    return pa.ipc.open_stream(found["ipc"]).read_all()
