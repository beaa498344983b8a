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
