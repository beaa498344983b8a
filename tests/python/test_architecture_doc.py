"""ARCHITECTURE.md and the docs point at code that exists: every crate has its paragraph in "What
each crate owns", every file a paragraph names is in that crate, and every `crates/...` path the
docs cite is there. A move that leaves the map behind fails here. (BENCHMARKS.md is a log of past
rounds: its paths are history and are not checked.)"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARCH = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
DOCS = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", ROOT / "RELIABILITY.md", *sorted((ROOT / "docs").rglob("*.md"))]
CRATES = sorted(p.name for p in (ROOT / "crates").iterdir() if (p / "Cargo.toml").exists())


def paragraphs():
    """{crate: its paragraph's text}: a list item `- `crates/NAME` ...` and the indented lines
    that continue it."""
    out = {}
    crate = None
    for line in ARCH.splitlines():
        m = re.match(r"- `crates/([a-z-]+)` (.*)", line)
        if m:
            crate = m.group(1)
            out[crate] = m.group(2)
        elif crate and line.startswith("  "):
            out[crate] += " " + line.strip()
        else:
            crate = None
    return out


def expand(path):
    """`a/{b,c.rs}` -> [`a/b`, `a/c.rs`]."""
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return [path]
    return [p for alt in m.group(1).split(",") for p in expand(path[: m.start()] + alt + path[m.end() :])]


def test_every_crate_has_a_paragraph():
    assert sorted(paragraphs()) == CRATES


@pytest.mark.parametrize("crate", CRATES)
def test_every_file_a_paragraph_names_is_in_its_crate(crate):
    src = ROOT / "crates" / crate / "src"
    files = {p.relative_to(src).as_posix() for p in src.rglob("*.rs")}
    dirs = {p.relative_to(src).as_posix() + "/" for p in src.rglob("*") if p.is_dir()}
    missing = []
    for token in re.findall(r"`([A-Za-z0-9_./{},-]+(?:\.rs|/))`", paragraphs().get(crate, "")):
        if token.startswith(("docs/", "tests/", "schemas/", "crates/")):
            continue
        for name in expand(token):
            if not any(f == name or f.endswith("/" + name) for f in files | dirs):
                missing.append(name)
    assert not missing, f"{crate}'s paragraph names files it does not have: {missing}"


def test_every_crates_path_the_docs_cite_exists():
    missing = []
    for doc in DOCS:
        for token in re.findall(r"`(crates/[A-Za-z0-9_./{},-]+)`", doc.read_text(encoding="utf-8")):
            for path in expand(token):
                if not (ROOT / path.rstrip("/")).exists():
                    missing.append(f"{doc.relative_to(ROOT)}: {path}")
    assert not missing, missing
