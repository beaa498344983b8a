"""Framework integrations: one line to move a training library's logging onto tally.

- stable-baselines3: :mod:`tally.integrations.sb3` (an output format, ``"tally"``, beside
  SB3's ``stdout``/``csv``/``json``; it writes what SB3's ``tensorboard`` format writes).
- CleanRL, rsl_rl, skrl, TorchRL and anything else built on torch's ``SummaryWriter``: hand
  them :class:`tally.SummaryWriter` (see ``examples/`` for each).

Importing this package (or any module in it) never imports a framework or torch: each
integration imports its framework when first used and raises an ``ImportError`` naming the
missing package.
"""

__all__ = ["sb3"]
