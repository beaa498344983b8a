"""Input rules that cannot poison a run, from Python (docs/contract/step.md "Input bounds"):
a refused call changes nothing, so the next normal one works; every argument error names the
argument; values float32 cannot hold are persisted and counted as the Rust logger does. Event
files are read back with TensorBoard's EventAccumulator."""

import json
import math
from pathlib import Path

import pytest
from tensorboard.backend.event_processing import event_accumulator

import tally
from tally._tally import EventWriter

KEEP_ALL = {event_accumulator.SCALARS: 0}


def scalars(log_dir):
    """{(tag, step): value} of every scalar in the directory, via EventAccumulator."""
    acc = event_accumulator.EventAccumulator(str(log_dir), size_guidance=KEEP_ALL)
    acc.Reload()
    return {(tag, e.step): e.value for tag in acc.Tags()["scalars"] for e in acc.Scalars(tag)}


def summary(run_dir):
    return json.loads((Path(run_dir) / "run_summary.json").read_text())


def new_logger(tmp_path, **kw):
    args = dict(algo="sac", task="go2", sim="mujoco", max_iterations=10, log_root=tmp_path / "logs", panel="off")
    args.update(kw)
    return tally.Logger(**args)


@pytest.mark.parametrize(
    "bad, needles",
    [
        (dict(iteration=2**63, env_steps=200), ["iteration", "9223372036854775808", "9007199254740991"]),
        (dict(iteration=2, env_steps=2**62), ["env_steps", "4611686018427387904", "9007199254740991"]),
        (dict(iteration=1_000_000, env_steps=200), ["iteration", "1000000", "max_iterations 10"]),
    ],
)
def test_a_step_out_of_bounds_is_refused_and_the_next_normal_step_works(tmp_path, bad, needles):
    with new_logger(tmp_path) as log:
        log.step(1, env_steps=100, metrics={"Loss/critic": 1.0})
        with pytest.raises(tally.SchemaError) as e:
            log.step(bad.pop("iteration"), metrics={"Loss/critic": 9.0}, **bad)
        for n in needles:
            assert n in str(e.value)
        log.step(2, env_steps=200, metrics={"Loss/critic": 2.0})
    got = scalars(log.run_dir)
    assert got[("Loss/critic", 100)] == 1.0 and got[("Loss/critic", 200)] == 2.0
    assert 9.0 not in got.values()
    assert summary(log.run_dir)["completed_iterations"] == 2


@pytest.mark.parametrize("iteration, error", [(-1, tally.SchemaError), (2**64, tally.SchemaError), (1.5, TypeError), ("1", TypeError), (None, TypeError)])
def test_a_bad_iteration_is_refused_naming_it_and_the_next_step_works(tmp_path, iteration, error):
    with new_logger(tmp_path) as log:
        with pytest.raises(error) as e:
            log.step(iteration)
        assert f"iteration={iteration!r}" in str(e.value), str(e.value)
        log.step(1)
    assert summary(log.run_dir)["completed_iterations"] == 1


def test_an_unknown_phase_is_refused_when_the_timer_is_made_and_steps_go_on(tmp_path):
    with new_logger(tmp_path) as log:
        with pytest.raises(tally.SchemaError) as e:
            with log.phase("bogus"):
                pass
        text = str(e.value)
        assert "bogus" in text and "learning" in text and "collector_wait" in text
        log.step(1, metrics={"Loss/critic": 1.0})
        log.step(2, metrics={"Loss/critic": 2.0})
    assert summary(log.run_dir)["completed_iterations"] == 2


def test_a_phase_of_another_profile_is_refused_naming_the_profile(tmp_path):
    # replay_stage is a learner phase of the appo profile only.
    with new_logger(tmp_path) as log:
        with pytest.raises(tally.SchemaError, match="sac_family"):
            log.phase("replay_stage")
        log.step(1)


@pytest.mark.parametrize(
    "arg, value",
    [
        ("max_iterations", -1),
        ("max_iterations", 0),
        ("max_iterations", 2**53),
        ("max_iterations", 2**64),
        ("num_envs", -4),
        ("num_gpus", -1),
        ("num_gpus", 0),
        ("num_gpus", 2**40),
        ("log_interval", -1),
        ("seed", -1),
    ],
)
def test_an_integer_argument_out_of_range_is_a_config_error_naming_it(tmp_path, arg, value):
    with pytest.raises(tally.ConfigError) as e:
        new_logger(tmp_path, **{arg: value})
    assert f"{arg}={value!r}" in str(e.value), str(e.value)
    assert not (tmp_path / "logs").exists()


@pytest.mark.parametrize(
    "arg, value",
    [
        ("max_iterations", "10"),
        ("max_iterations", 10.0),
        ("num_envs", [4]),
        ("seed", True),
        ("num_gpus", "2"),
        ("log_interval", 1.5),
    ],
)
def test_an_integer_argument_of_the_wrong_type_is_a_type_error_naming_it(tmp_path, arg, value):
    with pytest.raises(TypeError) as e:
        new_logger(tmp_path, **{arg: value})
    assert f"{arg}={value!r}" in str(e.value), str(e.value)
    assert not (tmp_path / "logs").exists()


def test_numpy_integers_are_integer_arguments(tmp_path):
    np = pytest.importorskip("numpy")
    with new_logger(tmp_path, max_iterations=np.int64(3), num_envs=np.uint32(4), seed=np.int64(7)) as log:
        log.step(3)
    assert summary(log.run_dir)["completed_iterations"] == 3


def test_values_float32_cannot_hold_are_persisted_counted_and_agree_with_the_summary(tmp_path):
    with new_logger(tmp_path, max_iterations=2) as log:
        log.step(1, metrics={"Loss/critic": 1e300, "Loss/actor": 1e-50}, episode_return=5.0)
        with pytest.raises(tally.SchemaError) as e:
            log.step(2, iteration_time=1e300)
        assert "iteration_time" in str(e.value) and "float32" in str(e.value)
        log.step(2, metrics={"Loss/critic": float("nan")}, episode_return=float("nan"))
    got = scalars(log.run_dir)
    assert got[("Loss/critic", 1)] == math.inf
    assert got[("Loss/actor", 1)] == 0.0
    assert math.isnan(got[("Loss/critic", 2)])
    assert math.isnan(got[("Train/mean_reward", 2)])
    s = summary(log.run_dir)
    assert s["nonfinite_values"] == 3, s
    assert s["underflow_values"] == 1, s
    # The file's last reward is NaN: the summary does not show the 5.0 before it.
    assert s["final_mean_reward"] is None, s
    assert s["best_mean_reward"] == 5.0, s


def test_summary_writer_refuses_a_step_beyond_int64_on_that_call_and_stays_usable(tmp_path):
    w = tally.SummaryWriter(log_dir=str(tmp_path / "tb"))
    w.add_scalar("a", 0.5, 1)
    with pytest.raises(tally.SchemaError) as e:
        w.add_scalar("a", 1.0, 2**63)
    assert "global_step" in str(e.value) and str(2**63) in str(e.value)
    with pytest.raises(tally.SchemaError, match="global_step"):
        w.add_text("t", "x", -(2**63) - 1)
    w.add_scalar("b", 2.0, 2)
    w.flush()
    w.close()
    got = scalars(tmp_path / "tb")
    assert got == {("a", 1): 0.5, ("b", 2): 2.0}


def test_event_writer_refuses_a_step_beyond_int64_naming_it_and_stays_usable(tmp_path):
    w = EventWriter(str(tmp_path / "ev"))
    for call in (
        lambda: w.write_scalars(2**63, 0.0, {"a": 1.0}),
        lambda: w.write_summary(2**63, 0.0, b""),
        lambda: w.write_session_start(-(2**63) - 1, 0.0),
    ):
        with pytest.raises(tally.SchemaError) as e:
            call()
        assert "step" in str(e.value) and "int64" in str(e.value)
    w.write_scalars(3, 1.0, {"a": 3.0})
    w.close()
    assert scalars(tmp_path / "ev") == {("a", 3): 3.0}
