"""skrl: its agents' TensorBoard writer replaced by :class:`tally.SummaryWriter`.

    import tally.integrations.skrl
    tally.integrations.skrl.install()  # before the trainer is built (it creates the writers)

skrl's agents build ``skrl.utils.tensorboard.SummaryWriter(log_dir=experiment_dir)`` when
they are initialised and call ``add_scalar(tag=, value=, timestep=)``; ``install`` points
skrl at :class:`SummaryWriter` below, which takes those keywords. skrl never closes its
writers, so each one is closed when the interpreter exits (the step still being batched is
written then). skrl is imported by ``install`` only, so importing this module works without it.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Optional, Union

from tally.integrations._atexit import close_at_exit
from tally._require import require
from tally.summary_writer import SummaryWriter as _TallyWriter

__all__ = ["SummaryWriter", "install"]


class SummaryWriter(_TallyWriter):
    """:class:`tally.SummaryWriter` with skrl's constructor and ``add_scalar`` keywords
    (torch's positional form works too), closed at interpreter exit."""

    def __init__(
        self,
        log_dir: Union[str, "os.PathLike[str]"],
        *,
        queue_size: int = 10,
        flush_seconds: float = 120,
        **kwargs: Any,
    ) -> None:
        super().__init__(log_dir=log_dir, max_queue=queue_size, flush_secs=flush_seconds, **kwargs)
        close_at_exit(self)

    def add_scalar(
        self,
        tag: str,
        scalar_value: Any = None,
        global_step: Optional[int] = None,
        walltime: Optional[float] = None,
        new_style: bool = False,
        double_precision: bool = False,
        display_name: str = "",
        summary_description: str = "",
        *,
        value: Any = None,
        timestep: Optional[int] = None,
    ) -> None:
        """skrl's ``add_scalar(tag=, value=, timestep=)`` or torch's ``add_scalar(tag, value, step)``."""
        if (value is None) == (scalar_value is None):
            raise TypeError(f"add_scalar('{tag}'): give exactly one of value= (skrl) or scalar_value (torch)")
        if timestep is not None and global_step is not None:
            raise TypeError(f"add_scalar('{tag}'): give timestep= (skrl) or global_step (torch), not both")
        super().add_scalar(
            tag,
            scalar_value if value is None else value,
            global_step if timestep is None else timestep,
            walltime,
            new_style,
            double_precision,
        )


def install() -> None:
    """Make every skrl agent built from now on write through :class:`SummaryWriter`."""
    tb = require("skrl.utils.tensorboard", "tally.integrations.skrl", "skrl")
    original = getattr(tb, "SummaryWriter")
    if original is SummaryWriter:
        return
    setattr(tb, "SummaryWriter", SummaryWriter)
    # Agent base modules imported before this call hold skrl's class under the same name.
    for name, module in list(sys.modules.items()):
        if name.startswith("skrl.") and getattr(module, "SummaryWriter", None) is original:
            setattr(module, "SummaryWriter", SummaryWriter)
