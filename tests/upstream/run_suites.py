"""Run tensorboardX's and torch's own writer tests twice, with their writer and with tally's,
and hold tally to the list of failures docs/contract/integrations.md gives reasons for ("Their
own test suites"): a test that fails only with tally and is not listed fails this run, and so
does a listed test that now passes (the list is stale). Tests that fail with the library's own
writer too (a missing optional package) say nothing about tally and are only counted.

    python tests/upstream/run_suites.py --tensorboardx SDIST_DIR [--torch TEST_TENSORBOARD_PY]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

HERE = Path(__file__).resolve().parent
DOC = HERE.parents[1] / "docs" / "contract" / "integrations.md"
SECTION = "## Their own test suites"

# tensorboardX's test files that drive a SummaryWriter (the rest test its summary functions,
# record writers and protos, which tally does not replace).
TBX_FILES = [
    "test_writer.py",
    "test_summary_writer.py",
    "test_hparams.py",
    "test_multiprocess_write.py",
    "test_figure.py",
    "test_pr_curve.py",
    "test_embedding.py",
    "test_pytorch_np.py",
    "test_pytorch_graph.py",
    "test_onnx_graph.py",
    "test_record_writer.py",
    "test_chainer_np.py",
    "test_openvino_graph.py",
]


def outcomes(cwd: Path, args: List[str], swap: bool) -> Dict[str, str]:
    """{test id: passed | failed | skipped} of one pytest run."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.xml"
        env = dict(os.environ)
        plugin: List[str] = []
        if swap:
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), env.get("PYTHONPATH")]))
            plugin = ["-p", "tally_swap"]
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *plugin, f"--junitxml={report}", *args]
        subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=1800)
        if not report.exists():
            raise SystemExit(f"pytest wrote no report in {cwd} ({' '.join(cmd)})")
        out = {}
        for case in ET.parse(report).iter("testcase"):
            kinds = {child.tag for child in case}
            status = "failed" if kinds & {"failure", "error"} else "skipped" if "skipped" in kinds else "passed"
            out[f"{case.get('classname')}.{case.get('name')}"] = status
        return out


def documented(suite: str) -> Dict[str, str]:
    """{test id: why} from the doc's table rows for ``suite``."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    rows = {}
    for line in text[start : end if end != -1 else len(text)].splitlines():
        m = re.match(r"\|\s*(\S+)\s*\|\s*`([^`]+)`\s*\|\s*(.+?)\s*\|$", line)
        if m and m.group(1) == suite:
            rows[m.group(2)] = m.group(3)
    return rows


def compare(suite: str, ref: Dict[str, str], ours: Dict[str, str]) -> Tuple[List[str], str]:
    """The problems found, and the counts line."""
    def count(o: Dict[str, str], s: str) -> int:
        return sum(1 for v in o.values() if v == s)

    line = (
        f"{suite}: own writer {count(ref, 'passed')} passed, {count(ref, 'failed')} failed, {count(ref, 'skipped')} skipped;"
        f" tally {count(ours, 'passed')} passed, {count(ours, 'failed')} failed, {count(ours, 'skipped')} skipped"
    )
    ours_only: Set[str] = {t for t, s in ours.items() if s == "failed" and ref.get(t) == "passed"}
    listed = documented(suite)
    problems = [f"{suite}: {t} fails with tally and is not in {DOC.name} \"{SECTION[3:]}\"" for t in sorted(ours_only - set(listed))]
    problems += [f"{suite}: {t} is listed in {DOC.name} but does not fail with tally ({ours.get(t, 'not run')})" for t in sorted(set(listed) - ours_only)]
    return problems, line


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tensorboardx", type=Path, required=True, help="tensorboardX's unpacked sdist (its tests/ directory inside)")
    ap.add_argument("--torch", type=Path, help="torch's test/test_tensorboard.py from a PyTorch checkout (torch ships no sdist)")
    a = ap.parse_args(argv)
    runs = [("tensorboardX", a.tensorboardx, [f"tests/{f}" for f in TBX_FILES])]
    if a.torch is not None:
        runs.append(("torch", a.torch.parent, [a.torch.name]))
    problems: List[str] = []
    for suite, cwd, args in runs:
        ref, ours = outcomes(cwd, args, swap=False), outcomes(cwd, args, swap=True)
        found, line = compare(suite, ref, ours)
        print(line)
        problems += found
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
