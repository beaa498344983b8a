"""An optional package that is installed but fails to import is named with what failed, not
reported as missing (docs/contract/consumers.md "Reading from Python"): telling a user with
pyarrow installed to `pip install pyarrow` sends them the wrong way."""

import subprocess
import sys
import textwrap


def run(code, tmp_path):
    # A package directory named like the real one, raising on import: first on sys.path.
    for name in ("pyarrow", "wandb"):
        pkg = tmp_path / name
        pkg.mkdir(exist_ok=True)
        (pkg / "__init__.py").write_text("raise ImportError('libarrow.so.2000: cannot open shared object file')\n")
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env={"PYTHONPATH": str(tmp_path)}, timeout=120)


def test_a_broken_pyarrow_is_named_as_broken_not_missing(tmp_path):
    (tmp_path / "runs").mkdir()
    out = run(
        f"""
        import tally
        try:
            tally.read({str(tmp_path / 'runs')!r})
        except ImportError as e:
            print(e)
        """,
        tmp_path,
    )
    assert "needs pyarrow, which is installed but failed to import" in out.stdout, out
    assert "libarrow.so.2000" in out.stdout, out
    assert "pip install pyarrow" not in out.stdout, out


def test_a_broken_wandb_is_named_as_broken_not_missing(tmp_path):
    out = run(
        """
        from tally._wandb import import_wandb
        try:
            import_wandb()
        except ImportError as e:
            print(e)
        """,
        tmp_path,
    )
    assert "needs wandb, which is installed but failed to import" in out.stdout and "libarrow.so.2000" in out.stdout, out


def test_a_missing_pyarrow_names_the_function_that_needs_it(tmp_path):
    (tmp_path / "runs").mkdir()
    calls = {
        "tally.read": "tally.read(d)",
        "tally.read_runs": "tally.read_runs(d)",
        "tally.runs": "tally.runs(d)",
        "tally.compare": "tally.compare(d, 'x')",
        "tally.sql": "tally.sql(d, 'SELECT 1')",
    }
    for name, call in calls.items():
        code = f"import sys; sys.modules['pyarrow'] = None\nimport tally\nd = {str(tmp_path / 'runs')!r}\ntry:\n    {call}\nexcept ImportError as e:\n    print(e)"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert out.stdout.startswith(f"{name} (which returns a pyarrow Table) needs pyarrow"), (name, out)


def test_a_missing_package_still_says_how_to_install_it(tmp_path):
    out = subprocess.run(
        [sys.executable, "-c", "import sys; sys.modules['pyarrow'] = None\nimport tally\ntry:\n    tally.read('.')\nexcept ImportError as e:\n    print(e)"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "pip install pyarrow" in out.stdout, out
