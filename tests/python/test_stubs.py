"""The package's typed surface: hand-written stubs match the compiled module (mypy.stubtest),
the pure-Python modules type-check strictly against them, `py.typed` ships, the public
`__all__` is curated, and the exception tree subclasses the natural builtins."""

import subprocess
import sys
from pathlib import Path

import pytest

import tally
import tally._tally

PKG = Path(tally.__file__).parent
REPO = Path(__file__).resolve().parents[2]


def test_stubtest_finds_the_stubs_match_the_compiled_module():
    proc = subprocess.run([sys.executable, "-m", "mypy.stubtest", "tally._tally"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_pure_python_modules_type_check_strictly_against_the_stubs():
    src = REPO / "python" / "tally"
    files = [str(src / f) for f in ("__init__.py", "__main__.py", "_console.py", "_read.py", "_signals.py", "_wandb.py", "_mlflow.py", "_trackio.py", "_sink_thread.py", "summary_writer.py", "tensorboardX.py", "_writer_config.py", "_writer_args.py", "_event_files.py", "_mirrors.py", "_hparams.py", "distributed.py", "health.py")]
    files += [str(p) for p in sorted((src / "integrations").glob("*.py"))]
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-incremental", *files],
        capture_output=True, text=True, timeout=600, cwd=REPO,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_py_typed_and_the_stub_are_installed_with_the_package():
    assert (PKG / "py.typed").is_file()
    assert (PKG / "_tally.pyi").is_file()
    assert Path(tally._tally.__file__).name.startswith("_tally.")


def test_public_names_are_curated_and_all_exist():
    assert sorted(tally.__all__) == sorted(
        ["Logger", "Phase", "SummaryWriter", "WandbSink", "MlflowSink", "TrackioSink", "EventWriter", "distributed", "read", "read_runs", "runs", "compare", "sql", "TruncatedEventFileWarning", "StepsGoBackWarning",
             "PurgedPointsWarning", "UnreadableRunWarning", "TallyError", "SchemaError",
         "ConfigError", "ClosedError", "ValueTypeError", "StorageError", "SinkError", "HealthStop", "health", "METRIC_SCHEMA_VERSION", "__version__"]
    )  # fmt: skip
    for name in tally.__all__:
        assert getattr(tally, name) is not None
    assert tally.Logger is tally._tally.Logger


@pytest.mark.parametrize(
    "cls, builtin",
    [
        (tally.SchemaError, ValueError),
        (tally.ConfigError, ValueError),
        (tally.ClosedError, ValueError),
        (tally.ValueTypeError, TypeError),
        (tally.StorageError, OSError),
        (tally.SinkError, OSError),
        (tally.HealthStop, Exception),
    ],
)
def test_every_error_is_a_tally_error_and_its_natural_builtin(cls, builtin):
    assert issubclass(cls, tally.TallyError) and issubclass(cls, builtin)
    assert cls.__module__ == "tally" and cls.__doc__
    with pytest.raises(builtin):
        raise cls("x")


def test_the_version_matches_the_installed_distribution():
    from importlib.metadata import version

    assert version("tally-rl") == tally.__version__  # the PyPI distribution name (pyproject.toml)
