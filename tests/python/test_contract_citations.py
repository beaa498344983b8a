"""Every citation of the contract in the repository points at a page, and a section, that exist.

Code comments and tests cite `docs/contract/<page>.md`, optionally followed by a quoted section
heading; a renamed page or heading must not leave citations pointing nowhere.
"""

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "docs" / "contract"
# A page, then (through comment markers, backticks, commas, brackets or a line break) a quoted
# section heading, if any.
CITATION = re.compile(r'docs/contract/([a-z0-9-]+)\.md([`\s,(/!#*]*"([^"]+)")?')
COMMENT_BREAK = re.compile(r"\s*\n\s*(?://!|///|//|#)?\s*")


def _tracked_files():
    out = subprocess.run(
        ["git", "ls-files", "crates", "python", "tests", "docs", "examples", "bench", "*.md"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split()
    return [ROOT / f for f in out if f.endswith((".rs", ".py", ".pyi", ".md", ".toml"))]


def _headings(page):
    text = (CONTRACT / f"{page}.md").read_text(encoding="utf-8")
    return {line[3:].strip() for line in text.splitlines() if line.startswith("## ")}


def _citations():
    for path in _tracked_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for m in CITATION.finditer(text):
            section = m.group(3)
            if section is not None:
                section = COMMENT_BREAK.sub(" ", section)
            line = text.count("\n", 0, m.start()) + 1
            yield f"{path.relative_to(ROOT)}:{line}", m.group(1), section


CITED = list(_citations())


def test_the_repository_cites_the_contract():
    assert len(CITED) > 50, "comments should cite docs/contract pages"


@pytest.mark.parametrize("where,page,section", CITED, ids=[c[0] for c in CITED])
def test_each_citation_names_an_existing_page_and_heading(where, page, section):
    assert (CONTRACT / f"{page}.md").is_file(), f"{where}: no page docs/contract/{page}.md"
    if section is not None:
        assert section in _headings(page), (
            f'{where}: docs/contract/{page}.md has no section "{section}" '
            f"(sections: {sorted(_headings(page))})"
        )
