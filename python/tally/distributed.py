"""Multi-rank runs: every rank's step input combined on rank 0 with one collective per iteration.

Only rank 0 owns the logger (terminal, event file, W&B); other ranks log nothing. Each
iteration every rank packs its submission into one float64 vector — each value beside a
presence flag, so keys reported by some ranks only are reduced over the ranks that have them
— and the job's own engine sums it in **one** ``all_reduce`` (``torch.distributed`` when it is
initialised, else an ``mpi4py`` communicator). Rank 0 then divides by the presence counts
where the schema says "mean" (``tally._tally.reduction``: learner metrics, phase times, reward
terms) and keeps the sums where it says "sum" (throughput, counters, buffer sizes), and hands
the logger the reduced input plus the rank-summed rates (Σ_r steps_r / iter_time_r becomes
``Perf/total_fps``) through ``Logger.step_with_rates``. This is the same arithmetic as the
Rust ``tally::reduce_ranks``.

Each rank also writes, in two slots of its own (the others' are zero, so the sum carries every
rank's), its count of non-finite values and its iteration time: rank 0 hands them to
``Logger.judge_ranks``, so the ``ranks`` health rule sees a fault local to one rank that the
reduction hides (docs/contract/health.md "Ranks"). That is 2 × world size floats more in the
same collective.

The vector layout (which key sits where) must be identical on all ranks. It grows when a rank
submits a key the layout lacks: the reduced vector then says so on every rank, the ranks
exchange the new key names once (an ``all_gather``) and redo the reduction. So an iteration
that introduces new keys costs three collectives; every other iteration costs one.

With system metrics on, the other ranks sample their own process, machine and GPUs
(docs/contract/system-metrics.md "Ranks"): rank 0 puts its sampling interval in the header,
and each rank starts a sampler thread of its own when it first sees it; once per interval rank
0 flags the header, and the next iteration's vector carries a fixed block per rank holding that
rank's newest sample, which rank 0 writes under ``system/rank<R>/``. Still one collective; the
other iterations carry two header slots more, and with system metrics off nothing else.
"""

from __future__ import annotations

import math
import os
import re
import sys
import time
from array import array
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from tally._tally import (
    RANK_SYSTEM_SLOTS,
    STEP_FIELDS,
    ConfigError,
    HealthStop,
    Logger,
    SchemaError,
    ValueTypeError,
    _RankSampler,
    reduction,
)

__all__ = ["RankLogger", "Communicator", "get_communicator", "own_gpus"]

MAP_FIELDS = tuple(name for name, kind in STEP_FIELDS if kind == "map")
# Scalar fields and how they combine (Rust reduce_ranks): mean over ranks that report them,
# or sum. episode_length counts only ranks with a positive length.
SCALAR_FIELDS = (
    ("iteration_time", "mean"),
    ("episode_return", "mean"),
    ("episode_length", "mean"),
    ("timeout_rate", "mean"),
    ("steps_this_iter", "sum"),
    ("replay_rows_this_iter", "sum"),
)
SYSTEM_FIELDS = (("buffer_size", "sum"), ("batch_size_per_rank", "mean"))

# Header slots of the packed vector.
(_ITER, _ITER_SQ, _ENV_STEPS, _UNKNOWN, _ERRORS, _STOP, _RATE_STEPS, _RATE_STEPS_N, _RATE_ROWS, _RATE_ROWS_N,
 _SYS_INTERVAL, _SYS_CARRY) = range(12)  # fmt: skip
_SCALARS = 12
_SYSTEM = _SCALARS + 2 * len(SCALAR_FIELDS)
_HEADER = _SYSTEM + 2 * len(SYSTEM_FIELDS)


class Communicator:
    """The collective engine: a rank, a world size, a float64 sum all-reduce and an all-gather."""

    rank = 0
    size = 1
    name = "local"

    def allreduce_sum(self, values: "array[float]") -> List[float]:
        """Element-wise sum over ranks (this base class: a single process)."""
        return list(values)

    def allgather(self, obj: Any) -> List[Any]:
        """Every rank's ``obj``, in rank order."""
        return [obj]


class _Mpi(Communicator):
    name = "mpi"

    def __init__(self, comm: Any) -> None:
        from mpi4py import MPI  # type: ignore[import-not-found,unused-ignore]

        self._mpi = MPI
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()

    def allreduce_sum(self, values: "array[float]") -> List[float]:
        out = array("d", bytes(8 * len(values)))
        self.comm.Allreduce([values, self._mpi.DOUBLE], [out, self._mpi.DOUBLE], op=self._mpi.SUM)
        return list(out)

    def allgather(self, obj: Any) -> List[Any]:
        return list(self.comm.allgather(obj))


class _Torch(Communicator):
    name = "torch"

    def __init__(self, group: Any = None) -> None:
        import torch  # type: ignore[import-not-found,unused-ignore]
        import torch.distributed as dist  # type: ignore[import-not-found,unused-ignore]

        self._torch, self._dist, self.group = torch, dist, group
        self.rank = dist.get_rank(group)
        self.size = dist.get_world_size(group)
        # NCCL reduces CUDA tensors only.
        backend = str(dist.get_backend(group)).lower()
        if "nccl" in backend:
            self.device = torch.device("cuda", torch.cuda.current_device())
        else:
            self.device = torch.device("cpu")

    def allreduce_sum(self, values: "array[float]") -> List[float]:
        t = self._torch.tensor(values.tolist(), dtype=self._torch.float64, device=self.device)
        self._dist.all_reduce(t, op=self._dist.ReduceOp.SUM, group=self.group)
        out: List[float] = t.cpu().tolist()
        return out

    def allgather(self, obj: Any) -> List[Any]:
        out: List[Any] = [None] * self.size
        self._dist.all_gather_object(out, obj, group=self.group)
        return out


_MPI_ENV = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS")
# The launchers' rank on this machine: torchrun, OpenMPI, MPICH/Intel MPI, Slurm, MVAPICH.
_LOCAL_RANK_ENV = ("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", "MV2_COMM_WORLD_LOCAL_RANK")


def own_gpus(explicit: Optional[Sequence[Any]] = None) -> List[str]:
    """The GPUs this rank uses, as NVML indices or UUIDs (docs/contract/system-metrics.md
    "Ranks"): ``explicit`` if given; else torch's current CUDA device once CUDA is initialised,
    else the launcher's local rank, either taken through ``CUDA_VISIBLE_DEVICES`` when set."""
    if explicit is not None:
        return [str(g) for g in explicit]
    torch = sys.modules.get("torch")
    cuda = getattr(torch, "cuda", None) if torch is not None else None
    if cuda is not None and cuda.is_available() and cuda.is_initialized():
        index = int(cuda.current_device())
    else:
        local = next((os.environ[v] for v in _LOCAL_RANK_ENV if os.environ.get(v, "").isdigit()), None)
        if local is None:
            return []
        index = int(local)
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return [str(index)]
    names = [v.strip() for v in visible.split(",") if v.strip()]
    # A list of one device per rank (as Slurm gives) is this rank's whatever its local rank.
    return [names[index % len(names)]] if names else []


def get_communicator(comm: Any = None) -> Communicator:
    """The job's collective engine.

    ``comm`` may be a :class:`Communicator`, an ``mpi4py`` communicator, a torch process group,
    ``"torch"``, ``"mpi"``, or None: then ``torch.distributed`` if it is initialised, else
    ``mpi4py``'s ``COMM_WORLD`` when running under an MPI launcher, else a single process.
    """
    if isinstance(comm, Communicator):
        return comm
    if comm is None:
        torch = sys.modules.get("torch")
        dist = getattr(torch, "distributed", None) if torch is not None else None
        if dist is not None and dist.is_available() and dist.is_initialized():
            return _Torch()
        if "mpi4py.MPI" in sys.modules or any(v in os.environ for v in _MPI_ENV):
            try:
                from mpi4py import MPI  # type: ignore[import-not-found,unused-ignore]
            except ImportError:
                return Communicator()
            return _Mpi(MPI.COMM_WORLD)
        return Communicator()
    if comm == "torch":
        return _Torch()
    if comm == "mpi":
        from mpi4py import MPI  # type: ignore[import-not-found,unused-ignore]

        return _Mpi(MPI.COMM_WORLD)
    if hasattr(comm, "Allreduce") and hasattr(comm, "Get_rank"):
        return _Mpi(comm)
    if type(comm).__module__.startswith("torch"):
        return _Torch(comm)
    raise ConfigError(f"unsupported communicator {comm!r}: pass an mpi4py communicator, a torch process group, 'torch' or 'mpi'")


def _number(iteration: int, what: str, v: Any) -> float:
    if isinstance(v, float):
        return v
    if v is None or isinstance(v, (str, bytes)):
        raise ValueTypeError(
            f"invalid step at iteration {iteration}: {what}: expected a number (int, float, numpy scalar "
            f"or 0-d tensor), got {type(v).__name__} {v!r}"
        )
    try:
        return float(v)
    except (TypeError, ValueError) as e:
        raise ValueTypeError(f"invalid step at iteration {iteration}: {what}: expected a number, got {type(v).__name__}: {e}") from e


class _PhaseTimer:
    __slots__ = ("_owner", "_name", "_t0")

    def __init__(self, owner: "RankLogger", name: str) -> None:
        self._owner, self._name, self._t0 = owner, name, 0.0

    def __enter__(self) -> "_PhaseTimer":
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        dt = time.perf_counter() - self._t0
        p = self._owner._phases
        p[self._name] = p.get(self._name, 0.0) + dt


class RankLogger:
    """One logger for a multi-rank job: call :meth:`step` on **every** rank each iteration.

    Either pass ``logger`` (rank 0's :class:`tally.Logger`; None elsewhere), or the
    :class:`tally.Logger` keywords, and the logger is built on rank 0 only, with ``num_gpus``
    defaulting to the world size. ``system_gpus`` names the GPUs this rank samples (NVML
    indices or UUIDs) when :func:`own_gpus` would guess wrong.
    """

    def __init__(
        self, logger: Optional[Logger] = None, *, comm: Any = None, system_gpus: Optional[Sequence[Any]] = None, **logger_kwargs: Any
    ) -> None:
        self.comm = get_communicator(comm)
        self.rank = self.comm.rank
        self.world_size = self.comm.size
        if logger_kwargs:
            if logger is not None:
                raise ConfigError("pass either a logger or Logger keywords, not both")
            logger_kwargs.setdefault("num_gpus", self.world_size)
            logger = Logger(**logger_kwargs) if self.rank == 0 else None
        elif self.rank == 0 and logger is None:
            raise ConfigError("rank 0 needs a logger: pass logger=tally.Logger(...) or the Logger keywords")
        self.logger = logger if self.rank == 0 else None
        self._layout: List[Tuple[str, str]] = []
        self._index: Dict[Tuple[str, str], int] = {}
        self._mean: List[bool] = []
        self._phases: Dict[str, float] = {}
        # (glob, is_mean) of define_metric calls, last first: user metrics' reductions.
        self._user_reductions: List[Tuple["re.Pattern[str]", bool]] = []
        self.collectives = 0
        # The keys' slots follow the header and every rank's two slots (non-finite count,
        # iteration time or -1 when not measured).
        self._keys = _HEADER + 2 * self.world_size
        # System metrics of every rank (docs/contract/system-metrics.md "Ranks"). Rank 0: its
        # interval (None: off, or no other rank) and when it next asks for the ranks' samples.
        self._sys_interval: Optional[float] = self.logger.system_interval if self.logger is not None and self.world_size > 1 else None
        self._sys_due = time.monotonic() + self._sys_interval if self._sys_interval is not None else math.inf
        self._sys_ask = False
        # Every rank: whether this iteration's vector carries the ranks' blocks, and this
        # rank's block for it; the others: their sampler, started once rank 0 says its interval.
        self._carry = False
        self._block: Optional[List[float]] = None
        self._sampler: Optional[_RankSampler] = None
        self._sampler_tried = False
        self._system_gpus = system_gpus

    @property
    def is_main(self) -> bool:
        """Whether this rank owns the logger."""
        return self.rank == 0

    @property
    def run_dir(self) -> Any:
        """Rank 0's run directory (None on other ranks)."""
        return self.logger.run_dir if self.logger is not None else None

    def phase(self, name: str) -> _PhaseTimer:
        """``with dist_log.phase("learning"):`` times the block into this rank's next step."""
        return _PhaseTimer(self, name)

    def define_metric(self, tag: str, *, reduction: str = "mean", **kw: Any) -> None:
        """Define a user metric on **every** rank (``tally.Logger.define_metric``'s arguments).

        The one collective per iteration is a sum, so the cross-rank reduction must be
        ``"mean"`` or ``"sum"``; define it before the tag is first stepped.
        """
        if reduction not in ("mean", "sum"):
            raise ConfigError(
                f"define_metric('{tag}'): reduction={reduction!r} is not available across ranks "
                "(RankLogger reduces with one summing collective): use 'mean' or 'sum'"
            )
        is_mean = reduction == "mean"
        if self.logger is not None:
            self.logger.define_metric(tag, reduction="mean" if is_mean else "sum", **kw)
        pattern = re.compile("".join(".*" if c == "*" else re.escape(c) for c in tag) + r"\Z")
        self._user_reductions.insert(0, (pattern, is_mean))

    def _is_mean(self, field: str, key: str) -> bool:
        if field == "metrics":
            for pattern, is_mean in self._user_reductions:
                if pattern.match(key):
                    return is_mean
        return reduction(field, key) == "mean"

    def status(self, text: str) -> None:
        """Show a status line (rank 0 only; a no-op elsewhere)."""
        if self.logger is not None:
            self.logger.status(text)

    # -- packing ------------------------------------------------------------------------------
    def _extend(self, keys: Sequence[Tuple[str, str]]) -> None:
        order = {f: i for i, f in enumerate(MAP_FIELDS)}
        for fk in sorted(set(keys) - set(self._index), key=lambda fk: (order[fk[0]], fk[1])):
            self._index[fk] = len(self._layout)
            self._layout.append(fk)
            self._mean.append(self._is_mean(fk[0], fk[1]))

    def _zeros(self) -> "array[float]":
        blocks = RANK_SYSTEM_SLOTS * self.world_size if self._carry else 0
        return array("d", bytes(8 * (self._keys + 2 * len(self._layout) + blocks)))

    def _pack(self, iteration: int, kw: Mapping[str, Any]) -> Tuple["array[float]", List[Tuple[str, str]]]:
        vec = self._zeros()
        vec[_ITER] = float(iteration)
        vec[_ITER_SQ] = float(iteration) ** 2
        vec[_ENV_STEPS] = float(kw.get("env_steps") or 0)
        # Rank 0's logger will refuse this step (stop_on): every rank is told in this same
        # collective, so none goes on to wait for a rank that stopped.
        vec[_STOP] = float(self.logger is not None and self.logger._stop_pending())
        if self._sys_interval is not None:
            vec[_SYS_INTERVAL] = self._sys_interval
            vec[_SYS_CARRY] = float(self._sys_ask)
        if self._block is not None:
            mine = self._keys + 2 * len(self._layout) + RANK_SYSTEM_SLOTS * self.rank
            vec[mine : mine + RANK_SYSTEM_SLOTS] = array("d", self._block)
        unknown: List[Tuple[str, str]] = []
        nonfinite = 0
        for field in MAP_FIELDS:
            m = kw.get(field) or {}
            if field == "learner" and self._phases:
                m = dict(m)
                for k, dt in self._phases.items():
                    m[k] = m.get(k, 0.0) + dt
            for k, v in m.items():
                if not isinstance(k, str):
                    raise ValueTypeError(f"invalid step at iteration {iteration}: {field} has a key {k!r}: keys must be str")
                x = _number(iteration, f"{field}['{k}']", v)
                nonfinite += not math.isfinite(x)
                i = self._index.get((field, k))
                if i is None:
                    unknown.append((field, k))
                    continue
                vec[self._keys + 2 * i] = x
                vec[self._keys + 2 * i + 1] = 1.0
        vec[_UNKNOWN] = float(len(unknown))
        for j, (name, _) in enumerate(SCALAR_FIELDS):
            v = kw.get(name)
            if v is None:
                continue
            x = _number(iteration, name, v)
            nonfinite += not math.isfinite(x)
            if name == "episode_length" and not x > 0:
                continue
            vec[_SCALARS + 2 * j] = x
            vec[_SCALARS + 2 * j + 1] = 1.0
        system = kw.get("system") or {}
        for j, (name, _) in enumerate(SYSTEM_FIELDS):
            v = system.get(name)
            if v is not None:
                vec[_SYSTEM + 2 * j] = _number(iteration, f"system['{name}']", v)
                vec[_SYSTEM + 2 * j + 1] = 1.0
        # This rank's own rates (as Rust Rates::of): only with a measured Iter Wall.
        t = kw.get("iteration_time")
        t = _number(iteration, "iteration_time", t) if t is not None else None
        mine = _HEADER + 2 * self.rank
        vec[mine] = float(nonfinite)
        vec[mine + 1] = t if t is not None and t >= 0 and math.isfinite(t) else -1.0
        if t is not None and t > 0 and math.isfinite(t):
            for slot, name in ((_RATE_STEPS, "steps_this_iter"), (_RATE_ROWS, "replay_rows_this_iter")):
                n = kw.get(name)
                if n is not None:
                    n = _number(iteration, name, n)
                    if math.isfinite(n):
                        vec[slot] = n / t
                        vec[slot + 1] = 1.0
        return vec, unknown

    def _collect(self, iteration: int, kw: Mapping[str, Any]) -> List[float]:
        """Pack, reduce (growing the layout when some rank has new keys); raises on every
        rank when any rank's input was unusable, so no rank is left waiting."""
        local_error: Optional[BaseException] = None
        # Decided once per iteration: a re-packed vector must say and carry the same.
        self._sys_ask = self._sys_interval is not None and time.monotonic() >= self._sys_due
        self._block = None
        if self._carry and self.rank != 0:
            self._block = self._sampler.block() if self._sampler is not None else [math.nan] * RANK_SYSTEM_SLOTS
        try:
            vec, unknown = self._pack(iteration, kw)
        except (TypeError, ValueError) as e:
            local_error = e
            vec, unknown = self._zeros(), []
            vec[_ERRORS] = 1.0
        total = self.comm.allreduce_sum(vec)
        self.collectives += 1
        if total[_ERRORS] > 0:
            if local_error is not None:
                raise local_error
            raise SchemaError(f"invalid step at iteration {iteration}: {int(total[_ERRORS])} other rank(s) rejected their input")
        if total[_UNKNOWN] > 0:
            gathered = self.comm.allgather(unknown)
            self.collectives += 1
            self._extend([(str(f), str(k)) for keys in gathered for f, k in keys])
            vec, _ = self._pack(iteration, kw)
            total = self.comm.allreduce_sum(vec)
            self.collectives += 1
        return total

    # -- the step ----------------------------------------------------------------------------
    def step(self, iteration: int, **kw: Any) -> None:
        """Submit this rank's iteration (same keywords as :meth:`tally.Logger.step`).

        Every rank must call it for every iteration; rank 0 logs the reduced result.
        """
        unknown_kw = set(kw) - {"env_steps", "system", *MAP_FIELDS, *(n for n, _ in SCALAR_FIELDS)}
        if unknown_kw:
            raise TypeError(f"step() got unexpected keyword argument(s): {', '.join(sorted(unknown_kw))}")
        total = self._collect(int(iteration), kw)
        self._phases.clear()
        carried = self._carry
        self._system_after(total)
        n = self.world_size
        mean_it = total[_ITER] / n
        if abs(total[_ITER_SQ] / n - mean_it * mean_it) > 1e-6 * max(1.0, mean_it * mean_it) or mean_it != iteration:
            raise SchemaError(
                f"rank reduction: ranks submitted different iterations (rank {self.rank} submitted {iteration}, mean {mean_it:g})"
            )
        if self.logger is None:
            if total[_STOP] > 0:
                stop = HealthStop(
                    f"iteration {iteration} not taken: a health rule in rank 0's stop_on fired "
                    "(rank 0's HealthStop has the finding); every rank stops here"
                )
                stop.finding = None
                raise stop
            return
        out: Dict[str, Any] = {f: {} for f in MAP_FIELDS}
        for i, (field, key) in enumerate(self._layout):
            cnt = total[self._keys + 2 * i + 1]
            if cnt > 0:
                s = total[self._keys + 2 * i]
                out[field][key] = s / cnt if self._mean[i] else s
        for j, (name, how) in enumerate(SCALAR_FIELDS):
            cnt = total[_SCALARS + 2 * j + 1]
            if cnt > 0:
                s = total[_SCALARS + 2 * j]
                out[name] = s / cnt if how == "mean" else s
        system: Dict[str, Any] = {}
        for j, (name, how) in enumerate(SYSTEM_FIELDS):
            cnt = total[_SYSTEM + 2 * j + 1]
            if cnt > 0:
                s = total[_SYSTEM + 2 * j]
                system[name] = int(math.floor(s / cnt + 0.5)) if how == "mean" else int(round(s))
        local_system = kw.get("system") or {}
        if local_system.get("cuda_mps") is not None:
            system["cuda_mps"] = local_system["cuda_mps"]
        if system:
            out["system"] = system
        env_steps = int(round(total[_ENV_STEPS]))
        if env_steps:
            out["env_steps"] = env_steps
        self.logger.step_with_rates(
            iteration,
            env_steps_per_sec=total[_RATE_STEPS] if total[_RATE_STEPS_N] > 0 else None,
            rows_per_sec=total[_RATE_ROWS] if total[_RATE_ROWS_N] > 0 else None,
            **out,
        )
        ranks = range(_HEADER, self._keys, 2)
        self.logger.judge_ranks(
            [int(total[r]) for r in ranks],
            [total[r + 1] if total[r + 1] >= 0 else None for r in ranks],
        )
        if carried:
            blocks = self._keys + 2 * len(self._layout)
            self.logger._rank_system(total[blocks : blocks + RANK_SYSTEM_SLOTS * self.world_size])

    def _system_after(self, total: Sequence[float]) -> None:
        """After the collective, on every rank alike: whether the next vector carries the
        ranks' blocks; on a rank other than 0, its sampler started at rank 0's interval."""
        if self._sys_ask:
            self._sys_due = time.monotonic() + (self._sys_interval or 0.0)
        self._carry = total[_SYS_CARRY] > 0
        if self.rank != 0 and not self._sampler_tried and total[_SYS_INTERVAL] > 0:
            self._sampler_tried = True
            try:
                self._sampler = _RankSampler(total[_SYS_INTERVAL], own_gpus(self._system_gpus))
            except (ConfigError, OSError):
                pass  # no thread: this rank's blocks stay empty, the job goes on

    def close(self, status: str = "completed") -> None:
        """Close rank 0's logger; stop another rank's system sampler."""
        if self._sampler is not None:
            self._sampler.close()
        if self.logger is not None:
            self.logger.close(status)

    def __enter__(self) -> "RankLogger":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if self._sampler is not None:
            self._sampler.close()
        if self.logger is not None:
            self.logger.__exit__(exc_type, exc, tb)
