"""`import tally` and the framework integrations never import a framework or torch, and using
an integration without its framework fails with an ImportError naming the package.

Each check runs in a fresh interpreter with the frameworks and torch made unimportable
(`sys.modules[name] = None`), so the result is the same whether or not they are installed."""

import subprocess
import sys
import textwrap

BLOCK = """
import sys
for name in ("stable_baselines3", "torch", "gymnasium", "rsl_rl", "skrl", "torchrl", "transformers", "trinity", "verl"):
    sys.modules[name] = None  # import of it now raises ModuleNotFoundError
"""


def run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", BLOCK + textwrap.dedent(code)], capture_output=True, text=True, timeout=120)


def test_importing_tally_and_its_integrations_imports_no_framework():
    r = run(
        """
        import sys
        for name in ("stable_baselines3", "torch", "gymnasium", "rsl_rl", "skrl", "torchrl", "transformers", "trinity", "verl"):
            sys.modules.pop(name)  # importable again (if installed): nothing may import them
        import tally, tally.integrations
        from tally.integrations import *
        from tally.integrations import rsl_rl, sb3, skrl, torchrl, transformers, trinity, verl
        heavy = sorted(m for m in ("torch", "stable_baselines3", "gymnasium", "tensorboard", "rsl_rl", "skrl", "torchrl", "transformers", "trinity", "verl", "ray") if m in sys.modules)
        print("heavy:", heavy)
        print("format:", sb3.FORMAT)
        """
    )
    assert r.returncode == 0, r.stderr
    assert "heavy: []" in r.stdout
    assert "format: tally" in r.stdout


def test_blocked_imports_are_really_blocked():
    # Guards the other tests: with the block in place, SB3 cannot be imported.
    r = run("import stable_baselines3")
    assert r.returncode != 0 and "ModuleNotFoundError" in r.stderr


def test_using_the_sb3_format_without_sb3_names_the_package():
    for use in (
        "sb3.configure('out', ['tally'])",
        "sb3.TallyOutputFormat('out')",
        "from tally.integrations.sb3 import TallyOutputFormat",
        "sb3.make_output_format('tally', 'out')",
    ):
        r = run(
            f"""
            from tally.integrations import sb3
            try:
                {use}
            except ImportError as e:
                print("ImportError:", e)
            """
        )
        assert r.returncode == 0, (use, r.stderr)
        assert "ImportError: tally.integrations.sb3 needs stable-baselines3" in r.stdout, (use, r.stdout)
        assert "pip install stable-baselines3" in r.stdout, (use, r.stdout)


def test_an_unknown_attribute_is_an_attribute_error():
    r = run(
        """
        from tally.integrations import sb3
        try:
            sb3.TensorBoardOutputFormat
        except AttributeError as e:
            print("AttributeError:", e)
        """
    )
    assert r.returncode == 0, r.stderr
    assert "has no attribute 'TensorBoardOutputFormat'" in r.stdout


def test_the_other_integrations_without_their_framework_name_the_package():
    for use, package in (
        ("from tally.integrations.rsl_rl import LogWriter", "rsl-rl-lib"),
        ("from tally.integrations.rsl_rl import take_over; take_over(object())", "rsl-rl-lib"),
        ("from tally.integrations.torchrl import TensorboardLogger", "torchrl"),
        ("import tally.integrations.skrl as m; m.install()", "skrl"),
        ("from tally.integrations.transformers import TallyCallback", "transformers"),
        ("from tally.integrations.trinity import TallyMonitor", "trinity-rft"),
        ("import tally.integrations.verl as m; m.install()", "verl"),
    ):
        r = run(
            f"""
            try:
                {use}
            except ImportError as e:
                print("ImportError:", e)
            """
        )
        assert r.returncode == 0, (use, r.stderr)
        assert f"needs {package}, which is not installed: pip install {package}" in r.stdout, (use, r.stdout)
