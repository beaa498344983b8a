"""tally.distributed: each rank's step input reduced on rank 0 with one collective per iteration.

The real check runs 2 ranks under OpenMPI's `mpirun` with mpi4py; the in-process tests use a
thread-per-rank communicator to pin the arithmetic (presence mask, mean vs sum) and the
failure behaviour (a rank's bad input raises on every rank, nobody hangs)."""

import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest
from tensorboard.backend.event_processing import event_accumulator

import tally
from tally.distributed import Communicator, RankLogger


def scalars(run_dir):
    acc = event_accumulator.EventAccumulator(str(run_dir), size_guidance={event_accumulator.SCALARS: 0})
    acc.Reload()
    return {(t, e.step): e.value for t in acc.Tags()["scalars"] for e in acc.Scalars(t)}


def f32(x):
    return float(np.float32(x))


class ThreadComm(Communicator):
    """`size` ranks as threads of this process, summing through a barrier."""

    class World:
        def __init__(self, size):
            self.size, self.barrier, self.slots = size, threading.Barrier(size, timeout=30), [None] * size

    def __init__(self, world, rank):
        self.world, self.rank, self.size, self.name = world, rank, world.size, "threads"
        self.calls = 0

    def _exchange(self, obj):
        self.calls += 1
        self.world.slots[self.rank] = obj
        self.world.barrier.wait()
        out = list(self.world.slots)
        self.world.barrier.wait()
        return out

    def allreduce_sum(self, values):
        return [sum(col) for col in zip(*self._exchange(list(values)))]

    def allgather(self, obj):
        return self._exchange(obj)


def run_ranks(size, body):
    """Run body(rank, comm) on `size` threads; returns per-rank results or raises the first error."""
    world = ThreadComm.World(size)
    comms = [ThreadComm(world, r) for r in range(size)]
    results, errors = [None] * size, [None] * size

    def go(r):
        try:
            results[r] = body(r, comms[r])
        except BaseException as e:  # noqa: BLE001 - reported to the test
            errors[r] = e

    threads = [threading.Thread(target=go, args=(r,)) for r in range(size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads), "a rank hung"
    return results, errors, comms


RANK_INPUT = [
    dict(metrics={"Loss/critic": 1.0, "Train/replay_ingress_dropped_batches": 2.0, "Episode_Termination/time_out": 3.0},
         learner={"learning": 0.010}, rewards={"tracking": 0.5}, iteration_time=0.02, steps_this_iter=1000.0,
         replay_rows_this_iter=4000.0, episode_return=10.0, system={"buffer_size": 100, "batch_size_per_rank": 256}),
    dict(metrics={"Loss/critic": 3.0, "Train/replay_ingress_dropped_batches": 5.0, "Episode_Termination/time_out": 4.0},
         learner={"learning": 0.030}, rewards={"tracking": 1.5, "feet_air_time": 0.25}, iteration_time=0.04,
         steps_this_iter=1000.0, replay_rows_this_iter=4000.0, episode_return=20.0, system={"buffer_size": 150, "batch_size_per_rank": 256}),
]  # fmt: skip


def test_rank_zero_logs_means_sums_and_summed_rates_with_one_collective_per_iteration(tmp_path):
    def body(rank, comm):
        with RankLogger(comm=comm, algo="sac", task="go2", sim="mujoco", max_iterations=3, num_envs=8, log_root=tmp_path, panel="off") as dist:
            for it in (1, 2, 3):
                dist.step(it, env_steps=1000 * it, **RANK_INPUT[rank])
            return dist.run_dir

    (run_dir, other), errors, comms = run_ranks(2, body)
    assert errors == [None, None]
    assert other is None and len(list(Path(tmp_path).rglob("run_config.json"))) == 1
    # Iteration 1 grows the layout (reduce, gather names, reduce); 2 and 3 take one call each.
    assert [c.calls for c in comms] == [5, 5]
    got = scalars(run_dir)
    step = 2000  # env steps summed over ranks
    assert got[("Loss/critic", step)] == 2.0  # mean
    assert got[("Train/replay_ingress_dropped_batches", step)] == 7.0  # schema: sum
    assert got[("Episode_Termination/time_out", step)] == 7.0  # family: sum
    assert got[("Perf/learning_time", step)] == f32(0.020)  # phases: mean
    assert got[("reward/tracking", step)] == 1.0
    assert got[("reward/feet_air_time", step)] == 0.25  # present on rank 1 only: its own value
    assert got[("Perf/iteration_time", step)] == f32(0.03)
    assert got[("Train/mean_reward", step)] == 15.0
    assert got[("Perf/total_fps", step)] == f32(1000 / 0.02 + 1000 / 0.04)  # Σ per-rank rates
    config = json.loads((run_dir / "run_config.json").read_text())
    assert config["run"]["logger"]["num_gpus"] == 2  # the world size


def test_a_bad_value_on_one_rank_raises_on_every_rank_and_logs_nothing(tmp_path):
    def body(rank, comm):
        log = tally.Logger(algo="sac", task="go2", sim="mujoco", max_iterations=3, num_envs=8, log_root=tmp_path) if rank == 0 else None
        dist = RankLogger(log, comm=comm)
        dist.step(1, metrics={"Loss/critic": 1.0})
        bad = {"Loss/critic": "oops"} if rank == 1 else {"Loss/critic": 2.0}
        try:
            dist.step(2, metrics=bad)
        finally:
            if log is not None:
                log.close()
        return log

    results, errors, _ = run_ranks(2, body)
    assert isinstance(errors[1], tally.ValueTypeError) and "metrics['Loss/critic']" in str(errors[1])
    assert isinstance(errors[0], tally.SchemaError) and "1 other rank" in str(errors[0])
    assert results == [None, None]
    run_dir = next(Path(tmp_path).rglob("run_config.json")).parent
    assert {s for (t, s) in scalars(run_dir)} == {1}


def test_ranks_submitting_different_iterations_is_an_error_on_every_rank(tmp_path):
    def body(rank, comm):
        dist = RankLogger(comm=comm, algo="sac", task="go2", sim="mujoco", max_iterations=3, num_envs=8, log_root=tmp_path)
        try:
            dist.step(1 + rank)
        finally:
            dist.close("failed")

    _, errors, _ = run_ranks(2, body)
    assert all(isinstance(e, tally.SchemaError) and "different iterations" in str(e) for e in errors)


def test_phase_timers_on_each_rank_are_averaged(tmp_path):
    import time

    def body(rank, comm):
        dist = RankLogger(comm=comm, algo="sac", task="go2", sim="mujoco", max_iterations=1, num_envs=8, log_root=tmp_path)
        with dist.phase("learning"):
            time.sleep(0.02 if rank == 0 else 0.06)
        dist.step(1)
        dist.close()
        return dist.run_dir

    (run_dir, _), errors, _ = run_ranks(2, body)
    assert errors == [None, None]
    assert 0.04 <= scalars(run_dir)[("Perf/learning_time", 1)] < 0.2


def test_without_a_launcher_it_is_a_single_process_logger(tmp_path, monkeypatch):
    for v in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.delitem(sys.modules, "mpi4py.MPI", raising=False)
    with RankLogger(algo="sac", task="go2", sim="mujoco", max_iterations=1, num_envs=8, log_root=tmp_path) as dist:
        assert (dist.rank, dist.world_size, dist.comm.name) == (0, 1, "local")
        dist.step(1, metrics={"Loss/critic": 0.5}, steps_this_iter=100, iteration_time=0.5)
    got = scalars(dist.run_dir)
    assert got[("Loss/critic", 1)] == 0.5 and got[("Perf/total_fps", 1)] == 200.0


MPI_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from mpi4py import MPI
    import tally
    from tally.distributed import RankLogger

    root = sys.argv[1]
    dist = RankLogger(algo="sac", task="go2", sim="mujoco", max_iterations=5, num_envs=64, log_root=root, panel="off")
    assert dist.comm.name == "mpi", dist.comm.name
    r = dist.rank
    for it in range(1, 6):
        dist.step(
            it,
            env_steps=640 * it,
            metrics={"Loss/critic": 1.0 + r + it, "Train/replay_ingress_dropped_batches": float(r + 1)},
            rewards={"tracking": 0.5 * (r + 1)},
            iteration_time=0.02 * (r + 1),
            steps_this_iter=640.0,
        )
    dist.close()
    # A file per rank: mpirun forwards the ranks' stdout in pieces that may interleave mid-line.
    facts = {"rank": r, "run_dir": str(dist.run_dir) if dist.run_dir else None, "collectives": dist.collectives}
    with open(f"{root}.rank{r}.json", "w") as f:
        json.dump(facts, f)
    """
)


def run_mpi(tmp_path, script_text):
    """`script_text` on two ranks under OpenMPI's mpirun, its logs under tmp_path/logs; each
    rank's facts, from the file it wrote."""
    mpirun = shutil.which("mpirun")
    if mpirun is None or subprocess.run([sys.executable, "-c", "import mpi4py"]).returncode != 0:
        if os.environ.get("CI"):
            pytest.fail("CI needs OpenMPI (mpirun) and mpi4py: .ci/run installs them")
        pytest.skip("mpirun or mpi4py not installed")
    script = tmp_path / "ranks.py"
    script.write_text(script_text)
    proc = subprocess.run(
        [mpirun, "--allow-run-as-root", "--oversubscribe", "-n", "2", sys.executable, str(script), str(tmp_path / "logs")],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [json.loads((tmp_path / f"logs.rank{r}.json").read_text()) for r in range(2)]


def test_two_mpi_ranks_total_fps_is_the_sum_and_the_loss_the_mean(tmp_path):
    out = run_mpi(tmp_path, MPI_SCRIPT)
    assert [d["rank"] for d in out] == [0, 1]
    assert out[1]["run_dir"] is None and out[0]["collectives"] == out[1]["collectives"] == 3 + 4
    got = scalars(out[0]["run_dir"])
    for it in range(1, 6):
        step = 2 * 640 * it
        assert got[("Perf/total_fps", step)] == f32(640 / 0.02 + 640 / 0.04)
        assert got[("Loss/critic", step)] == f32(((1.0 + it) + (2.0 + it)) / 2)
        assert got[("Train/replay_ingress_dropped_batches", step)] == 3.0
        assert got[("reward/tracking", step)] == 0.75
        assert got[("Perf/iteration_time", step)] == f32(0.03)
    assert len(list((tmp_path / "logs").rglob("run_config.json"))) == 1


def test_user_metrics_reduce_by_their_definition_across_ranks(tmp_path):
    # docs/contract/schema.md "User metrics": mean by default; define_metric on every rank.
    def body(rank, comm):
        with RankLogger(comm=comm, algo="sac", task="go2", sim="mujoco", max_iterations=1, num_envs=8, log_root=tmp_path, panel="off") as dist:
            dist.define_metric("charts/episodes*", reduction="sum")
            dist.step(1, metrics={"charts/episodes_done": 2.0 + rank, "charts/sps": 10.0 * (rank + 1)})
            return dist.run_dir

    (run_dir, _), errors, _ = run_ranks(2, body)
    assert errors == [None, None]
    got = scalars(run_dir)
    assert got[("charts/episodes_done", 1)] == 5.0  # defined: sum
    assert got[("charts/sps", 1)] == 15.0  # default: mean
    config = json.loads((run_dir / "run_config.json").read_text())
    assert {m["tag"]: m["reduction"] for m in config["user_metrics"]} == {
        "charts/episodes_done": "sum",
        "charts/sps": "mean",
    }


def test_a_reduction_one_summing_collective_cannot_do_is_refused_by_name(tmp_path):
    dist = RankLogger(comm=ThreadComm(ThreadComm.World(1), 0), algo="sac", task="go2", sim="mujoco", max_iterations=1, num_envs=8, log_root=tmp_path, panel="off")
    with pytest.raises(tally.ConfigError, match=r"define_metric\('charts/q'\): reduction='max'"):
        dist.define_metric("charts/q", reduction="max")
    dist.close()


# -- the ranks health rule through the one collective (docs/contract/health.md "Ranks") -------


def test_a_nan_on_one_rank_and_a_straggler_are_found_by_rank_zero(tmp_path):
    def body(rank, comm):
        with RankLogger(comm=comm, algo="sac", task="go2", sim="mujoco", max_iterations=20, num_envs=8, log_root=tmp_path, panel="off") as dist:
            for it in range(1, 13):
                loss = float("nan") if (rank, it) == (1, 3) else 1.0
                # Rank 2 takes three times as long from iteration 6 on (over 0.05 s more).
                t = 0.3 if rank == 2 and it >= 6 else 0.1
                dist.step(it, metrics={"Loss/critic": loss}, iteration_time=t, steps_this_iter=100.0)
            return dist.logger

    (log, _, _), errors, _ = run_ranks(3, body)
    assert errors == [None, None, None]
    ranks = [f for f in log.health.findings if f.rule == "ranks"]
    assert [(f.first_step, f.message.split()[1].rstrip(":")) for f in ranks] == [(3, "1"), (6, "2")], ranks
    assert ranks[1].last_value == pytest.approx(0.3)


def test_healthy_ranks_find_nothing_by_rank(tmp_path):
    def body(rank, comm):
        with RankLogger(comm=comm, algo="sac", task="go2", sim="mujoco", max_iterations=20, num_envs=8, log_root=tmp_path, panel="off") as dist:
            for it in range(1, 13):
                dist.step(it, metrics={"Loss/critic": 1.0 + rank}, iteration_time=0.1 * (1 + 0.05 * rank), steps_this_iter=100.0)
            return dist.logger

    (log, _), errors, _ = run_ranks(2, body)
    assert errors == [None, None]
    assert [f for f in log.health.findings if f.rule == "ranks"] == []


def test_stop_on_ranks_stops_every_rank_at_the_same_step(tmp_path):
    # Rank 0 alone raising would leave the others waiting in the next collective.
    def body(rank, comm):
        dist = RankLogger(comm=comm, algo="sac", task="go2", sim="mujoco", max_iterations=20, num_envs=8, log_root=tmp_path, panel="off", stop_on=["ranks"])
        stopped_at = None
        for it in range(1, 8):
            try:
                dist.step(it, metrics={"Loss/critic": float("nan") if (rank, it) == (1, 3) else 1.0}, iteration_time=0.1)
            except tally.HealthStop as e:
                stopped_at = (it, e.finding.rule if e.finding is not None else None)
                break
        dist.close("interrupted")
        return stopped_at, dist.run_dir

    results, errors, _ = run_ranks(2, body)
    assert errors == [None, None]
    assert [r[0] for r in results] == [(4, "ranks"), (4, None)]
    steps = sorted({s for (t, s) in scalars(results[0][1]) if t == "Loss/critic"})
    assert steps == [1, 2, 3]


MPI_STOP_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import tally
    from tally.distributed import RankLogger

    root = sys.argv[1]
    dist = RankLogger(algo="sac", task="go2", sim="mujoco", max_iterations=20, num_envs=64, log_root=root, panel="off", stop_on=["ranks"])
    r = dist.rank
    stopped = None
    for it in range(1, 8):
        try:
            dist.step(it, metrics={"Loss/critic": float("nan") if (r, it) == (1, 3) else 1.0}, iteration_time=0.02)
        except tally.HealthStop as e:
            stopped = [it, e.finding.rule if e.finding is not None else None, e.finding.message if e.finding is not None else str(e)]
            break
    dist.close("interrupted")
    with open(f"{root}.rank{r}.json", "w") as f:
        json.dump({"stopped": stopped, "run_dir": str(dist.run_dir) if dist.run_dir else None}, f)
    """
)


def test_two_mpi_ranks_a_nan_on_rank_one_stops_both_ranks_at_the_next_step(tmp_path):
    out = run_mpi(tmp_path, MPI_STOP_SCRIPT)
    assert out[0]["stopped"][:2] == [4, "ranks"] and out[0]["stopped"][2].startswith("rank 1:"), out
    assert out[1]["stopped"][:2] == [4, None], out
    steps = sorted({s for (t, s) in scalars(out[0]["run_dir"]) if t == "Loss/critic"})
    assert steps == [1, 2, 3]


# -- every rank's system metrics through the one collective (docs/contract/system-metrics.md "Ranks")

MPI_SYSTEM_SCRIPT = textwrap.dedent(
    """
    import json, os, sys, time
    from tally.distributed import RankLogger

    root = sys.argv[1]
    dist = RankLogger(algo="sac", task="go2", sim="mujoco", max_iterations=40, num_envs=64, log_root=root, panel="off", system_interval=0.2)
    r = dist.rank
    # Rank 1 holds 256 MiB more than rank 0, written so it is resident: its RSS is its own.
    ballast = b"\\x01" * (256 << 20) if r == 1 else b""
    for it in range(1, 16):
        time.sleep(0.1)
        dist.step(it, metrics={"Loss/critic": 1.0}, iteration_time=0.1, steps_this_iter=64.0)
    status = dict(line.split(":", 1) for line in open("/proc/self/status"))
    rss = int(status["VmRSS"].split()[0]) * 1024
    dist.close()
    with open(f"{root}.rank{r}.json", "w") as f:
        json.dump({"rank": r, "pid": os.getpid(), "rss": rss, "ballast": len(ballast),
                   "run_dir": str(dist.run_dir) if dist.run_dir else None, "collectives": dist.collectives}, f)
    """
)


def test_two_mpi_ranks_rank_one_samples_its_own_process_into_rank_zeros_run(tmp_path):
    out = run_mpi(tmp_path, MPI_SYSTEM_SCRIPT)
    # No collective more: the first iteration grows the layout (3), the others take one each.
    assert out[0]["collectives"] == out[1]["collectives"] == 3 + 14
    assert out[0]["pid"] != out[1]["pid"]
    acc = event_accumulator.EventAccumulator(out[0]["run_dir"], size_guidance={event_accumulator.SCALARS: 0})
    acc.Reload()
    found = set(acc.Tags()["scalars"])
    rank1 = {t for t in found if t.startswith("system/rank1/")}
    assert {f"system/rank1/process/{n}" for n in ("cpu_percent", "rss_bytes", "threads", "open_files")} <= rank1, found
    # Rank 0's own tags as before, and no rank-0 prefix.
    assert {"system/process/rss_bytes", "system/machine/cpu_percent"} <= found
    assert not any(t.startswith("system/rank0/") for t in found)
    # Rank 1 runs on rank 0's machine: the machine is written once, as rank 0's.
    assert not any(t.startswith("system/rank1/machine/") for t in found), rank1
    if not os.path.exists("/dev/nvidia0"):
        assert not any("gpu" in t for t in found if t.startswith("system/")), found
    rss1 = acc.Scalars("system/rank1/process/rss_bytes")
    assert len(rss1) >= 2
    # Rank 1's process, not rank 0's: its own RSS (from its /proc/<pid>/status at the end),
    # its ballast above rank 0's.
    assert abs(rss1[-1].value - out[1]["rss"]) < 0.2 * out[1]["rss"], (rss1[-1].value, out[1]["rss"])
    rss0 = acc.Scalars("system/process/rss_bytes")[-1].value
    assert rss1[-1].value - rss0 > 0.75 * out[1]["ballast"], (rss1[-1].value, rss0)
    assert all(e.value >= 1 for e in acc.Scalars("system/rank1/process/threads"))
    # Placed like rank 0's samples: at a step the run has, never a step of their own.
    steps = {e.step for e in acc.Scalars("Loss/critic")}
    assert {e.step for e in rss1} <= steps | {0}


class SizedComm(ThreadComm):
    """ThreadComm that keeps the length of every vector it reduces."""

    def __init__(self, world, rank):
        super().__init__(world, rank)
        self.lengths = []

    def allreduce_sum(self, values):
        self.lengths.append(len(values))
        return super().allreduce_sum(values)


def test_with_system_metrics_off_no_rank_samples_and_the_vector_is_unchanged(tmp_path):
    def body(rank, comm):
        with RankLogger(comm=comm, algo="sac", task="go2", sim="mujoco", max_iterations=20, num_envs=8, log_root=tmp_path, panel="off", system_metrics=False) as dist:
            for it in range(1, 6):
                dist.step(it, metrics={"Loss/critic": 1.0})
            return dist._sampler, dist._keys + 2 * len(dist._layout), dist.run_dir

    world = ThreadComm.World(2)
    comms = [SizedComm(world, r) for r in range(2)]
    results = [None, None]
    threads = [threading.Thread(target=lambda r=r: results.__setitem__(r, body(r, comms[r]))) for r in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    (s0, n0, run_dir), (s1, n1, _) = results
    assert s0 is None and s1 is None  # no rank started a sampler
    assert comms[0].lengths[-4:] == [n0] * 4 and n0 == n1
    assert not any(t.startswith("system/") for (t, _) in scalars(run_dir))


def test_a_ranks_gpu_is_its_local_rank_through_cuda_visible_devices(monkeypatch):
    # docs/contract/system-metrics.md "Ranks": explicit, else the launcher's local rank.
    from tally.distributed import _LOCAL_RANK_ENV, own_gpus

    for v in (*_LOCAL_RANK_ENV, "CUDA_VISIBLE_DEVICES"):
        monkeypatch.delenv(v, raising=False)
    assert own_gpus() == []
    monkeypatch.setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1")
    assert own_gpus() == ["1"]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,5,6")
    assert own_gpus() == ["5"]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-8c1f")  # one device per rank
    assert own_gpus() == ["GPU-8c1f"]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert own_gpus() == []
    assert own_gpus([2, "GPU-x"]) == ["2", "GPU-x"]
