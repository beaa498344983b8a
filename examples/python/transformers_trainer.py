"""transformers' Trainer logging through tally: a tiny regression model (built here, nothing
downloaded) trained by ``transformers.Trainer``, its logs written by one callback.

    pip install tally-rl transformers accelerate
    python examples/python/transformers_trainer.py --steps 50
    tensorboard --logdir runs/transformers

The tags are those of transformers' ``TensorBoardCallback`` (``train/loss``, ``eval/loss``...) at
the Trainer's ``global_step``; the TrainingArguments become the run's ``run_config.json``. With
TRL, pass the same callback to ``SFTTrainer``, ``GRPOTrainer``...
"""

from __future__ import annotations

import argparse

import torch
from transformers import Trainer, TrainingArguments, set_seed

from tally.integrations.transformers import TallyCallback


class Regressor(torch.nn.Module):
    """A linear model returning ``{"loss": ...}``, as a Trainer expects of any model."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 1)

    def forward(self, x, labels=None):
        out = self.linear(x).squeeze(-1)
        return {"loss": torch.nn.functional.mse_loss(out, labels), "logits": out}


def dataset(n: int, seed: int) -> list:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    y = x @ torch.tensor([1.0, -2.0, 0.5, 3.0])
    return [{"x": x[i], "labels": y[i]} for i in range(n)]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--log-dir", default="runs/transformers")
    ap.add_argument("--output-dir", default="out/transformers")
    args = ap.parse_args(argv)
    set_seed(0)
    training = TrainingArguments(
        output_dir=args.output_dir, report_to=[], max_steps=args.steps, learning_rate=0.05,
        per_device_train_batch_size=8, logging_steps=1, eval_strategy="steps", eval_steps=10,
        save_strategy="no", use_cpu=True, seed=0,
    )
    trainer = Trainer(model=Regressor(), args=training, train_dataset=dataset(256, 1), eval_dataset=dataset(64, 2),
                      callbacks=[TallyCallback(log_dir=args.log_dir)])  # was: report_to=["tensorboard"]
    trainer.train()


if __name__ == "__main__":
    main()
