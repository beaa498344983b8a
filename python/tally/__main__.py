"""``python -m tally ...`` and the ``tally`` console script: the same CLI as the Rust binary.

Run through the Python package, ``tally demo ... training.logger=wandb`` logs through the W&B SDK.
"""

from __future__ import annotations

import sys
from typing import Optional, Sequence


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the ``tally`` command line; returns its exit code."""
    from tally._tally import cli_main

    args = list(sys.argv[1:] if argv is None else argv)
    return cli_main(["tally", *args])


if __name__ == "__main__":
    sys.exit(main())
