"""Importing an optional package only where it is used, with an error that says whether it is
missing or installed and failing, and what failed (docs/contract/consumers.md "Reading from
Python")."""

from __future__ import annotations

import importlib
from types import ModuleType


def require(module: str, who: str, package: str) -> ModuleType:
    """``import module``, or an ImportError naming ``who`` needs ``package`` and why it failed."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        missing = isinstance(e, ModuleNotFoundError) and e.name is not None and (module + ".").startswith(e.name + ".")
        if missing:
            raise ImportError(f"{who} needs {package}, which is not installed: pip install {package}") from e
        raise ImportError(f"{who} needs {package}, which is installed but failed to import: {e}") from e
