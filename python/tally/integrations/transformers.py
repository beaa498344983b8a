"""transformers / TRL: a ``TrainerCallback`` writing what transformers' ``TensorBoardCallback``
writes, through :class:`tally.SummaryWriter`.

    from tally.integrations.transformers import TallyCallback

    trainer = Trainer(..., args=TrainingArguments(..., report_to=[]), callbacks=[TallyCallback()])

Every ``Trainer`` (TRL's ``SFTTrainer``, ``GRPOTrainer``, ``DPOTrainer``... included) hands its
``logs`` dict to the callback at ``state.global_step``; the tags are TensorBoardCallback's
(``eval_*`` keys as ``eval/*``, ``test_*`` as ``test/*``, the others as ``train/*``), the run
directory too (``output_dir/runs/<date>_<host>`` unless ``log_dir=`` or
``TENSORBOARD_LOGGING_DIR`` says otherwise). The training arguments are the run's configuration
(``run_config.json``). Only the world's process zero writes. transformers is imported when
``TallyCallback`` is first looked up, so importing this module works without it
(docs/contract/integrations.md "transformers and TRL").
"""

from __future__ import annotations

import os
import warnings
from typing import Any, Dict, Optional

from tally._require import require
from tally.summary_writer import SummaryWriter

__all__ = ["TallyCallback", "rewrite_logs"]

_class: Optional[type] = None


def rewrite_logs(logs: Dict[str, Any]) -> Dict[str, Any]:
    """TensorBoardCallback's tag for each key of a Trainer's ``logs`` (its ``rewrite_logs``)."""
    out = {}
    for k, v in logs.items():
        if k.startswith("eval_"):
            out["eval/" + k[len("eval_"):]] = v
        elif k.startswith("test_"):
            out["test/" + k[len("test_"):]] = v
        else:
            out["train/" + k] = v
    return out


def _callback_class() -> type:
    global _class
    if _class is None:
        transformers = require("transformers", "tally.integrations.transformers", "transformers")
        utils = require("transformers.integrations.integration_utils", "tally.integrations.transformers", "transformers")

        class TallyCallback(transformers.TrainerCallback):  # type: ignore[misc,name-defined]
            """Logs each Trainer ``logs`` dict through :class:`tally.SummaryWriter` at
            ``state.global_step``, with TensorBoardCallback's tags and run directory.

            ``log_dir``: the run directory (default: ``TENSORBOARD_LOGGING_DIR``, else
            ``args.output_dir/runs/<date>_<host>``, as TensorBoardCallback). Other keywords go to
            :class:`tally.SummaryWriter` (``wandb={...}``, ``flush_secs``...).
            """

            def __init__(self, log_dir: Optional[str] = None, **writer_kwargs: Any) -> None:
                if log_dir is None:
                    log_dir = os.getenv("TENSORBOARD_LOGGING_DIR")
                self.log_dir = os.path.expanduser(os.fspath(log_dir)) if log_dir is not None else None
                if "config" in writer_kwargs:
                    # The configuration is the Trainer's arguments; a second source would merge
                    # two different things into one run_config.json.
                    raise TypeError("TallyCallback(config=...): the run's configuration is the TrainingArguments")
                self._writer_kwargs = writer_kwargs
                self.writer: Optional[SummaryWriter] = None
                self._config: Optional[Dict[str, Any]] = None
                self._warned = False

            def _open(self, args: Any) -> SummaryWriter:
                if self.log_dir is None:
                    self.log_dir = os.path.join(args.output_dir, utils.default_logdir())
                if self._config is None:
                    self._config = args.to_dict()
                self.writer = SummaryWriter(log_dir=self.log_dir, config=self._config, **self._writer_kwargs)
                return self.writer

            def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
                if not state.is_world_process_zero:
                    return
                self._warn_twice(args)
                if self.log_dir is None:
                    self.log_dir = os.path.join(args.output_dir, utils.default_logdir())
                if state.is_hyper_param_search and state.trial_name is not None:
                    # One run per trial, where TensorBoardCallback puts it.
                    self.log_dir = os.path.join(args.output_dir, utils.default_logdir(), state.trial_name)
                    self.close()
                writer = self.writer or self._open(args)
                # The texts TensorBoardCallback writes at the start, under its tags.
                writer.add_text("args", args.to_json_string())
                model_config = getattr(kwargs.get("model"), "config", None)
                if model_config is not None:
                    writer.add_text("model_config", model_config.to_json_string())

            def on_log(self, args: Any, state: Any, control: Any, logs: Optional[Dict[str, Any]] = None, **kwargs: Any) -> None:
                if not state.is_world_process_zero:
                    return
                # After on_train_end (a trainer.evaluate() after train()) the run reopens, as
                # TensorBoardCallback's writer does: a new event file in the same directory.
                # Without train() (evaluate() alone), where TensorBoardCallback's writer goes:
                # torch's default, runs/<date>_<host> under the working directory.
                if self.writer is None and self.log_dir is None:
                    self._warn_twice(args)
                    self.log_dir = utils.default_logdir()
                writer = self.writer or self._open(args)
                for k, v in rewrite_logs(logs or {}).items():
                    # TensorBoardCallback's test: a Python int/float (bool included) is a scalar,
                    # a str is text, anything else is left out with a warning naming the key.
                    if isinstance(v, (int, float)):
                        writer.add_scalar(k, v, state.global_step)
                    elif isinstance(v, str):
                        writer.add_text(k, v, state.global_step)
                    else:
                        warnings.warn(
                            f"TallyCallback: logs[{k!r}] is a {type(v).__name__}, not a Python number or str; "
                            "not written (as transformers' TensorBoardCallback)",
                            stacklevel=2,
                        )
                writer.flush()

            def _warn_twice(self, args: Any) -> None:
                """Said once when transformers' own TensorBoardCallback writes too: every point
                would be in two runs (stable-baselines3's integration refuses the same pair)."""
                report_to = args.report_to if isinstance(args.report_to, (list, tuple)) else [args.report_to]
                both = "tensorboard" in report_to or ("all" in report_to and utils.is_tensorboard_available())
                if both and not self._warned:
                    self._warned = True
                    warnings.warn(
                        "TallyCallback: report_to includes 'tensorboard', so transformers' TensorBoardCallback logs every "
                        "point too (TensorBoard shows each twice); pass report_to=[] or drop 'tensorboard' from it",
                        stacklevel=3,
                    )

            def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
                self.close()

            def close(self) -> None:
                """Close the run's writer (the Trainer calls it at the end of training)."""
                if self.writer is not None:
                    self.writer.close()
                    self.writer = None

        TallyCallback.__module__ = __name__
        _class = TallyCallback
    return _class


def __getattr__(name: str) -> Any:
    if name == "TallyCallback":
        return _callback_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
