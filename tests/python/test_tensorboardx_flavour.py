"""``tally.tensorboardX``: the writer a tensorboardX user gets by changing one import line keeps
what tensorboardX does differently from torch (docs/contract/integrations.md "tensorboardX"),
checked against the real tensorboardX writing the same calls."""

import json
import multiprocessing as mp
from pathlib import Path

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import tally
import tensorboardX
from tally import tensorboardX as tx


def scalar_runs(root):
    """{run dir relative to root: {tag: [(step, value)]}} of every directory with scalars."""
    out = {}
    for d in sorted({p.parent for p in Path(root).rglob("events.out.tfevents.*")}):
        acc = EventAccumulator(str(d))
        acc.Reload()
        tags = acc.Tags()["scalars"]
        if tags:
            out[d.relative_to(root).as_posix()] = {t: [(e.step, e.value) for e in acc.Scalars(t)] for t in tags}
    return out


def log(w):
    w.add_scalar("loss", 0.5, 0)
    w.add_scalars("run/grp", {"a": 1.0, "b": 2.0}, 0, walltime=100.0)
    w.add_scalars("run/grp", {"a": 3.0}, 1, walltime=101.0)


def test_add_scalars_lays_out_series_as_tensorboardx_does(tmp_path):
    with tensorboardX.SummaryWriter(logdir=str(tmp_path / "tbx")) as w:
        log(w)
        w.export_scalars_to_json(tmp_path / "tbx.json")
    with tx.SummaryWriter(logdir=str(tmp_path / "tally")) as w:
        log(w)
        w.export_scalars_to_json(tmp_path / "tally.json")
        assert w.scalar_dict == {}
    assert scalar_runs(tmp_path / "tally") == scalar_runs(tmp_path / "tbx")
    assert "run/grp/a" in scalar_runs(tmp_path / "tally")

    def exported(name):
        doc = json.loads((tmp_path / f"{name}.json").read_text())
        return {Path(k).relative_to(tmp_path / name).as_posix(): v for k, v in doc.items()}

    assert exported("tally") == exported("tbx") == {
        "run/grp/a": [[100.0, 0, 1.0], [101.0, 1, 3.0]],
        "run/grp/b": [[100.0, 0, 2.0]],
    }


def test_torchs_writer_keeps_torchs_layout(tmp_path):
    with tally.SummaryWriter(tmp_path) as w:
        w.add_scalars("run/grp", {"a": 1.0}, 0)
    assert list(scalar_runs(tmp_path)) == ["run_grp_a"]


def test_add_hparams_takes_the_run_name_third(tmp_path):
    with tx.SummaryWriter(tmp_path) as w:
        w.add_hparams({"lr": 0.1}, {"m": 1.0}, "trial", 5)
    assert scalar_runs(tmp_path) == {"trial": {"m": [(5, 1.0)]}}


def test_write_to_disk_false_writes_nothing(tmp_path):
    for make in (lambda d: tx.SummaryWriter(d, write_to_disk=False), lambda d: tally.SummaryWriter(d, write_to_disk=False)):
        d = tmp_path / str(id(make))
        with make(d) as w:
            log(w)
            w.add_text("t", "x", 0)
            w.add_hparams({"lr": 1}, {"m": 1.0})
        assert not d.exists() or not any(d.rglob("events.out.tfevents.*"))


def test_logdir_keyword_on_torchs_writer_and_both_refused(tmp_path):
    w = tally.SummaryWriter(logdir=tmp_path / "x")
    assert w.get_logdir() == str(tmp_path / "x")
    w.close()
    try:
        tally.SummaryWriter(tmp_path / "a", logdir=tmp_path / "b")
    except tally.ConfigError as e:
        assert "give one" in str(e)
    else:
        raise AssertionError("both log_dir and logdir accepted")


_shared = None  # the writer the forked workers inherit, as in tensorboardX's example


def _pool_work(i):
    _shared.add_scalar("pool/x", float(i))
    _shared.add_scalar("pool/y", float(-i))


def test_global_writer_counts_steps_per_tag_across_a_pools_processes(tmp_path):
    global _shared
    w = _shared = tx.GlobalSummaryWriter(logdir=str(tmp_path))
    with mp.get_context("fork").Pool(3) as pool:
        pool.map(_pool_work, range(40), chunksize=1)
    w.add_scalar("pool/x", 100.0)
    w.close()
    got = scalar_runs(tmp_path)["."]
    for tag, sign in (("pool/x", 1.0), ("pool/y", -1.0)):
        steps = sorted(s for s, _ in got[tag])
        values = sorted(v * sign for _, v in got[tag])
        assert steps == list(range(41 if tag == "pool/x" else 40))
        assert values[:40] == [float(i) for i in range(40)]


def test_tensorboardx_scalar_keywords_are_taken_and_the_value_written(tmp_path):
    with tx.SummaryWriter(tmp_path / "tx") as w:
        w.add_scalar("a", 1.0, 3, None, "A shown", "what A is")  # tensorboardX's positions
    with tally.SummaryWriter(tmp_path / "torch") as w:
        w.add_scalar("a", 1.0, 3, display_name="A shown", summary_description="what A is")
    assert scalar_runs(tmp_path / "tx") == scalar_runs(tmp_path / "torch") == {".": {"a": [(3, 1.0)]}}


def test_global_writer_counts_text_and_image_steps_per_tag(tmp_path):
    import numpy as np

    w = tx.GlobalSummaryWriter(logdir=str(tmp_path))
    for i in range(3):
        w.add_text("notes", f"n{i}")
        w.add_image("img", np.zeros((3, 2, 2)))
    w.close()
    acc = EventAccumulator(str(tmp_path))
    acc.Reload()
    assert [e.step for e in acc.Images("img")] == [0, 1, 2]
    assert [e.step for e in acc.Tensors("notes/text_summary")] == [0, 1, 2]


def events_of(d):
    """(step, wall_time, tags) of each event with a summary, in file order."""
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    (path,) = Path(d).glob("events.out.tfevents.*")
    return [(e.step, e.wall_time, sorted(v.tag for v in e.summary.value)) for e in EventFileLoader(str(path)).Load() if e.summary.value]


def test_use_metadata_gives_calls_without_a_step_its_defaults(tmp_path):
    def calls(w):
        with w.use_metadata(global_step=17, walltime=13.0):
            w.add_scalar("defaults", 0.1)
            w.add_scalar("own_step", 0.2, global_step=7)
            w.add_scalar("own_wall", 0.3, walltime=18.0)
            w.add_text("text", "hi")
        w.add_scalar("outside", 0.4, walltime=50.0)

    with tensorboardX.SummaryWriter(logdir=str(tmp_path / "tbx")) as w:
        calls(w)
    with tx.SummaryWriter(logdir=str(tmp_path / "tally")) as w:
        calls(w)
        with w.use_metadata(global_step=1):
            try:
                with w.use_metadata(global_step=2):
                    raise AssertionError("nested block accepted")
            except RuntimeError as e:
                assert "do not nest" in str(e)

    def by_tag(d):
        return {tag: (step, wall) for step, wall, tags in events_of(d) for tag in tags}

    want = by_tag(tmp_path / "tbx")
    assert want["defaults"] == (17, 13.0) and want["own_step"] == (7, 13.0) and want["outside"] == (0, 50.0)
    assert by_tag(tmp_path / "tally") == want


def test_the_event_files_path_is_where_scripts_read_it(tmp_path):
    with tally.SummaryWriter(tmp_path / "torch") as w:
        (path,) = (tmp_path / "torch").glob("events.out.tfevents.*")
        assert w.file_writer.event_writer._file_name == str(path)  # torch's place
        assert w.file_writer.event_writer._ev_writer._file_name == str(path)  # tensorboardX's
    with tx.SummaryWriter(logdir=str(tmp_path / "off"), write_to_disk=False) as w:
        assert w.file_writer.event_writer._file_name is None
    g = tx.GlobalSummaryWriter(logdir=str(tmp_path / "global"))
    try:
        (path,) = (tmp_path / "global").glob("events.out.tfevents.*")
        assert g.file_writer.event_writer._ev_writer._file_name == str(path)
    finally:
        g.close()
