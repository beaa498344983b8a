"""verl: ``tally`` as one of verl's tracking backends.

One line before the trainer is built, then name the backend in the trainer's configuration::

    import tally.integrations.verl; tally.integrations.verl.install()

    # trainer.logger=['console','tally']

verl's ``main_ppo`` builds the trainer inside a Ray actor: there the line is Ray's setup hook,
``+ray_kwargs.ray_init.runtime_env.worker_process_setup_hook=tally.integrations.verl.install``.

verl's ``Tracking`` takes its backends from a fixed list; ``install()`` adds ``tally`` to it.
Each ``Tracking.log(data, step)`` then writes every key of ``data`` at ``step`` through
:class:`tally.SummaryWriter`, the tags and steps verl's own ``tensorboard`` backend writes, and
``finish()`` closes the writer; verl's validation generations (``val/generations``) are
written to the run as its ``tensorboard`` backend writes them. The run's directory is ``$TALLY_LOG_DIR``, else
``tally_log/<project_name>/<experiment_name>``; the configuration verl passes becomes the run's
``run_config.json`` (docs/contract/integrations.md "verl").
"""

from __future__ import annotations

import os
from typing import Any, Dict, Mapping, Optional

from tally._require import require
from tally.summary_writer import SummaryWriter

__all__ = ["BACKEND", "TallyTracking", "install"]

#: The backend's name in verl's ``trainer.logger`` list.
BACKEND = "tally"


# The run directory of each open backend: verl's validation generations go through its writer
# (one writer per directory).
_open: Dict[str, "TallyTracking"] = {}


def _log_dir(project_name: Any, experiment_name: Any) -> str:
    return os.environ.get("TALLY_LOG_DIR") or os.path.join("tally_log", str(project_name), str(experiment_name))


class TallyTracking:
    """The backend verl's ``Tracking`` calls: ``log(data, step)`` and ``finish()``."""

    def __init__(self, project_name: str, experiment_name: str, config: Optional[Mapping[str, Any]] = None) -> None:
        self.log_dir = os.path.abspath(_log_dir(project_name, experiment_name))
        self.writer = SummaryWriter(self.log_dir, config=_plain(config))
        _open[self.log_dir] = self

    def log(self, data: Mapping[str, Any], step: int) -> None:
        for key, value in data.items():
            self.writer.add_scalar(key, value, step)

    def finish(self) -> None:
        if _open.get(self.log_dir) is self:
            del _open[self.log_dir]
        self.writer.close()


def _log_generations(generations: Any, samples: Any, step: int) -> None:
    """``val/generations`` as verl's ``tensorboard`` backend writes it (verl's own formatting,
    given the run's writer), into the tally run of the logger's project and experiment."""
    log_dir = os.path.abspath(_log_dir(generations.project_name, generations.experiment_name))
    backend = _open.get(log_dir)
    writer = backend.writer if backend is not None else SummaryWriter(log_dir)
    had = "writer" in vars(generations)
    own = vars(generations).get("writer")
    generations.writer = writer  # verl writes through `self.writer`, made on first use
    try:
        generations.log_generations_to_tensorboard(samples, step)
    finally:
        if had:
            generations.writer = own
        else:
            del generations.writer
        if backend is None:
            writer.close()


def install() -> None:
    """Adds ``tally`` to verl's tracking backends (once; later calls change nothing)."""
    tracking = require("verl.utils.tracking", "tally.integrations.verl", "verl")
    cls = tracking.Tracking
    if BACKEND in cls.supported_backend:
        return
    cls.supported_backend.append(BACKEND)
    verl_init, verl_finish = cls.__init__, cls.finish

    def __init__(self: Any, project_name: str, experiment_name: str, default_backend: Any = "console", config: Any = None) -> None:
        backends = [default_backend] if isinstance(default_backend, str) else list(default_backend)
        # verl builds its own backends from a chain of names; tally's is built beside them.
        verl_init(self, project_name, experiment_name, [b for b in backends if b != BACKEND], config)
        if BACKEND in backends:
            self.logger[BACKEND] = TallyTracking(project_name, experiment_name, config)

    def finish(self: Any, *args: Any, **kwargs: Any) -> None:
        ours = None if getattr(self, "_finished", False) else getattr(self, "logger", {}).get(BACKEND)
        try:
            verl_finish(self, *args, **kwargs)
        finally:
            if ours is not None:
                ours.finish()

    cls.__init__ = __init__
    cls.finish = finish

    generations_cls = tracking.ValidationGenerationsLogger
    verl_generations = generations_cls.log

    def log(self: Any, loggers: Any, samples: Any, step: int) -> None:
        verl_generations(self, loggers, samples, step)
        if BACKEND in loggers:
            _log_generations(self, samples, step)

    generations_cls.log = log


def _plain(config: Any) -> Optional[Mapping[str, Any]]:
    """verl's configuration as a plain dict (an OmegaConf ``DictConfig`` resolved)."""
    if config is None or isinstance(config, dict):
        return config
    if type(config).__module__.startswith("omegaconf"):
        omegaconf = require("omegaconf", "tally.integrations.verl", "omegaconf")  # verl's configuration library
        plain: Mapping[str, Any] = omegaconf.OmegaConf.to_container(config, resolve=True)
        return plain
    return dict(config)
