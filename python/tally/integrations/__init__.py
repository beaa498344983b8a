"""Framework integrations: one line to move a training library's logging onto tally.

- stable-baselines3: :mod:`tally.integrations.sb3` (an output format, ``"tally"``, beside
  SB3's ``stdout``/``csv``/``json``; it writes what SB3's ``tensorboard`` format writes).
- rsl_rl: :mod:`tally.integrations.rsl_rl` (``{"class_name": "tally.integrations.rsl_rl:LogWriter"}``
  as the runner configuration's ``logger``).
- skrl: :mod:`tally.integrations.skrl` (``install()`` before the trainer is built).
- TorchRL: :mod:`tally.integrations.torchrl` (its ``TensorboardLogger``, imported from here).
- transformers / TRL: :mod:`tally.integrations.transformers` (``callbacks=[TallyCallback()]``).
- Trinity-RFT: :mod:`tally.integrations.trinity` (``monitor_type: tally.integrations.trinity.TallyMonitor``,
  or ``tally`` once this module is imported).
- verl: :mod:`tally.integrations.verl` (``install()``, then ``trainer.logger=['console','tally']``).
- CleanRL and any script that creates torch's ``SummaryWriter`` itself: ``from tally import
  SummaryWriter``.

Importing this package (or any module in it) never imports a framework or torch: each
integration imports its framework when first used and raises an ``ImportError`` naming the
missing package (docs/contract/integrations.md "Importing").
"""

__all__ = ["rsl_rl", "sb3", "skrl", "torchrl", "transformers", "trinity", "verl"]
