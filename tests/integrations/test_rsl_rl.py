"""rsl_rl's OnPolicyRunner with its writer taken over through its `logger` configuration
(examples/python/rsl_rl_ppo.py), against the same run with rsl_rl's default torch writer."""

from __future__ import annotations

import pytest

pytest.importorskip("rsl_rl", reason="rsl-rl-lib is not installed (make test-integrations)")

from conftest import import_example, scalars  # noqa: E402

import tally  # noqa: E402
from tally.integrations.rsl_rl import LogWriter, take_over  # noqa: E402

# Wall-clock rates and durations differ between two runs (their steps do not); the "/time"
# curves are stepped by elapsed seconds (their values do not differ).
PERF, BY_TIME = "Perf/", "/time"


def test_the_logger_entry_hands_rsl_rl_a_tally_writer_and_every_scalar_matches(tmp_path):
    example = import_example("rsl_rl_ppo")
    argv = ["--iterations", "10", "--seed", "4"]
    runner = example.main(argv + ["--log-dir", str(tmp_path / "tally")])
    writer = runner.logger.writer
    assert isinstance(writer, LogWriter) and isinstance(writer, tally.SummaryWriter)
    assert writer.file_writer is None  # rsl_rl called stop() at the end of learn()

    cfg = example.train_cfg()
    cfg["logger"] = "tensorboard"
    ref_runner = example.main(argv + ["--log-dir", str(tmp_path / "torch")], cfg)
    ref_runner.logger.writer.close()  # rsl_rl stops only its LogWriter subclasses

    ref, ours = scalars(tmp_path / "torch"), scalars(tmp_path / "tally")
    assert {"Loss/value", "Loss/surrogate", "Train/mean_reward", "Metrics/final_distance", "Episode/return", "Policy/mean_std"} <= set(ref)
    assert set(ours) == set(ref)
    perf = {k for k in ref if k.startswith(PERF)}
    by_time = {k for k in ref if k.endswith(BY_TIME)}
    assert len(perf) == 3 and len(by_time) == 2
    assert {k: v for k, v in ours.items() if k not in perf | by_time} == {k: v for k, v in ref.items() if k not in perf | by_time}
    for k in perf:
        assert [s for s, _ in ours[k]] == [s for s, _ in ref[k]] == list(range(10)), k
    for k in by_time:
        assert [v for _, v in ours[k]] == [v for _, v in ref[k]], k


def test_writer_keywords_come_from_the_logger_entry(tmp_path):
    example = import_example("rsl_rl_ppo")
    cfg = example.train_cfg()
    cfg["logger"] = {"class_name": "tally.integrations.rsl_rl:LogWriter", "filename_suffix": ".rsl"}
    example.main(["--iterations", "2", "--log-dir", str(tmp_path)], cfg)
    (event_file,) = tmp_path.glob("events.out.tfevents.*")
    assert event_file.name.endswith(".rsl")
    assert scalars(tmp_path)["Loss/value"][0][0] == 0


def test_take_over_sets_the_logger_entry(tmp_path):
    example = import_example("rsl_rl_ppo")
    cfg = example.train_cfg()
    cfg["logger"] = "tensorboard"
    runner = example.OnPolicyRunner(example.PointMass(), cfg, log_dir=str(tmp_path), device="cpu")
    take_over(runner, flush_secs=5)
    assert runner.cfg["logger"] == {"class_name": "tally.integrations.rsl_rl:LogWriter", "flush_secs": 5}
    runner.learn(2)
    assert isinstance(runner.logger.writer, LogWriter) and runner.logger.writer.flush_secs == 5
    assert [s for s, _ in scalars(tmp_path)["Loss/value"]] == [0, 1]
