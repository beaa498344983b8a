"""tally: one honest source of telemetry for reinforcement-learning training runs.

A training loop submits its metrics **once per iteration** to one :class:`Logger`; tally
validates them against the canonical metric schema v1, writes every iteration's unsmoothed
values to TensorBoard event files (or W&B), and keeps the state the live panel renders::

    import tally

    with tally.Logger(algo="sac", task="go2", sim="mujoco", max_iterations=1000, num_envs=4096) as log:
        for it in range(1, 1001):
            with log.phase("learning"):
                losses = update()
            log.step(it, env_steps=it * 4096, metrics={"Loss/critic": losses.critic},
                     iteration_time=dt, steps_this_iter=4096)

Also here: :class:`SummaryWriter` (torch's scalar API over tally's event writer),
:func:`read` / :func:`read_runs` (event files back as pyarrow Tables, for pandas and polars),
:func:`runs` (the runs table: one row per run, its configuration and chosen tags' figures),
:func:`compare` (seed statistics: runs grouped by configuration, means and IQMs with bootstrap intervals),
:func:`sql` (a read-only SQL query over the runs table and every point),
:mod:`tally.distributed` (multi-rank reduction over torch.distributed or MPI), :mod:`tally.health`
(the health rules a Logger watches the run with: ``health=``, ``stop_on=``, ``on_health=``), and
the error tree rooted at :class:`TallyError`.
"""

from tally import distributed, health
from tally._tally import (
    METRIC_SCHEMA_VERSION,
    ClosedError,
    ConfigError,
    EventWriter,
    HealthStop,
    Logger,
    Phase,
    SchemaError,
    SinkError,
    StorageError,
    TallyError,
    ValueTypeError,
    __version__,
)
from tally._read import PurgedPointsWarning, StepsGoBackWarning, TruncatedEventFileWarning, UnreadableRunWarning, compare, read, read_runs, runs, sql
from tally._mlflow import MlflowSink
from tally._trackio import TrackioSink
from tally._wandb import WandbSink
from tally.summary_writer import SummaryWriter

__all__ = [
    "Logger",
    "Phase",
    "SummaryWriter",
    "WandbSink",
    "MlflowSink",
    "TrackioSink",
    "EventWriter",
    "distributed",
    "health",
    "read",
    "read_runs",
    "runs",
    "compare",
    "sql",
    "TruncatedEventFileWarning",
    "StepsGoBackWarning",
    "PurgedPointsWarning",
    "UnreadableRunWarning",
    "TallyError",
    "SchemaError",
    "ConfigError",
    "ClosedError",
    "ValueTypeError",
    "StorageError",
    "SinkError",
    "HealthStop",
    "METRIC_SCHEMA_VERSION",
    "__version__",
]
