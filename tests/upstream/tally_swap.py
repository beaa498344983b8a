"""A pytest plugin that runs tensorboardX's and torch's own writer tests against tally's writers
(docs/contract/integrations.md "Their own test suites"): loaded with ``-p tally_swap`` before the
suites import, it puts ``tally.tensorboardX.SummaryWriter`` and ``GlobalSummaryWriter`` where
``from tensorboardX import ...`` finds them, and ``tally.SummaryWriter`` where ``from
torch.utils.tensorboard import SummaryWriter`` does. Nothing else of either library changes:
their summary functions, protos and readers are their own."""

import importlib

import tally
import tally.tensorboardX


def _swap(module: str, names: dict) -> None:
    try:
        mod = importlib.import_module(module)
    except ImportError:  # the suite that needs it is skipped or fails on its own import
        return
    for name, value in names.items():
        setattr(mod, name, value)


_swap("tensorboardX", {"SummaryWriter": tally.tensorboardX.SummaryWriter, "GlobalSummaryWriter": tally.tensorboardX.GlobalSummaryWriter})
_swap("torch.utils.tensorboard", {"SummaryWriter": tally.SummaryWriter})
