"""tally.SummaryWriter's whole torch/tensorboardX API: every method called the same way through
tensorboardX and through tally into two directories, both read back with TensorBoard's own
readers (EventAccumulator, the plugin event multiplexer, the plugins' metadata parsers), and
compared: tags, steps, kinds, values, decoded pixels and samples. Then the bad inputs."""

import io
import os
import wave
from pathlib import Path

import numpy as np
import pytest
import tensorboardX
from PIL import Image
from tensorboard.backend.event_processing import event_accumulator as ea
from tensorboard.backend.event_processing import plugin_event_multiplexer
from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
from tensorboard.compat.proto import event_pb2, summary_pb2
from tensorboard.plugins.custom_scalar import layout_pb2
from tensorboard.plugins.hparams import metadata as hp_metadata
from tensorboard.plugins.hparams import plugin_data_pb2
from tensorboard.plugins.pr_curve import plugin_data_pb2 as pr_data
from tensorboard.util import tensor_util

import tally

KEEP_ALL = {ea.SCALARS: 0, ea.IMAGES: 0, ea.AUDIO: 0, ea.HISTOGRAMS: 0, ea.TENSORS: 0}
RNG = np.random.default_rng(7)


def write_both(tmp_path, calls):
    """Run ``calls(writer)`` through tensorboardX and tally; return both directories."""
    ref, ours = tmp_path / "tbx", tmp_path / "tally"
    with tensorboardX.SummaryWriter(logdir=str(ref)) as w:
        calls(w)
    with tally.SummaryWriter(log_dir=ours) as w:
        calls(w)
    return ref, ours


def load(d):
    acc = ea.EventAccumulator(str(d), size_guidance=KEEP_ALL)
    acc.Reload()
    return acc


def kinds(acc):
    """Tags of each kind, without the empty kinds and the bookkeeping flags."""
    return {k: sorted(v) for k, v in acc.Tags().items() if isinstance(v, list) and v}


def pixels(encoded):
    return np.asarray(Image.open(io.BytesIO(encoded)).convert("RGBA"))


def test_scalars_and_add_scalars_match(tmp_path):
    def calls(w):
        for step in range(3):
            w.add_scalar("charts/return", 1.5 * step, step)
            w.add_scalars("losses", {"pi": 0.1 * step, "vf": -step}, step)

    ref, ours = write_both(tmp_path, calls)
    a, b = load(ref), load(ours)
    assert kinds(a) == kinds(b) == {"scalars": ["charts/return"]}
    assert [(e.step, e.value) for e in a.Scalars("charts/return")] == [(e.step, e.value) for e in b.Scalars("charts/return")]
    # Sub-runs: torch names them <main_tag>_<tag>, tensorboardX <main_tag>/<tag>.
    assert sorted(p.name for p in ours.iterdir() if p.is_dir()) == ["losses_pi", "losses_vf"]
    for sub in ("pi", "vf"):
        assert [(e.step, e.value) for e in load(ref / "losses" / sub).Scalars("losses")] == [
            (e.step, e.value) for e in load(ours / f"losses_{sub}").Scalars("losses")
        ]


def test_text_matches_and_the_text_plugin_sees_it(tmp_path):
    table = "|param|value|\n|-|-|\n|lr|0.0003|"

    def calls(w):
        w.add_text("hyperparameters", table, 0)
        w.add_text("notes", "héllo **world**", 5)

    ref, ours = write_both(tmp_path, calls)
    a, b = load(ref), load(ours)
    assert kinds(a) == kinds(b) == {"tensors": ["hyperparameters/text_summary", "notes/text_summary"]}
    assert a.PluginTagToContent("text").keys() == b.PluginTagToContent("text").keys()
    for tag in ("hyperparameters/text_summary", "notes/text_summary"):
        ta, tb = a.Tensors(tag), b.Tensors(tag)
        assert [e.step for e in ta] == [e.step for e in tb]
        assert [tensor_util.make_ndarray(e.tensor_proto).tolist() for e in ta] == [
            tensor_util.make_ndarray(e.tensor_proto).tolist() for e in tb
        ]
    assert tensor_util.make_ndarray(b.Tensors("hyperparameters/text_summary")[0].tensor_proto)[0].decode() == table


@pytest.mark.parametrize(
    "bins,max_bins",
    [("tensorflow", None), (10, None), ("auto", None), ([-3.0, -1.0, 0.0, 0.5, 2.0], None), (64, 8), (30, 7)],
)
def test_histograms_have_the_same_buckets(tmp_path, bins, max_bins):
    values = np.concatenate([RNG.normal(size=500), [0.0, 2.0]]).astype(np.float32)

    def calls(w):
        w.add_histogram("weights", values, 3, bins=bins, max_bins=max_bins)
        w.add_histogram("weights", values * 2 + 1, 4, bins=bins, max_bins=max_bins)

    ref, ours = write_both(tmp_path, calls)
    a, b = load(ref), load(ours)
    assert kinds(a) == kinds(b) == {"histograms": ["weights"], "distributions": ["weights"]}
    for ha, hb in zip(a.Histograms("weights"), b.Histograms("weights"), strict=True):
        assert ha.step == hb.step
        va, vb = ha.histogram_value, hb.histogram_value
        assert (va.min, va.max, va.num) == (vb.min, vb.max, vb.num)
        assert vb.sum == pytest.approx(va.sum, rel=1e-9)
        assert vb.sum_squares == pytest.approx(va.sum_squares, rel=1e-9)
        np.testing.assert_allclose(vb.bucket_limit, va.bucket_limit, rtol=1e-12)
        assert list(vb.bucket) == list(va.bucket)


def test_histogram_raw_matches(tmp_path):
    def calls(w):
        w.add_histogram_raw("raw", -1.0, 3.0, 6, 4.5, 12.25, [0.0, 1.0, 3.0], [1, 2, 3], global_step=2)

    ref, ours = write_both(tmp_path, calls)
    va = load(ref).Histograms("raw")[0].histogram_value
    vb = load(ours).Histograms("raw")[0].histogram_value
    assert va == vb
    assert list(vb.bucket) == [1.0, 2.0, 3.0]


IMAGES = {
    "chw_float": RNG.random((3, 5, 7)),
    "hwc_uint8": RNG.integers(0, 256, (6, 4, 3), dtype=np.uint8),
    "hw_gray": RNG.random((4, 4)).astype(np.float32),
    "chw_gray": RNG.random((1, 3, 5)),
    "rgba": RNG.integers(0, 256, (4, 3, 3), dtype=np.uint8),
    "batch": RNG.random((10, 3, 4, 5)),
    "batch_nhwc": RNG.integers(0, 256, (3, 2, 2, 1), dtype=np.uint8),
}


def image_calls(w):
    w.add_image("chw_float", IMAGES["chw_float"], 1)
    w.add_image("hwc_uint8", IMAGES["hwc_uint8"], 1, dataformats="HWC")
    w.add_image("hw_gray", IMAGES["hw_gray"], 2, dataformats="HW")
    w.add_image("chw_gray", IMAGES["chw_gray"], 2)
    w.add_image("rgba", IMAGES["rgba"], 3)
    w.add_images("batch", IMAGES["batch"], 3)
    w.add_images("batch_nhwc", IMAGES["batch_nhwc"], 4, dataformats="NHWC")


def test_images_decode_to_the_same_pixels(tmp_path):
    ref, ours = write_both(tmp_path, image_calls)
    a, b = load(ref), load(ours)
    assert kinds(a) == kinds(b)
    assert len(kinds(b)["images"]) == 7
    for tag in kinds(b)["images"]:
        for ia, ib in zip(a.Images(tag), b.Images(tag), strict=True):
            assert (ia.step, ia.height, ia.width) == (ib.step, ib.height, ib.width), tag
            np.testing.assert_array_equal(pixels(ia.encoded_image_string), pixels(ib.encoded_image_string), err_msg=tag)
    grid = b.Images("batch")[0]
    assert (grid.height, grid.width) == (8, 40)  # 10 images, 8 per row


def test_a_list_of_images_is_a_batch_as_tensorboardx_takes_it(tmp_path):
    # tensorboardX stacks a list (it needs torch for that, so it is not the reference here): the
    # same grid as the stacked batch, which test_images_decode_to_the_same_pixels pins to it.
    chw = [RNG.integers(0, 256, (3, 4, 5), dtype=np.uint8) for _ in range(3)]
    with tally.SummaryWriter(tmp_path) as w:
        w.add_images("list_chw", chw, 0, dataformats="CHW")
        w.add_images("list_hwc", [c.transpose(1, 2, 0) for c in chw], 0, dataformats="HWC")
        w.add_images("stacked", np.stack(chw), 0)
        with pytest.raises(ValueError, match=r"differ in shape"):
            w.add_images("x", [chw[0], chw[0][:, :2]], 0, dataformats="CHW")
    b = load(tmp_path)
    (want,) = b.Images("stacked")
    assert (want.height, want.width) == (4, 15)
    for tag in ("list_chw", "list_hwc"):
        (got,) = b.Images(tag)
        np.testing.assert_array_equal(pixels(got.encoded_image_string), pixels(want.encoded_image_string), err_msg=tag)


def test_pil_images_and_tensor_like_objects_are_accepted(tmp_path):
    hwc = RNG.integers(0, 256, (5, 6, 3), dtype=np.uint8)

    class FakeTensor:  # what torch tensors offer, so the path is tested without torch
        def detach(self):
            return self

        def cpu(self):
            return self

        def numpy(self):
            return hwc.transpose(2, 0, 1)

    with tally.SummaryWriter(tmp_path) as w:
        w.add_image("pil", Image.fromarray(hwc), 0)
        w.add_image("tensor", FakeTensor(), 0)
        w.add_histogram("tensor_hist", FakeTensor(), 0)
    acc = load(tmp_path)
    for tag in ("pil", "tensor"):
        np.testing.assert_array_equal(pixels(acc.Images(tag)[0].encoded_image_string)[:, :, :3], hwc)
    assert acc.Histograms("tensor_hist")[0].histogram_value.num == hwc.size


def test_figures_render_to_the_same_pixels(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def figure(k):
        fig = plt.figure(figsize=(2, 1.5), dpi=40)
        plt.plot([0, 1, 2], [k, 0, 1])
        return fig

    def calls(w):
        w.add_figure("fig", figure(1), 0)
        w.add_figure("figs", [figure(1), figure(2)], 1)

    ref, ours = write_both(tmp_path, calls)
    a, b = load(ref), load(ours)
    assert kinds(a) == kinds(b) == {"images": ["fig", "figs"]}
    for tag in ("fig", "figs"):
        ia, ib = a.Images(tag)[0], b.Images(tag)[0]
        assert (ia.step, ia.height, ia.width) == (ib.step, ib.height, ib.width)
        np.testing.assert_array_equal(pixels(ia.encoded_image_string), pixels(ib.encoded_image_string))
    assert not plt.get_fignums()  # close=True closed them


def gif_frames(encoded):
    im = Image.open(io.BytesIO(encoded))
    frames, durations = [], []
    for i in range(im.n_frames):
        im.seek(i)
        frames.append(np.asarray(im.convert("RGB")))
        durations.append(im.info["duration"])
    return np.stack(frames), durations, im.info.get("loop")


def test_video_is_an_animated_gif_tiled_as_tensorboardx_tiles_it(tmp_path):
    # tensorboardX encodes through moviepy (not a test dependency); its tiling function is the
    # reference for the layout, and the GIF must hold exactly those frames (few colours: lossless).
    from tensorboardX.utils import _prepare_video

    palette = np.array([0.0, 0.2, 0.6, 1.0])
    vid = palette[RNG.integers(0, 4, (3, 4, 3, 6, 5))]  # N T C H W floats in [0, 1]
    with tally.SummaryWriter(tmp_path) as w:
        w.add_video("rollout", vid, 7, fps=10)
        w.add_video("uint8", (vid * 255).astype(np.uint8), 8)
    acc = load(tmp_path)
    expected = (_prepare_video(vid) * 255.0).astype(np.uint8)
    img = acc.Images("rollout")[0]
    assert (img.step, img.height, img.width) == (7, expected.shape[1], expected.shape[2])
    frames, durations, loop = gif_frames(img.encoded_image_string)
    np.testing.assert_array_equal(frames, expected)
    assert durations == [100] * 4 and loop == 0
    frames8, durations8, _ = gif_frames(acc.Images("uint8")[0].encoded_image_string)
    np.testing.assert_array_equal(frames8, expected)
    assert durations8 == [250] * 4  # torch's default 4 fps


def test_a_video_with_more_than_256_colours_is_quantized_not_refused(tmp_path):
    vid = RNG.integers(0, 256, (1, 3, 3, 24, 24), dtype=np.uint8)
    with tally.SummaryWriter(tmp_path) as w:
        w.add_video("noise", vid, 0)
    frames, _, _ = gif_frames(load(tmp_path).Images("noise")[0].encoded_image_string)
    assert frames.shape == (3, 24, 24, 3)
    # NeuQuant keeps each pixel near its colour on average.
    assert np.abs(frames.astype(int) - vid[0].transpose(0, 2, 3, 1)).mean() < 40


def wav_samples(encoded):
    with wave.open(io.BytesIO(encoded)) as f:
        raw = f.readframes(f.getnframes())
        return f.getnchannels(), f.getframerate(), np.frombuffer(raw, "<i2").reshape(-1, f.getnchannels())


def test_audio_has_the_same_samples(tmp_path):
    pytest.importorskip("soundfile")  # tensorboardX's WAV encoder
    mono = np.concatenate([np.sin(np.linspace(0, 20, 300)), [1.0, -1.0, 0.5, -0.25, 1.7]])
    stereo = RNG.uniform(-1, 1, (200, 2))

    def calls(w):
        w.add_audio("mono", mono, 1, sample_rate=8000)
        w.add_audio("stereo", stereo, 2, sample_rate=16000)

    ref, ours = write_both(tmp_path, calls)
    a, b = load(ref), load(ours)
    assert kinds(a) == kinds(b) == {"audio": ["mono", "stereo"]}
    for tag in ("mono", "stereo"):
        xa, xb = a.Audio(tag)[0], b.Audio(tag)[0]
        assert (xa.step, xa.content_type, xa.sample_rate, xa.length_frames) == (
            xb.step, xb.content_type, xb.sample_rate, xb.length_frames)
        ca, ra, sa = wav_samples(xa.encoded_audio_string)
        cb, rb, sb = wav_samples(xb.encoded_audio_string)
        assert (ca, ra) == (cb, rb)
        np.testing.assert_array_equal(sa, sb)
    assert wav_samples(b.Audio("mono")[0].encoded_audio_string)[2][-1, 0] == 32767  # 1.7 clipped


def test_pr_curves_match(tmp_path):
    labels = RNG.integers(0, 2, 200)
    predictions = RNG.random(200)
    weights = RNG.random(200)

    def calls(w):
        w.add_pr_curve("pr", labels, predictions, 1)
        w.add_pr_curve("pr_weighted", labels, predictions, 2, num_thresholds=11, weights=weights)
        w.add_pr_curve("pr_clamped", labels, predictions, 3, num_thresholds=500)
        w.add_pr_curve_raw("pr_raw", [5, 3, 1], [4, 2, 0], [0, 2, 4], [0, 2, 4], [0.5, 0.6, 1.0], [1.0, 0.6, 0.2], 4, 3)

    ref, ours = write_both(tmp_path, calls)
    a, b = load(ref), load(ours)
    assert kinds(a) == kinds(b)
    content_a, content_b = a.PluginTagToContent("pr_curves"), b.PluginTagToContent("pr_curves")
    assert {k: pr_data.PrCurvePluginData.FromString(v) for k, v in content_a.items()} == {
        k: pr_data.PrCurvePluginData.FromString(v) for k, v in content_b.items()
    }
    for tag in content_b:
        ta, tb = a.Tensors(tag)[0], b.Tensors(tag)[0]
        assert ta.step == tb.step
        np.testing.assert_array_equal(tensor_util.make_ndarray(ta.tensor_proto), tensor_util.make_ndarray(tb.tensor_proto))
    assert tensor_util.make_ndarray(b.Tensors("pr_clamped")[0].tensor_proto).shape == (6, 127)


def test_custom_scalars_layout_matches(tmp_path):
    layout = {
        "Taiwan": {"twse": ["Multiline", ["twse/0050", "twse/2330"]]},
        "USA": {"dow": ["Margin", ["dow/aaa", "dow/bbb", "dow/ccc"]], "nasdaq": ["Margin", ["a", "b", "c"]]},
    }
    ref, ours = write_both(tmp_path, lambda w: w.add_custom_scalars(layout))
    a, b = load(ref), load(ours)
    tag = "custom_scalars__config__"
    assert a.PluginTagToContent("custom_scalars").keys() == b.PluginTagToContent("custom_scalars").keys() == {tag}
    la, lb = (layout_pb2.Layout.FromString(tensor_util.make_ndarray(x.Tensors(tag)[0].tensor_proto).item()) for x in (a, b))
    assert la == lb
    assert [c.title for c in lb.category] == ["Taiwan", "USA"]
    assert lb.category[1].chart[0].margin.series[0].upper == "dow/ccc"


def test_tensorboardx_custom_scalar_shortcuts_match(tmp_path):
    def calls(w):
        w.add_custom_scalars_multilinechart(["loss/a", "loss/b"], category="losses", title="both")
        w.add_custom_scalars_marginchart(["v", "lo", "hi"])

    ref, ours = write_both(tmp_path, calls)
    tag = "custom_scalars__config__"
    layouts = lambda d: [layout_pb2.Layout.FromString(tensor_util.make_ndarray(e.tensor_proto).item()) for e in load(d).Tensors(tag)]
    assert layouts(ref) == layouts(ours)
    assert [c.title for la in layouts(ours) for c in la.category] == ["losses", "default"]


def hparams_by_run(d):
    """{run: {tag: parsed HParamsPluginData}} via the plugin event multiplexer."""
    mux = plugin_event_multiplexer.EventMultiplexer()
    mux.AddRunsFromDirectory(str(d))
    mux.Reload()
    return {
        run: {tag: plugin_data_pb2.HParamsPluginData.FromString(c) for tag, c in tags.items()}
        for run, tags in mux.PluginRunToTagToContent(hp_metadata.PLUGIN_NAME).items()
    }


def test_hparams_write_the_session_tensorboard_reads(tmp_path):
    hparams = {"lr": 3e-4, "batch": 64, "env": "CartPole-v1", "norm_adv": True, "skip": None}
    metrics = {"hparam/return": 199.5, "hparam/len": 200}
    ref, ours = tmp_path / "tbx", tmp_path / "tally"
    with tensorboardX.SummaryWriter(logdir=str(ref)) as w:
        w.add_hparams(hparams, metrics, name="trial0", global_step=3)
    with tally.SummaryWriter(ours) as w:
        w.add_hparams(hparams, metrics, run_name="trial0", global_step=3)
    pa, pb = hparams_by_run(ref), hparams_by_run(ours)
    assert pa == pb
    assert list(pb) == ["trial0"]
    start = pb["trial0"][hp_metadata.SESSION_START_INFO_TAG].session_start_info
    assert start.hparams["env"].string_value == "CartPole-v1" and start.hparams["norm_adv"].bool_value is True
    assert "skip" not in start.hparams
    sa, sb = load(ref / "trial0"), load(ours / "trial0")
    assert sorted(sb.Tags()["scalars"]) == sorted(metrics)
    for tag in metrics:
        assert [(e.step, e.value) for e in sa.Scalars(tag)] == [(e.step, e.value) for e in sb.Scalars(tag)] == [(3, metrics[tag])]


def test_hparams_with_tensorboardx_positional_name_lands_in_that_run(tmp_path):
    # tensorboardX's third parameter is the run's name, torch's the discrete domains: a str
    # there can only be tensorboardX's.
    ref, ours = tmp_path / "tbx", tmp_path / "tally"
    with tensorboardX.SummaryWriter(logdir=str(ref)) as w:
        w.add_hparams({"lr": 0.1}, {"m": 1.0}, "trial7")
    with tally.SummaryWriter(ours) as w:
        w.add_hparams({"lr": 0.1}, {"m": 1.0}, "trial7")
    assert list(hparams_by_run(ours)) == list(hparams_by_run(ref)) == ["trial7"]


def test_hparam_domains_and_numpy_values(tmp_path):
    with tally.SummaryWriter(tmp_path) as w:
        w.add_hparams(
            {"lr": np.float32(0.5), "opt": "adam"},
            {"m": 1.0},
            hparam_domain_discrete={"opt": ["adam", "sgd"]},
            run_name="r",
        )
    parsed = hparams_by_run(tmp_path)
    exp = parsed["r"][hp_metadata.EXPERIMENT_TAG].experiment
    infos = {i.name: i for i in exp.hparam_infos}
    assert [v.string_value for v in infos["opt"].domain_discrete.values] == ["adam", "sgd"]
    assert parsed["r"][hp_metadata.SESSION_START_INFO_TAG].session_start_info.hparams["lr"].number_value == 0.5
    assert [m.name.tag for m in exp.metric_infos] == ["m"]


def raw_events(d):
    out = []
    for f in sorted(Path(d).glob("events.out.tfevents.*")):
        out += [event_pb2.Event.FromString(r) for r in RawEventFileLoader(str(f)).Load()]
    return out


def test_file_writer_takes_protobufs_built_elsewhere(tmp_path):
    from tensorboardX.summary import hparams as tbx_hparams

    from tensorboardX.proto import event_pb2 as tbx_event_pb2
    from tensorboardX.proto import summary_pb2 as tbx_summary_pb2

    # tensorboardX only takes its own proto classes; torch (and so stable-baselines3) passes
    # tensorboard's: tally gets those, built from the same bytes.
    def protos(w):
        summary_mod, event_mod = (tbx_summary_pb2, tbx_event_pb2) if isinstance(w, tensorboardX.SummaryWriter) else (summary_pb2, event_pb2)
        hp = [summary_mod.Summary.FromString(s.SerializeToString()) for s in tbx_hparams({"gamma": 0.99}, {"rollout/ep_rew_mean": 0})]
        summary = summary_mod.Summary(value=[summary_mod.Summary.Value(tag="x", simple_value=2.5)])
        event = event_mod.Event(step=9, wall_time=1.0, log_message=event_mod.LogMessage(level=20, message="hi"))
        return hp, summary, event

    def calls(w):
        hp, summary, event = protos(w)
        fw = w._get_file_writer()
        assert fw.get_logdir() == w.file_writer.get_logdir()
        for s in hp:
            w.file_writer.add_summary(s)
        fw.add_summary(summary, 4, walltime=123.0)
        fw.add_event(event, walltime=77.0)

    ref, ours = write_both(tmp_path, calls)
    pa, pb = hparams_by_run(ref), hparams_by_run(ours)
    assert pa == pb and pa["."]
    ea_, eb = raw_events(ref), raw_events(ours)
    pick = lambda evs: [(e.step, e.wall_time, e.summary.value[0].tag) for e in evs if e.summary.value[:1] and e.summary.value[0].tag == "x"]
    assert pick(ea_) == pick(eb) == [(4, 123.0, "x")]
    logs = lambda evs: [(e.step, e.wall_time, e.log_message.message) for e in evs if e.HasField("log_message")]
    assert logs(ea_) == logs(eb) == [(9, 77.0, "hi")]


def test_purge_step_drops_the_earlier_files_later_steps(tmp_path):
    # What torch documents: a writer resumed with purge_step=5 hides what the crashed run logged
    # from step 5 on. (tensorboardX cannot be the reference here: two of its writers opened in
    # the same second write to the same file name.)
    with tally.SummaryWriter(tmp_path) as w:
        for s in range(10):
            w.add_scalar("loss", float(s), s)
    with tally.SummaryWriter(tmp_path, purge_step=5) as w:
        for s in range(5, 8):
            w.add_scalar("loss", 100.0 + s, s)
    assert len(list(tmp_path.glob("events.out.tfevents.*"))) == 2
    got = [(e.step, e.value) for e in load(tmp_path).Scalars("loss")]
    assert got == [(s, float(s)) for s in range(5)] + [(s, 100.0 + s) for s in range(5, 8)]


def test_constructor_keywords_and_lifecycle(tmp_path, monkeypatch):
    w = tally.SummaryWriter(tmp_path / "a", comment="_x", max_queue=3, flush_secs=1, filename_suffix=".sfx")
    assert w.get_logdir() == str(tmp_path / "a")
    w.add_text("t", "hello", 0)
    w.flush()
    [f] = (tmp_path / "a").glob("events.out.tfevents.*")
    assert f.name.endswith(".sfx")
    w.close()
    w.close()  # twice is harmless
    w.add_text("t", "again", 1)  # reopens, as torch's writer does: a second file
    w.close()
    assert len(list((tmp_path / "a").glob("events.out.tfevents.*"))) == 2
    monkeypatch.chdir(tmp_path)
    with tally.SummaryWriter(comment="_lr0.1") as w2:
        assert w2.get_logdir().startswith("runs" + os.sep) and w2.get_logdir().endswith("_lr0.1")
    with pytest.raises(ValueError, match="filename_suffix"):
        tally.SummaryWriter(tmp_path / "b", filename_suffix="a/b")


@pytest.mark.parametrize("method", ["add_graph", "add_embedding", "add_mesh", "add_onnx_graph"])
def test_unsupported_methods_name_themselves(tmp_path, method):
    with tally.SummaryWriter(tmp_path) as w:
        with pytest.raises(NotImplementedError, match=method):
            getattr(w, method)("tag", np.zeros(3))


@pytest.mark.parametrize(
    "call,exc,culprit",
    [
        (lambda w: w.add_image("i", np.zeros((2, 2, 2, 2))), ValueError, "img_tensor"),
        (lambda w: w.add_image("i", np.zeros((5, 4, 4))), ValueError, "img_tensor"),
        (lambda w: w.add_image("i", np.array([["a"]])), TypeError, "img_tensor"),
        (lambda w: w.add_image("i", np.zeros((3, 4, 4)), dataformats="CHX"), ValueError, "dataformats"),
        (lambda w: w.add_images("i", np.zeros((0, 3, 4, 4))), ValueError, "img_tensor"),
        (lambda w: w.add_video("v", np.zeros((2, 3, 4, 4))), ValueError, "vid_tensor"),
        (lambda w: w.add_video("v", np.zeros((1, 2, 3, 4, 4)), fps=0), ValueError, "fps"),
        (lambda w: w.add_audio("a", np.zeros((10, 3))), ValueError, "snd_tensor"),
        (lambda w: w.add_audio("a", np.zeros(10), sample_rate=0), ValueError, "sample_rate"),
        (lambda w: w.add_histogram("h", np.array([])), ValueError, "values"),
        (lambda w: w.add_histogram("h", np.array([1.0, np.nan]), bins=10), ValueError, "values"),
        (lambda w: w.add_histogram("h", np.arange(3.0), bins=[1.0, 0.0]), ValueError, "bins"),
        (lambda w: w.add_histogram_raw("h", 0, 1, 2, 1, 1, [1.0, 2.0], [1.0]), ValueError, "bucket_limits"),
        (lambda w: w.add_pr_curve("p", np.ones(3), np.ones(4)), ValueError, "labels"),
        (lambda w: w.add_text("t", 3), TypeError, "text_string"),
        (lambda w: w.add_custom_scalars({"c": {"x": ["Pie", ["a"]]}}), ValueError, "layout"),
        (lambda w: w.add_custom_scalars({"c": {"x": ["Margin", ["a"]]}}), ValueError, "Margin"),
        (lambda w: w.add_hparams([("lr", 1)], {}), TypeError, "hparam_dict"),
        (lambda w: w.add_hparams({"lr": 1}, {"acc": "high"}), TypeError, "metric_dict"),
        (lambda w: w.add_hparams({"lr": 1}, {}, hparam_domain_discrete={"bs": [1]}), TypeError, "hparam_domain_discrete"),
        (lambda w: w.file_writer.add_summary(123), TypeError, "summary"),
        (lambda w: w.file_writer.add_event("x"), TypeError, "event"),
    ],
)
def test_bad_inputs_name_the_argument(tmp_path, call, exc, culprit):
    with tally.SummaryWriter(tmp_path) as w:
        with pytest.raises(exc, match=culprit):
            call(w)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64", "bool"])
def test_add_tensor_is_read_back_whole_by_tensorboard(tmp_path, dtype):
    from tensorboard.util import tensor_util

    arr = (RNG.random((2, 3, 4)) * 100).astype(dtype)
    with tally.SummaryWriter(tmp_path) as w:
        w.add_tensor("weights", arr, 7)
        w.add_tensor("big_endian", arr.astype(arr.dtype.newbyteorder(">")), 8)
    acc = load(tmp_path)
    for tag, step in (("weights", 7), ("big_endian", 8)):
        (e,) = acc.Tensors(tag)
        assert e.step == step
        got = tensor_util.make_ndarray(e.tensor_proto)
        assert got.dtype == arr.dtype.newbyteorder("=") and got.shape == arr.shape
        np.testing.assert_array_equal(got, arr, err_msg=tag)
    assert acc.SummaryMetadata("weights").plugin_data.plugin_name == "tensor"


def test_add_tensor_of_a_type_tensorboard_cannot_hold_is_refused_naming_it(tmp_path):
    with tally.SummaryWriter(tmp_path) as w:
        with pytest.raises(TypeError, match=r"add_tensor\(.z.\).*complex128"):
            w.add_tensor("z", np.zeros(3, dtype=np.complex128))


BOXES = np.array([[10, 10, 40, 40], [40, 40, 60, 60], [0, 0, 63, 47], [-5, -5, 10, 10], [50, 40, 70, 60]])


def test_image_with_boxes_draws_the_pixels_tensorboardx_draws(tmp_path):
    from tally.tensorboardX import SummaryWriter as TallyX

    img = RNG.integers(0, 256, (3, 48, 64), dtype=np.uint8)
    ref = tmp_path / "tbx"
    with tensorboardX.SummaryWriter(logdir=str(ref)) as w:
        w.add_image_with_boxes("boxes", img, BOXES, 3)
        w.add_image_with_boxes("hwc", img.transpose(1, 2, 0), BOXES[:2], 4, None, "HWC")
    with tally.SummaryWriter(tmp_path / "torch_order") as w:
        w.add_image_with_boxes("boxes", img, BOXES, 3)
        w.add_image_with_boxes("hwc", img.transpose(1, 2, 0), BOXES[:2], 4, None, 1, "HWC")
    with TallyX(tmp_path / "tbx_order") as w:
        w.add_image_with_boxes("boxes", img, BOXES.tolist(), 3)
        w.add_image_with_boxes("hwc", img.transpose(1, 2, 0), BOXES[:2], 4, None, "HWC")
    want = load(ref)
    for ours in ("torch_order", "tbx_order"):
        got = load(tmp_path / ours)
        for tag in ("boxes", "hwc"):
            (a,), (b,) = want.Images(tag), got.Images(tag)
            assert (a.step, a.height, a.width) == (b.step, b.height, b.width), (ours, tag)
            np.testing.assert_array_equal(pixels(a.encoded_image_string), pixels(b.encoded_image_string), err_msg=f"{ours} {tag}")


def test_image_with_boxes_labels_sit_on_a_red_band_at_the_bottom_left(tmp_path):
    img = np.zeros((3, 48, 64), dtype=np.float32)
    with tally.SummaryWriter(tmp_path) as w:
        w.add_image_with_boxes("labelled", img, BOXES[:2], 0, labels=["cat", "dog"])
        w.add_image_with_boxes("one", img, BOXES[:1], 0, labels="cat")
        w.add_image_with_boxes("twice", img, BOXES[:1], 0, rescale=2)
    acc = load(tmp_path)
    px = pixels(acc.Images("labelled")[0].encoded_image_string)[:, :, :3]
    red, black = (px == [255, 0, 0]).all(2), (px == 0).all(2)
    # "cat" on box 0 (left 10, bottom 40): a band 3 glyphs wide, rows 30..40, columns 10..34.
    band = red[30:41, 10:35] | black[30:41, 10:35]
    assert band.all()
    assert black[30:41, 10:35].sum() > 20  # the glyphs' ink
    assert not red[20:29, 20:30].any()  # above the band, inside the box: the image
    np.testing.assert_array_equal(pixels(acc.Images("one")[0].encoded_image_string)[30:41, 10:35], pixels(acc.Images("labelled")[0].encoded_image_string)[30:41, 10:35])
    big = acc.Images("twice")[0]
    assert (big.height, big.width) == (96, 128)
    big_px = pixels(big.encoded_image_string)[:, :, :3]
    assert (big_px[19:21, 20:81] == [255, 0, 0]).all()  # the top edge of box 0, scaled to y=20


def test_image_with_boxes_refuses_what_it_cannot_draw(tmp_path):
    img = np.zeros((3, 8, 8), dtype=np.uint8)
    with tally.SummaryWriter(tmp_path) as w:
        with pytest.raises(ValueError, match=r"box_tensor has the shape \(4,\)"):
            w.add_image_with_boxes("x", img, np.array([1, 2, 3, 4]), 0)
        with pytest.raises(ValueError, match=r"1 labels for 2 boxes"):
            w.add_image_with_boxes("x", img, BOXES[:2], 0, labels=["only one"])
        with pytest.raises(ValueError, match=r"rescale=0"):
            w.add_image_with_boxes("x", img, BOXES[:1], 0, rescale=0)
        w.add_image_with_boxes("none", img, np.zeros((0, 4)), 0)
        w.add_scalar("after", 1.0, 0)
    acc = load(tmp_path)
    assert acc.Tags()["images"] == ["none"] and acc.Scalars("after")[0].value == 1.0
