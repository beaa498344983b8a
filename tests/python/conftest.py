"""Shared fixtures for the Python tests: the repository root and a freshly built `tally` CLI."""

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def target_dir() -> Path:
    """Cargo's target directory (honours CARGO_TARGET_DIR)."""
    target = Path(os.environ.get("CARGO_TARGET_DIR", "target"))
    return target if target.is_absolute() else REPO / target


@pytest.fixture(scope="session")
def tally_bin() -> Path:
    """The `tally` CLI, built now so no test runs a stale binary."""
    # The same selection as `make py-test` builds (the whole workspace, examples too): the same
    # features, so this finds everything built instead of building the SQL engine again.
    subprocess.run(["cargo", "build", "-q", "--workspace", "--examples", "--bins"], cwd=REPO, check=True)
    path = target_dir() / "debug" / "tally"
    assert path.is_file(), path
    return path
