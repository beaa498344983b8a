"""tools/import_floors.py, the check that no crate's files import each other in a circle
(ARCHITECTURE.md "Floors"): each kind of import it must see, on crates made here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TOOL = Path(__file__).resolve().parents[2] / "tools" / "import_floors.py"


def crate(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "src" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def check(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(TOOL), str(root)], capture_output=True, text=True, check=False
    )


def test_a_crate_in_floors_passes(tmp_path):
    root = crate(
        tmp_path,
        {
            "lib.rs": "mod a;\nmod b;\npub use a::A;\n",
            "a.rs": "pub struct A;\n",
            "b.rs": "use crate::a::A;\npub fn f(_: A) {}\n",
        },
    )
    r = check(root)
    assert r.returncode == 0, r.stdout


def test_two_files_naming_each_others_items_are_a_circle(tmp_path):
    root = crate(
        tmp_path,
        {
            "lib.rs": "mod a;\nmod b;\n",
            "a.rs": "use crate::b::B;\npub struct A;\n",
            # An inline path, not a `use`: still an import.
            "b.rs": "pub struct B;\nfn f() -> usize { crate::a::A; 0 }\n",
        },
    )
    r = check(root)
    assert r.returncode == 1
    assert "a.rs -> b.rs" in r.stdout and "b.rs -> a.rs" in r.stdout, r.stdout


def test_a_child_reaching_up_into_the_parent_that_uses_it_is_a_circle(tmp_path):
    root = crate(
        tmp_path,
        {
            "lib.rs": "mod w;\n",
            "w.rs": "mod child;\npub struct Shared;\nfn g() { child::f(); }\n",
            "w/child.rs": "use super::Shared;\npub fn f() {}\n",
        },
    )
    r = check(root)
    assert r.returncode == 1
    assert "w/child.rs -> w.rs" in r.stdout and "w.rs -> w/child.rs" in r.stdout, r.stdout


def test_a_re_export_is_followed_to_the_file_that_defines_the_item(tmp_path):
    # c imports X through m's re-export: c depends on m and on d, and d on c closes a circle
    # only a tool that follows the re-export sees.
    root = crate(
        tmp_path,
        {
            "lib.rs": "mod c;\nmod m;\n",
            "m.rs": "mod d;\npub use d::X;\n",
            "m/d.rs": "use crate::c::C;\npub struct X;\n",
            "c.rs": "use crate::m::X;\npub struct C;\n",
        },
    )
    r = check(root)
    assert r.returncode == 1
    assert "c.rs -> m/d.rs" in r.stdout and "m/d.rs -> c.rs" in r.stdout, r.stdout


def test_an_inline_test_module_using_its_own_file_is_no_import(tmp_path):
    root = crate(
        tmp_path,
        {
            "lib.rs": "mod a;\n",
            "a.rs": "pub fn f() {}\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
        },
    )
    assert check(root).returncode == 0


def test_paths_in_comments_and_strings_are_not_imports(tmp_path):
    root = crate(
        tmp_path,
        {
            "lib.rs": "mod a;\nmod b;\n",
            "a.rs": "use crate::b::B;\npub struct A;\n",
            "b.rs": '// crate::a::A\npub struct B;\nconst S: &str = "crate::a::A";\n',
        },
    )
    assert check(root).returncode == 0


def test_the_workspace_has_no_circle():
    r = subprocess.run([sys.executable, str(TOOL)], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stdout
