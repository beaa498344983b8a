"""Keys of `log.step`'s dicts: every key outside the registry reaches the event file under its
own text, whether the key object is the same every step or built anew, and past the text the
process keeps for such keys (1 MiB, docs/contract/step.md "The hot path"). Read back with
TensorBoard's EventAccumulator."""

from tensorboard.backend.event_processing import event_accumulator

import tally


def tags_by_step(run_dir):
    acc = event_accumulator.EventAccumulator(str(run_dir), size_guidance={event_accumulator.SCALARS: 0})
    acc.Reload()
    out = {}
    for tag in acc.Tags()["scalars"]:
        for e in acc.Scalars(tag):
            out.setdefault(e.step, {})[tag] = e.value
    return out


def test_keys_built_anew_each_step_and_past_the_kept_text_all_reach_the_file(tmp_path):
    # 6 000 user metrics of ~200 characters: 1.2 MB of key text, past what the process keeps.
    n, pad = 6000, "x" * 190
    log = tally.Logger(algo="sac", task="keys", sim="mujoco", max_iterations=10, num_envs=4, log_root=tmp_path, panel="off")
    with log:
        for it in (1, 2):
            metrics = {f"charts/m{i:05d}_{pad}": float(i * it) for i in range(n)}  # new str objects each step
            log.step(it, env_steps=100 * it, metrics=metrics, rewards={"lin_vel": 0.5 * it})
    got = tags_by_step(log.run_dir)
    for it in (1, 2):
        charts = {t: v for t, v in got[100 * it].items() if t.startswith("charts/")}
        assert len(charts) == n
        assert charts[f"charts/m05999_{pad}"] == 5999.0 * it
        assert got[100 * it]["reward/lin_vel"] == 0.5 * it


def test_the_same_key_objects_in_another_order_each_reach_their_own_tag(tmp_path):
    # Literal keys are the same str objects every step; the dicts swap their order.
    log = tally.Logger(algo="sac", task="keys", sim="mujoco", max_iterations=10, num_envs=4, log_root=tmp_path, panel="off")
    with log:
        log.step(1, env_steps=100, metrics={"charts/x": 1.0, "charts/y": 2.0}, rewards={"lin_vel": 3.0, "air_time": 4.0})
        log.step(2, env_steps=200, metrics={"charts/y": 20.0, "charts/x": 10.0}, rewards={"air_time": 40.0, "lin_vel": 30.0})
        # One key left out: every later key moves up a position.
        log.step(3, env_steps=300, metrics={"charts/y": 200.0}, rewards={"air_time": 400.0})
    got = tags_by_step(log.run_dir)
    assert {t: got[100][t] for t in ("charts/x", "charts/y", "reward/lin_vel", "reward/air_time")} == {
        "charts/x": 1.0, "charts/y": 2.0, "reward/lin_vel": 3.0, "reward/air_time": 4.0}  # fmt: skip
    assert {t: got[200][t] for t in ("charts/x", "charts/y", "reward/lin_vel", "reward/air_time")} == {
        "charts/x": 10.0, "charts/y": 20.0, "reward/lin_vel": 30.0, "reward/air_time": 40.0}  # fmt: skip
    assert "charts/x" not in got[300] and "reward/lin_vel" not in got[300]
    assert got[300]["charts/y"] == 200.0 and got[300]["reward/air_time"] == 400.0


def test_keys_freed_past_the_cache_bound_are_not_mistaken_for_new_keys_at_their_address(tmp_path):
    # 9 000 fresh keys pass the 8 192 keys remembered by identity; once that step's dict is
    # freed, the next step's fresh keys of other text are likely allocated at the freed
    # addresses, in the same positions.
    n = 9000
    log = tally.Logger(algo="sac", task="keys", sim="mujoco", max_iterations=10, num_envs=4, log_root=tmp_path, panel="off")
    with log:
        for it, name in ((1, "a"), (2, "b"), (3, "c")):
            metrics = {f"charts/{name}{i:05d}": float(i) for i in range(n)}
            log.step(it, env_steps=100 * it, metrics=metrics)
            del metrics
    got = tags_by_step(log.run_dir)
    for it, name in ((1, "a"), (2, "b"), (3, "c")):
        charts = {t: v for t, v in got[100 * it].items() if t.startswith("charts/")}
        assert len(charts) == n
        assert all(t.startswith(f"charts/{name}") for t in charts), it
        assert charts[f"charts/{name}00000"] == 0.0 and charts[f"charts/{name}08999"] == 8999.0


def test_a_key_with_a_bidirectional_control_is_refused_naming_the_character(tmp_path):
    # U+202E (right-to-left override) and its kin reorder the text shown after them: on the
    # panel, "charts/re\u202eward" would read as another tag (docs/contract/schema.md "User metrics").
    import pytest

    with tally.Logger(algo="ppo", task="t", profile="onpolicy", log_dir=tmp_path / "r", panel="off") as log:
        for i, key in enumerate(["charts/re\u202eward", "charts/\u2066x", "mine/\u200fv", "charts/\u061cz"]):
            with pytest.raises(tally.SchemaError, match=r"bidirectional control character U\+[0-9A-F]{4}"):
                log.step(i, metrics={key: 1.0})
        log.step(10, metrics={"charts/r\u00e9ward": 1.0})  # other non-ASCII stays a tag
    assert list(tags_by_step(tmp_path / "r")[10]) == ["charts/r\u00e9ward"]
