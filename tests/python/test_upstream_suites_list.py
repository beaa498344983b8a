"""The list of tensorboardX's and torch's own tests that fail with tally
(docs/contract/integrations.md "Their own test suites") is what `make test-upstream` holds tally
to: the runner reads it from the doc and flags a failure not listed and a listed test that passes."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "upstream"))
import run_suites  # noqa: E402


def test_the_doc_lists_both_suites_with_a_reason_each():
    for suite in ("tensorboardX", "torch"):
        rows = run_suites.documented(suite)
        assert rows, suite
        assert all(len(why) > 20 for why in rows.values()), rows


def test_an_unlisted_failure_and_a_stale_entry_are_both_problems():
    listed = next(iter(run_suites.documented("torch")))
    ref = {listed: "passed", "new.Test.test_x": "passed", "env.Test.test_y": "failed"}
    ours = {listed: "failed", "new.Test.test_x": "failed", "env.Test.test_y": "failed"}
    problems, line = run_suites.compare("torch", ref, ours)
    assert line == "torch: own writer 2 passed, 1 failed, 0 skipped; tally 0 passed, 3 failed, 0 skipped"
    assert any("new.Test.test_x fails with tally and is not in" in p for p in problems)
    assert not any("env.Test.test_y" in p for p in problems)  # fails with the library's own writer too
    ours[listed] = "passed"
    problems, _ = run_suites.compare("torch", ref, ours)
    assert any(f"{listed} is listed" in p for p in problems)
