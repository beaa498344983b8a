#!/usr/bin/env python3
"""Draw which file of a crate imports which, and fail on any circle (ARCHITECTURE.md "Floors").

A file imports another when it names an item the other defines: through `use`, a `crate::`,
`super::` or `self::` path, or a path through a child module. Re-exports are followed to the
file that defines the item, so `use crate::Record` is an import of the file defining `Record`,
not of `lib.rs`. A parent declaring `mod child;` does not import the child; naming the child's
items does.

Usage: tools/import_floors.py [CRATE_DIR...]   (default: every crates/*)
       tools/import_floors.py --floors CRATE_DIR   (print each file's floor, lowest first)
Exit status 1 when some crate has a circle, each printed with one import per step.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
ITEM_DEF = re.compile(
    r"\b(?:struct|enum|union|trait|type|fn|const|static|macro_rules!)\s+(" + IDENT + r")"
)
MOD_DECL = re.compile(r"\bmod\s+(" + IDENT + r")\s*;")
# A path that may start an import: a keyword root or any identifier followed by `::`.
PATH = re.compile(r"(?<![A-Za-z0-9_:$])((?:" + IDENT + r")(?:\s*::\s*" + IDENT + r")+)")


def strip(src: str) -> str:
    """The source with comments, strings and char literals blanked (lines kept)."""
    out = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if src.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif src.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    out.append("\n" if src[i] == "\n" else "")
                    i += 1
        elif re.match(r'b?r#*"', src[i:i + 12]) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            m = re.match(r'b?r(#*)"', src[i:])
            end = src.find('"' + m.group(1), i + m.end())
            end = n if end < 0 else end + 1 + len(m.group(1))
            out.append('""' + "\n" * src.count("\n", i, end))
            i = end
        elif c == '"' or (c == "b" and src.startswith('b"', i) and (i == 0 or not src[i - 1].isalnum())):
            i += 2 if c == "b" else 1
            start = i
            while i < n and src[i] != '"':
                i += 2 if src[i] == "\\" else 1
            out.append('""' + "\n" * src.count("\n", start, i))
            i += 1
        elif c == "'":
            # A char literal ('a', '\n', '\u{..}') or a lifetime ('a).
            m = re.match(r"'(?:\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", src[i:])
            if m:
                out.append("' '")
                i += m.end()
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


@dataclass
class Module:
    """One module: a file, or an inline `mod name { .. }` inside one."""

    path: tuple[str, ...]
    file: Path
    items: set[str] = field(default_factory=set)
    children: set[str] = field(default_factory=set)
    # name -> absolute path it imports (`use a::b::C as D` gives D -> (..a, b, C)).
    uses: dict[str, tuple[str, ...]] = field(default_factory=dict)
    globs: list[tuple[str, ...]] = field(default_factory=list)
    # Every path the module's code names, already made absolute where it starts with a keyword
    # root or a child module; kept with the module whose `self` it is relative to.
    refs: list[tuple[str, ...]] = field(default_factory=list)


def expand_use(tree: str) -> list[list[str]]:
    """`a::{b, c::{d as e, *}}` -> [[a, b], [a, c, d as e], [a, c, *]]."""
    tree = re.sub(r"\s+", " ", tree).strip()

    def parse(s: str, prefix: list[str]) -> list[list[str]]:
        s = s.strip()
        if not s:
            return []
        if s.startswith("{"):
            body = s[1:s.rindex("}")]
            parts, depth, cur = [], 0, ""
            for ch in body:
                if ch == "," and depth == 0:
                    parts.append(cur)
                    cur = ""
                    continue
                depth += ch == "{"
                depth -= ch == "}"
                cur += ch
            parts.append(cur)
            return [p for part in parts for p in parse(part, prefix)]
        head, sep, rest = s.partition("::")
        head = head.strip()
        if not sep:
            return [prefix + [head]]
        return parse(rest, prefix + [head])

    return parse(tree.lstrip(":"), [])


class Crate:
    def __init__(self, src: Path):
        self.src = src
        self.modules: dict[tuple[str, ...], Module] = {}
        root = src / "lib.rs"
        if not root.exists():
            root = src / "main.rs"
        self.load(root, ())

    def file_of_child(self, parent_file: Path, parent_path: tuple[str, ...], name: str) -> Path:
        base = parent_file.parent
        if parent_path and parent_file.name not in ("mod.rs", "lib.rs", "main.rs"):
            base = parent_file.with_suffix("")
        for cand in (base / f"{name}.rs", base / name / "mod.rs"):
            if cand.exists():
                return cand
        raise SystemExit(f"{parent_file}: mod {name}; has no file")

    def load(self, file: Path, path: tuple[str, ...]) -> None:
        text = strip(file.read_text())
        self.parse(text, file, path)

    def parse(self, text: str, file: Path, path: tuple[str, ...]) -> None:
        """Parse one module's text; inline `mod x { .. }` blocks become their own modules."""
        mod = Module(path, file)
        self.modules[path] = mod
        # Inline modules: cut their bodies out and parse them as children.
        body = []
        i = 0
        for m in re.finditer(r"\bmod\s+(" + IDENT + r")\s*\{", text):
            if m.start() < i:
                continue
            depth, j = 1, m.end()
            while depth:
                depth += {"{": 1, "}": -1}.get(text[j], 0)
                j += 1
            body.append(text[i:m.start()])
            mod.children.add(m.group(1))
            self.parse(text[m.end():j - 1], file, path + (m.group(1),))
            i = j
        body.append(text[i:])
        own = "".join(body)
        for m in ITEM_DEF.finditer(own):
            mod.items.add(m.group(1))
        for m in MOD_DECL.finditer(own):
            mod.children.add(m.group(1))
            self.load(self.file_of_child(file, path, m.group(1)), path + (m.group(1),))
        for m in re.finditer(r"\buse\s+([^;]+);", own):
            for segs in expand_use(m.group(1)):
                last = segs[-1]
                alias = None
                if " as " in last:
                    last, alias = (p.strip() for p in last.split(" as "))
                    segs = segs[:-1] + [last]
                absolute = self.absolute(mod, segs)
                if absolute is None:
                    continue
                if last == "*":
                    mod.globs.append(absolute[:-1])
                    mod.refs.append(absolute[:-1] + ("*",))
                    continue
                if last == "self":
                    absolute = absolute[:-1]
                    last = absolute[-1] if absolute else last
                name = alias or last
                if name != "_":
                    mod.uses[name] = absolute
                mod.refs.append(absolute)
        no_use = re.sub(r"\buse\s+[^;]+;", ";", own)
        for m in PATH.finditer(no_use):
            segs = [s.strip() for s in m.group(1).split("::")]
            absolute = self.absolute(mod, segs, code=True)
            if absolute is not None:
                mod.refs.append(absolute)

    def absolute(self, mod: Module, segs: list[str], code: bool = False) -> tuple[str, ...] | None:
        """The path from the crate root, or None for another crate's (or std's) path."""
        path = list(mod.path)
        head = segs[0]
        if head == "crate":
            return tuple(segs[1:])
        if head in ("self", "super"):
            while segs and segs[0] in ("self", "super"):
                if segs[0] == "super":
                    path = path[:-1]
                segs = segs[1:]
            return tuple(path + segs)
        if head in mod.children:
            return tuple(path + segs)
        if code and head in mod.uses:
            return mod.uses[head] + tuple(segs[1:])
        return None

    def definers(self, path: tuple[str, ...], seen: frozenset = frozenset()) -> list[Module]:
        """The modules `path` goes through: the one defining what it names, and each module
        re-exporting it on the way (the crate root's re-exports, its public face, excepted)."""
        if path in seen:
            return []
        seen = seen | {path}
        mod = self.modules.get(())
        i = 0
        while i < len(path) and path[i] in mod.children and mod.path + (path[i],) in self.modules:
            mod = self.modules[mod.path + (path[i],)]
            i += 1
        if i == len(path) or path[i] == "*":
            return [mod]
        name = path[i]
        if name in mod.items:
            return [mod]
        via = [mod] if mod.path else []
        if name in mod.uses:
            return via + (self.definers(mod.uses[name] + path[i + 1:], seen) or [mod])
        for g in mod.globs:
            target = self.definers(g + path[i:], seen)
            if target and (path[i] in target[-1].items or target[-1].path == g + path[i:]):
                return via + target
        return [mod]

    def edges(self) -> dict[Path, dict[Path, tuple[str, ...]]]:
        """file -> {imported file: one path that imports it}."""
        out: dict[Path, dict[Path, tuple[str, ...]]] = {}
        for mod in self.modules.values():
            src = out.setdefault(mod.file, {})
            for ref in mod.refs:
                for target in self.definers(ref):
                    if target.file != mod.file:
                        src.setdefault(target.file, ref)
        return out


def circles(edges: dict[Path, dict[Path, tuple[str, ...]]]) -> list[list[Path]]:
    """Strongly connected components with more than one file (Tarjan's algorithm)."""
    index: dict[Path, int] = {}
    low: dict[Path, int] = {}
    stack: list[Path] = []
    on: set[Path] = set()
    found: list[list[Path]] = []
    sys.setrecursionlimit(10000)

    def visit(v: Path) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def floors(edges: dict[Path, dict[Path, tuple[str, ...]]]) -> dict[Path, int]:
    """Floor 0 imports nothing of its crate; floor n imports only floors below n."""
    memo: dict[Path, int] = {}

    def floor(v: Path) -> int:
        if v not in memo:
            memo[v] = 0
            memo[v] = 1 + max((floor(w) for w in edges.get(v, {})), default=-1)
        return memo[v]

    for v in edges:
        floor(v)
    return memo


def main(argv: list[str]) -> int:
    show_floors = "--floors" in argv
    argv = [a for a in argv if a != "--floors"]
    repo = Path(__file__).resolve().parent.parent
    dirs = [Path(a) for a in argv] or sorted((repo / "crates").iterdir())
    bad = 0
    for d in dirs:
        src = d / "src"
        if not src.is_dir():
            continue
        edges = Crate(src).edges()
        rel = lambda p: p.relative_to(src).as_posix()  # noqa: E731
        if show_floors:
            for f, n in sorted(floors(edges).items(), key=lambda kv: (kv[1], str(kv[0]))):
                print(f"{d.name} {n:2} {rel(f)}")
        for comp in circles(edges):
            bad += 1
            print(f"{d.name}: a circle of {len(comp)} files:")
            members = set(comp)
            for f in comp:
                for g, ref in sorted(edges[f].items()):
                    if g in members:
                        print(f"  {rel(f)} -> {rel(g)}  ({'::'.join(ref)})")
    if bad:
        print(f"{bad} circle(s) of imports; ARCHITECTURE.md \"Floors\" says how to break one")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
