"""The artefacts to publish (`make wheel`, checked by `make wheel-check`): the wheel is tagged abi3
+ manylinux2014 in its file name and its WHEEL file, its extension is stripped, auditwheel (reading the extension's ELF
symbol versions) agrees that glibc 2.17 suffices, and a fresh virtualenv with no Rust toolchain
on PATH installs it offline and gets `import tally` and the `tally` command. The sdist carries
the whole Cargo workspace, so platforms without a wheel can build from source.

Not part of `make py-test` (the wheel is built by its own target): `make test` runs it on the
test wheel (`make test-wheel-check`: the same packaging on the `dev` profile), `make wheel-check`
on the published one. TALLY_WHEEL_DIR is where the wheel was written, TALLY_WHEEL_PYTHONS the
interpreters to install into (space-separated)."""

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from packaging.tags import Tag
from packaging.utils import canonicalize_name, parse_sdist_filename, parse_wheel_filename
from tensorboard.backend.event_processing import event_accumulator

REPO = Path(__file__).resolve().parents[2]
DIST = REPO / os.environ.get("TALLY_WHEEL_DIR", "dist")
PYTHONS = os.environ.get("TALLY_WHEEL_PYTHONS", "python3").split()
NAME = "tally-rl"  # the PyPI distribution name; the import name stays `tally`
ARCH = platform.machine()
# The floor the wheel promises: manylinux2014 is manylinux_2_17 (PEP 600's alias).
GLIBC_FLOOR = (2, 17)


def only(pattern: str) -> Path:
    found = sorted(DIST.glob(pattern))
    assert len(found) == 1, f"expected exactly one {pattern} in {DIST} (run `make wheel`), found {[p.name for p in found]}"
    return found[0]


@pytest.fixture(scope="module")
def wheel() -> Path:
    return only("tally_rl-*.whl")


def test_file_name_is_abi3_manylinux2014_under_the_pypi_name(wheel):
    name, version, _, tags = parse_wheel_filename(wheel.name)
    assert name == canonicalize_name(NAME)
    assert tags == {Tag("cp39", "abi3", f"manylinux2014_{ARCH}"), Tag("cp39", "abi3", f"manylinux_2_17_{ARCH}")}
    with zipfile.ZipFile(wheel) as z:
        info = f"tally_rl-{version}.dist-info"
        meta = Parser().parsestr(z.read(f"{info}/METADATA").decode())
        wheel_file = Parser().parsestr(z.read(f"{info}/WHEEL").decode())
        names = set(z.namelist())
    # pip trusts the file name, PyPI and installers also read these: they must agree with it.
    assert {Tag(*t.split("-")) for t in wheel_file.get_all("Tag")} == tags
    assert wheel_file["Root-Is-Purelib"] == "false"
    assert meta["Name"] == NAME and meta["Version"] == str(version)
    assert meta["Requires-Python"] == ">=3.9"  # the same floor as the cp39-abi3 tag
    assert {"tally/__init__.py", "tally/_tally.abi3.so", "tally/_tally.pyi", "tally/py.typed"} <= names


def test_auditwheel_finds_no_symbol_newer_than_glibc_2_17(wheel):
    proc = subprocess.run([sys.executable, "-m", "auditwheel", "show", str(wheel)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = " ".join(proc.stdout.split())  # auditwheel wraps its lines
    m = re.search(r'consistent with the following platform tag: "manylinux_(\d+)_(\d+)_(\w+)"', text)
    assert m, text
    assert (int(m[1]), int(m[2])) <= GLIBC_FLOOR and m[3] == ARCH, text


def test_the_extension_carries_no_symbol_table_or_debug_information(wheel):
    # Every `pip install` downloads what the module carries: symbols and debug information are
    # for a debugger, not for users (pyproject.toml's `strip`; BENCHMARKS.md "Building").
    import io

    from elftools.elf.elffile import ELFFile  # auditwheel's ELF reader

    with zipfile.ZipFile(wheel) as z:
        elf = ELFFile(io.BytesIO(z.read("tally/_tally.abi3.so")))
        sections = [s.name for s in elf.iter_sections()]
    assert ".text" in sections, sections
    assert not [s for s in sections if s == ".symtab" or s.startswith(".debug")], sections


@pytest.mark.parametrize("python", PYTHONS)
def test_a_fresh_venv_without_rust_installs_it_offline_and_runs_tally(wheel, python, tmp_path):
    interp = shutil.which(python)
    assert interp, f"TALLY_WHEEL_PYTHONS names {python!r}, which is not on PATH"
    venv = tmp_path / "venv"
    subprocess.run([interp, "-m", "venv", str(venv)], check=True)
    bindir = venv / "bin"
    # Only the venv and the system's basic tools: a source build would find no cargo/rustc.
    path = os.pathsep.join([str(bindir), "/usr/bin", "/bin"])
    assert shutil.which("cargo", path=path) is None and shutil.which("rustc", path=path) is None, path
    env = {"PATH": path, "HOME": str(tmp_path), "PIP_DISABLE_PIP_VERSION_CHECK": "1", "LANG": "C.UTF-8"}

    def run(*args: str) -> str:
        proc = subprocess.run(list(args), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"{args}: {proc.stdout}{proc.stderr}"
        return proc.stdout

    run(str(bindir / "python"), "-m", "pip", "install", "--no-index", "--no-deps", "-q", str(wheel))
    _, version, _, _ = parse_wheel_filename(wheel.name)
    log_dir = tmp_path / "run"
    out = run(
        str(bindir / "python"), "-c",
        "import json, sys, tally\n"
        "w = tally.SummaryWriter(log_dir=sys.argv[1])\n"
        "w.add_scalar('charts/x', 1.5, 3)\n"
        "w.close()\n"
        "print(json.dumps([tally.__version__, tally.__file__]))",
        str(log_dir),
    )  # fmt: skip
    got_version, got_file = json.loads(out)
    assert got_version == str(version)
    assert Path(got_file).is_relative_to(venv), got_file  # the installed copy, not the source tree
    assert run(str(bindir / "tally"), "--version").strip() == f"tally {version}"
    # The extension really works from the clean venv: TensorBoard reads what it wrote.
    acc = event_accumulator.EventAccumulator(str(log_dir)).Reload()
    assert [(e.step, e.value) for e in acc.Scalars("charts/x")] == [(3, 1.5)]


def test_sdist_carries_the_whole_cargo_workspace(tmp_path):
    sdist = only("tally_rl-*.tar.gz")
    name, version = parse_sdist_filename(sdist.name)
    assert name == canonicalize_name(NAME)
    with tarfile.open(sdist) as t:
        # The "data" filter (no absolute paths or links out) where this Python has it.
        t.extractall(tmp_path, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    root = tmp_path / f"tally_rl-{version}"

    def members(manifest: Path) -> set:
        # --no-deps: the workspace's own manifests only, so nothing is fetched.
        proc = subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--no-deps", "--offline", "--manifest-path", str(manifest)],
            capture_output=True, text=True,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        meta = json.loads(proc.stdout)
        return {p["name"] for p in meta["packages"] if p["id"] in meta["workspace_members"]}

    assert members(root / "Cargo.toml") == members(REPO / "Cargo.toml")
    # The dependency versions the tests ran against, not a fresh resolution on the user's machine.
    assert (root / "Cargo.lock").read_bytes() == (REPO / "Cargo.lock").read_bytes()
