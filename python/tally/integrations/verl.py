"""verl: ``tally`` as one of verl's tracking backends.

One line before the trainer is built, then name the backend in the trainer's configuration::

    import tally.integrations.verl; tally.integrations.verl.install()

    # trainer.logger=['console','tally']

verl's ``main_ppo`` builds the trainer inside a Ray actor: there the line is Ray's setup hook,
``+ray_kwargs.ray_init.runtime_env.worker_process_setup_hook=tally.integrations.verl.install``.

verl's ``Tracking`` takes its backends from a fixed list; ``install()`` adds ``tally`` to it.
Each ``Tracking.log(data, step)`` then writes every key of ``data`` at ``step`` through
:class:`tally.SummaryWriter`, the tags and steps verl's own ``tensorboard`` backend writes, and
``finish()`` closes the writer. The run's directory is ``$TALLY_LOG_DIR``, else
``tally_log/<project_name>/<experiment_name>``; the configuration verl passes becomes the run's
``run_config.json`` (docs/contract/integrations.md "verl").
"""

from __future__ import annotations

import os
from typing import Any, Mapping, Optional

from tally._require import require
from tally.summary_writer import SummaryWriter

__all__ = ["BACKEND", "TallyTracking", "install"]

#: The backend's name in verl's ``trainer.logger`` list.
BACKEND = "tally"


class TallyTracking:
    """The backend verl's ``Tracking`` calls: ``log(data, step)`` and ``finish()``."""

    def __init__(self, project_name: str, experiment_name: str, config: Optional[Mapping[str, Any]] = None) -> None:
        log_dir = os.environ.get("TALLY_LOG_DIR") or os.path.join("tally_log", str(project_name), str(experiment_name))
        self.writer = SummaryWriter(log_dir, config=_plain(config))

    def log(self, data: Mapping[str, Any], step: int) -> None:
        for key, value in data.items():
            self.writer.add_scalar(key, value, step)

    def finish(self) -> None:
        self.writer.close()


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


def _plain(config: Any) -> Optional[Mapping[str, Any]]:
    """verl's configuration as a plain dict (an OmegaConf ``DictConfig`` resolved)."""
    if config is None or isinstance(config, dict):
        return config
    if type(config).__module__.startswith("omegaconf"):
        omegaconf = require("omegaconf", "tally.integrations.verl", "omegaconf")  # verl's configuration library
        plain: Mapping[str, Any] = omegaconf.OmegaConf.to_container(config, resolve=True)
        return plain
    return dict(config)
