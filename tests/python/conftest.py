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
    """The `tally` CLI, built now so no test runs a stale binary (`TALLY_BIN` names one already
    built instead, e.g. `cargo build -p tally-cli --no-default-features`'s, on a shared machine)."""
    if os.environ.get("TALLY_BIN"):
        path = Path(os.environ["TALLY_BIN"])
        assert path.is_file(), path
        return path
    # The same selection as `make py-test` builds (the whole workspace, examples too): the same
    # features, so this finds everything built instead of building the SQL engine again.
    subprocess.run(["cargo", "build", "-q", "--workspace", "--examples", "--bins"], cwd=REPO, check=True)
    path = target_dir() / "debug" / "tally"
    assert path.is_file(), path
    return path
