"""stable-baselines3 output format ``"tally"``: what SB3's ``tensorboard`` format writes,
through :class:`tally.SummaryWriter`.

    from tally.integrations.sb3 import configure

    model = PPO("MlpPolicy", "CartPole-v1")
    model.set_logger(configure("runs/ppo", ["stdout", "tally"]))
    model.learn(100_000)

or, keeping SB3's own ``tensorboard_log=`` and its numbered run folders (``runs/PPO_1``,
``runs/PPO_2``...), one line before the model is built::

    tally.integrations.sb3.install()

Same tags, steps and exclusion rules as SB3's ``TensorBoardOutputFormat`` (values excluded
from ``"tensorboard"`` are excluded here too, as are those excluded from ``"tally"``); the
value mapping is docs/contract/integrations.md "stable-baselines3". SB3 (and so torch) is
imported only when the format is built, so ``import tally.integrations.sb3`` works without it.
"""

from __future__ import annotations

import datetime
import os
import sys
import tempfile
from types import ModuleType
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from tally._tally import ClosedError, TallyError, ValueTypeError
from tally._require import require
from tally._writer_args import _media
from tally.summary_writer import SummaryWriter

__all__ = ["TallyOutputFormat", "configure", "install", "FORMAT"]

#: The name of this output format in ``configure``'s ``format_strings``.
FORMAT = "tally"

# The names a key's ``exclude`` may use to keep it out of this format: tally stands in for
# SB3's tensorboard format, so what SB3 keeps out of TensorBoard stays out of tally too.
_EXCLUDED_BY = (FORMAT, "tensorboard")


def _sb3_logger() -> ModuleType:
    return require("stable_baselines3.common.logger", "tally.integrations.sb3", "stable-baselines3")


def _write_value(writer: SummaryWriter, sb3: ModuleType, key: str, value: Any, step: int) -> None:
    """One recorded value, written as SB3's tensorboard format writes it."""
    import numpy as np

    if isinstance(value, str):  # SB3 counts str among numpy's scalar types and writes it as text
        writer.add_text(key, value, step)
    elif isinstance(value, (bytes, memoryview, complex, np.complexfloating)):
        raise ValueTypeError(f"a {type(value).__name__} ({value!r:.80}) is not a real number")
    elif isinstance(value, np.ScalarType):
        writer.add_scalar(key, value, step)
    elif isinstance(value, np.ndarray) or _is_tensor(value):
        writer.add_histogram(key, value, step)
    elif isinstance(value, sb3.Video):
        writer.add_video(key, value.frames, step, value.fps)
    elif isinstance(value, sb3.Figure):
        writer.add_figure(key, value.figure, step, close=value.close)
    elif isinstance(value, sb3.Image):
        writer.add_image(key, value.image, step, dataformats=value.dataformats)
    elif isinstance(value, sb3.HParam):
        _write_hparams(writer, value)
    else:
        raise ValueTypeError(
            f"a {type(value).__name__} value ({value!r:.80}) has no TensorBoard form; record a number, str, "
            f"array, tensor, Video, Figure, Image or HParam, or exclude \"{FORMAT}\" for this key"
        )


def _is_tensor(value: Any) -> bool:
    # torch is imported by SB3 already whenever this runs; look it up, never import it here.
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def _write_hparams(writer: SummaryWriter, value: Any) -> None:
    """SB3 writes the three hparams summaries into the run itself (not a sub-run as
    ``add_hparams`` does), with no step; its ``metric_dict`` names the metrics only."""
    from tally._tally import summaries
    from tally._hparams import _redacted_hparam

    media = _media()
    hp = [(str(k), media.hparam_value(str(k), v)) for k, v in value.hparam_dict.items() if v is not None]
    if writer.redact:
        # As add_hparams: each value redacted under its name (docs/contract/run-artifacts.md
        # "Secrets").
        hp = [(k, _redacted_hparam(k, v)) for k, v in hp]
    for summary in summaries.hparams(hp, {}, [str(k) for k in value.metric_dict]):
        writer._write_summary(summary, None, None)
    writer.record_config({str(k): v for k, v in value.hparam_dict.items() if v is not None})


_class: Optional[type] = None


def _format_class() -> type:
    """``TallyOutputFormat``, defined on first use as a subclass of SB3's
    ``TensorBoardOutputFormat``, so callbacks that look for that class among the logger's
    formats (SB3's documented way to log more to TensorBoard) find this one; its ``__init__``,
    which builds torch's writer, is not called."""
    global _class
    if _class is not None:
        return _class
    sb3 = _sb3_logger()

    class TallyOutputFormat(sb3.TensorBoardOutputFormat):  # type: ignore[name-defined,misc]
        """SB3 output format writing TensorBoard event files through :class:`tally.SummaryWriter`
        (``writer`` is its ``SummaryWriter``, as on SB3's ``TensorBoardOutputFormat``)."""

        def __init__(self, folder: str, **writer_kwargs: Any) -> None:
            self.writer: Optional[SummaryWriter] = SummaryWriter(log_dir=folder, **writer_kwargs)
            self._is_closed = False

        def write(
            self,
            key_values: Dict[str, Any],
            key_excluded: Dict[str, Union[str, Tuple[str, ...], None]],
            step: int = 0,
        ) -> None:
            if self._is_closed or self.writer is None:
                raise ClosedError("SB3 tally format: write() after close(); configure a new logger")
            refused: List[Tuple[str, Exception]] = []
            for key in sorted(key_values):
                excluded = key_excluded.get(key)
                if excluded is not None and any(name in excluded for name in _EXCLUDED_BY):
                    continue
                try:
                    _write_value(self.writer, sb3, key, key_values[key], step)
                except (TallyError, ValueError, TypeError) as e:
                    refused.append((key, e))  # the other keys of this dump are still written
            self.writer.flush()
            if refused:
                first = refused[0][1]
                msg = "; ".join(f"'{k}': {e}" for k, e in refused)
                raise type(first)(f"SB3 tally format, step {step}: {msg}") from first

        def close(self) -> None:
            if self.writer is not None:
                self.writer.close()
                self.writer = None
            self._is_closed = True

    TallyOutputFormat.__module__ = __name__
    _class = TallyOutputFormat
    return _class


def __getattr__(name: str) -> Any:
    if name == "TallyOutputFormat":
        return _format_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def make_output_format(_format: str, log_dir: str, log_suffix: str = "") -> Any:
    """SB3's ``make_output_format`` that also knows ``"tally"``."""
    sb3 = _sb3_logger()
    if _format == FORMAT:
        os.makedirs(log_dir, exist_ok=True)
        return _format_class()(log_dir)
    return sb3.make_output_format(_format, log_dir, log_suffix)


def install() -> None:
    """SB3's own ``"tensorboard"`` format written by tally from now on: a model built with
    ``tensorboard_log=DIR`` writes ``DIR/<tb_log_name>_1``, ``_2``... as SB3 numbers them (SB3
    picks the folder, tally writes it). Calling it again changes nothing."""
    sb3 = _sb3_logger()
    original = sb3.make_output_format
    if getattr(original, "_tally_installed", False):
        return

    def make_output_format(_format: str, log_dir: str, log_suffix: str = "") -> Any:
        if _format == "tensorboard":
            os.makedirs(log_dir, exist_ok=True)
            return _format_class()(log_dir)
        return original(_format, log_dir, log_suffix)

    setattr(make_output_format, "_tally_installed", True)
    setattr(sb3, "make_output_format", make_output_format)
    # SB3 refuses tensorboard_log= when torch's writer cannot be imported (no tensorboard
    # package); tally's writer needs none.
    utils = sys.modules.get("stable_baselines3.common.utils")
    if utils is not None and getattr(utils, "SummaryWriter", None) is None:
        setattr(utils, "SummaryWriter", SummaryWriter)


def configure(folder: Optional[str] = None, format_strings: Optional[Sequence[str]] = None) -> Any:
    """SB3's ``configure`` with the ``"tally"`` format: returns an SB3 ``Logger`` to give to
    ``model.set_logger``. ``folder`` and ``format_strings`` default as in SB3 (``SB3_LOGDIR``,
    ``SB3_LOG_FORMAT``, else a time-stamped temporary folder and ``stdout,log,csv``)."""
    sb3 = _sb3_logger()
    if folder is None:
        folder = os.getenv("SB3_LOGDIR")
    if folder is None:
        folder = os.path.join(tempfile.gettempdir(), datetime.datetime.now().strftime("SB3-%Y-%m-%d-%H-%M-%S-%f"))
    if isinstance(format_strings, str):
        raise TypeError(f"configure: format_strings must be a list of format names, got the string {format_strings!r}")
    if format_strings is None:
        format_strings = os.getenv("SB3_LOG_FORMAT", "stdout,log,csv").split(",")
    names: List[str] = [f for f in format_strings if f]
    if FORMAT in names and "tensorboard" in names:
        # Both write the same records as event files in one folder, which TensorBoard merges.
        raise ValueError(f"configure: {names}: \"{FORMAT}\" writes what \"tensorboard\" writes, into the same folder; keep one of them")
    os.makedirs(folder, exist_ok=True)
    logger = sb3.Logger(folder=folder, output_formats=[make_output_format(f, folder) for f in names])
    if len(names) > 0 and names != ["stdout"]:
        logger.log(f"Logging to {folder}")
    return logger
