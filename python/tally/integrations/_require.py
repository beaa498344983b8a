"""Importing a framework only when its integration is used, with an error naming it."""

from __future__ import annotations

import importlib
from types import ModuleType


def require(module: str, integration: str, package: str) -> ModuleType:
    """``import module`` or an ImportError saying which integration needs which package."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        raise ImportError(f"{integration} needs {package} and its dependencies ({e}): pip install {package}") from e
