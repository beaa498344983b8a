"""stable-baselines3 through `tally.integrations.sb3`, against SB3's own `tensorboard` format:
the real PPO on the real CartPole, read back by TensorBoard's EventAccumulator and plugins."""

from __future__ import annotations

import io

import numpy as np
import pytest

sb3 = pytest.importorskip("stable_baselines3", reason="stable-baselines3 is not installed (make test-integrations)")
th = pytest.importorskip("torch")

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from PIL import Image as PILImage  # noqa: E402
from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common import logger as sb3_logger  # noqa: E402
from stable_baselines3.common.callbacks import BaseCallback  # noqa: E402
from tensorboard.backend.event_processing import plugin_event_multiplexer  # noqa: E402
from tensorboard.plugins.hparams import metadata as hp_metadata  # noqa: E402
from tensorboard.plugins.hparams import plugin_data_pb2  # noqa: E402
from tensorboard.util import tensor_util  # noqa: E402

from conftest import f32, import_example, load, scalars  # noqa: E402

import tally  # noqa: E402
from tally.integrations.sb3 import TallyOutputFormat, configure, install  # noqa: E402

NOT_IN_FILES = ("stdout", "log", "json", "csv")
# What SB3 itself keeps out of TensorBoard (exclude="tensorboard") in PPO's records.
SB3_EXCLUDED = {"time/iterations", "time/total_timesteps", "time/time_elapsed", "train/n_updates"}


class Spy(sb3_logger.KVWriter):
    """Every dump as the output formats receive it."""

    def __init__(self) -> None:
        self.dumps: list = []

    def write(self, key_values, key_excluded, step=0):
        self.dumps.append((dict(key_values), dict(key_excluded), step))

    def close(self):
        pass


def ppo(seed: int = 0, **kwargs) -> PPO:
    return PPO("MlpPolicy", "CartPole-v1", seed=seed, device="cpu", n_steps=512, batch_size=64, n_epochs=4, **kwargs)


def both(tmp_path, extra=()):
    """A logger writing SB3's tensorboard format, tally's, and the spy, side by side."""
    spy = Spy()
    fmts = [sb3_logger.TensorBoardOutputFormat(str(tmp_path / "sb3")), TallyOutputFormat(str(tmp_path / "tally")), spy, *extra]
    return sb3_logger.Logger(folder=str(tmp_path), output_formats=fmts), spy


def test_ppo_cartpole_scalars_equal_sb3s_tensorboard_output(tmp_path):
    model = ppo()
    logger, spy = both(tmp_path)
    model.set_logger(logger)
    model.learn(3000)
    logger.close()

    ref, ours = scalars(tmp_path / "sb3"), scalars(tmp_path / "tally")
    assert len(ref) >= 10 and {"train/loss", "train/entropy_loss", "rollout/ep_rew_mean", "time/fps"} <= set(ref)
    assert ours == ref  # same tags, same steps, the same float32 values

    # And what the spy saw at each dump is what the file holds (float32), excluded keys aside.
    dumps = [(kv, ex, step) for kv, ex, step in spy.dumps if kv]
    assert [step for _, _, step in dumps] == [512 * i for i in range(1, 7)]
    for kv, ex, step in dumps:
        for key, value in kv.items():
            if ex.get(key) and "tensorboard" in ex[key]:
                assert key not in ours, key
                continue
            assert (step, f32(value)) in ours[key], (key, step, value)
    assert SB3_EXCLUDED <= {k for kv, _, _ in dumps for k in kv}
    assert not SB3_EXCLUDED & set(ours)


def test_configure_run_equals_sb3s_configure_run_for_the_same_seed(tmp_path, monkeypatch):
    # The example, once as shipped (configure(..., ["stdout", "tally"])) and once with SB3's own
    # configure and its "tensorboard" format: two trainings from the same seed.
    example = import_example("sb3_ppo_cartpole")
    example.main(["--timesteps", "2500", "--log-dir", str(tmp_path / "tally")])
    monkeypatch.setattr(example, "configure", lambda d, fmts: sb3_logger.configure(d, ["tensorboard" if f == "tally" else f for f in fmts]))
    example.main(["--timesteps", "2500", "--log-dir", str(tmp_path / "sb3")])

    ref, ours = scalars(tmp_path / "sb3"), scalars(tmp_path / "tally")
    assert set(ours) == set(ref)
    timing = {"time/fps"}  # wall-clock rates differ between two trainings
    assert {k: v for k, v in ours.items() if k not in timing} == {k: v for k, v in ref.items() if k not in timing}
    assert [s for s, _ in ours["time/fps"]] == [s for s, _ in ref["time/fps"]] == [2048, 4096]
    # The example's HParam: the same session for TensorBoard's HParams tab, in the run itself.
    assert hparams(tmp_path / "tally") == hparams(tmp_path / "sb3")
    assert set(hparams(tmp_path / "tally")) == {"."}


def hparams(d) -> dict:
    """{run: {tag: parsed HParamsPluginData}} as TensorBoard's HParams plugin reads them."""
    mux = plugin_event_multiplexer.EventMultiplexer()
    mux.AddRunsFromDirectory(str(d))
    mux.Reload()
    return {
        run: {tag: plugin_data_pb2.HParamsPluginData.FromString(c) for tag, c in tags.items()}
        for run, tags in mux.PluginRunToTagToContent(hp_metadata.PLUGIN_NAME).items()
    }


def pixels(encoded: bytes) -> np.ndarray:
    return np.asarray(PILImage.open(io.BytesIO(encoded)).convert("RGB"))


class Media(BaseCallback):
    """Records every non-scalar value SB3 passes to its output formats, once."""

    def __init__(self, image, video, hist) -> None:
        super().__init__()
        self.image, self.video, self.hist = image, video, hist

    def _on_training_start(self) -> None:
        hp = {"algorithm": "PPO", "learning rate": 3e-4, "n_steps": 512, "normalize": True}
        self.logger.record("hparams", sb3_logger.HParam(hp, {"rollout/ep_len_mean": 0, "train/value_loss": 0.0}), exclude=NOT_IN_FILES)

    def _on_rollout_end(self) -> None:
        if self.num_timesteps > 512:
            return
        fig = plt.figure(figsize=(2, 1.5), dpi=50)
        plt.plot([0, 1, 2], [2, 0, 1])
        self.logger.record("media/figure", sb3_logger.Figure(fig, close=True), exclude=NOT_IN_FILES)
        self.logger.record("media/image", sb3_logger.Image(self.image, "HWC"), exclude=NOT_IN_FILES)
        self.logger.record("media/video", sb3_logger.Video(self.video, fps=10), exclude=NOT_IN_FILES)
        self.logger.record("media/hist_np", self.hist, exclude=NOT_IN_FILES)
        self.logger.record("media/hist_th", th.as_tensor(self.hist * 2), exclude=NOT_IN_FILES)
        self.logger.record("media/note", "CartPole, **seed 0**", exclude=NOT_IN_FILES)
        self.logger.record("media/not_in_tally", 1.5, exclude="tally")

    def _on_step(self) -> bool:
        return True


def test_video_figure_image_histogram_text_and_hparams_read_back_by_tensorboard(tmp_path):
    rng = np.random.default_rng(0)
    image = rng.integers(0, 256, (12, 16, 3), dtype=np.uint8)
    video = th.as_tensor(rng.integers(0, 256, (1, 5, 3, 8, 10), dtype=np.uint8))
    hist = rng.normal(size=1000)
    model = ppo()
    logger, _ = both(tmp_path)
    model.set_logger(logger)
    model.learn(1024, callback=Media(image, video, hist))
    logger.close()
    ref, ours = load(tmp_path / "sb3"), load(tmp_path / "tally")

    # Histograms: the same buckets as torch's writer (numpy arrays and tensors alike).
    for tag in ("media/hist_np", "media/hist_th"):
        (a,), (b,) = ref.Histograms(tag), ours.Histograms(tag)
        va, vb = a.histogram_value, b.histogram_value
        assert (b.step, vb.min, vb.max, vb.num, vb.bucket_limit, vb.bucket) == (a.step, va.min, va.max, va.num, va.bucket_limit, va.bucket)
        # numpy sums pairwise, tally in order: the sums may differ in the last bits.
        assert (vb.sum, vb.sum_squares) == pytest.approx((va.sum, va.sum_squares), rel=1e-12)
        assert vb.num == 1000 and len(vb.bucket) > 100
    # Text (TensorBoard's Text tab).
    text_tag = "media/note/text_summary"
    texts = [tensor_util.make_ndarray(e.tensor_proto).tolist() for e in ours.Tensors(text_tag)]
    assert texts == [tensor_util.make_ndarray(e.tensor_proto).tolist() for e in ref.Tensors(text_tag)] == [[b"CartPole, **seed 0**"]]
    assert [e.step for e in ours.Tensors(text_tag)] == [e.step for e in ref.Tensors(text_tag)] == [512]
    # Image and figure: the same pixels as torch's writer, at the same step.
    got = ours.Images("media/image")
    assert [e.step for e in got] == [512]
    assert np.array_equal(pixels(got[0].encoded_image_string), image)
    fig_ours, fig_ref = ours.Images("media/figure"), ref.Images("media/figure")
    assert [e.step for e in fig_ours] == [e.step for e in fig_ref] == [512]
    assert np.array_equal(pixels(fig_ours[0].encoded_image_string), pixels(fig_ref[0].encoded_image_string))
    assert not plt.get_fignums()  # Figure(close=True) closed it
    # Video: an animated GIF of the 5 frames at 10 fps, which TensorBoard's image plugin serves.
    (vid,) = ours.Images("media/video")
    gif = PILImage.open(io.BytesIO(vid.encoded_image_string))
    assert (gif.format, gif.n_frames, gif.size, vid.step) == ("GIF", 5, (10, 8), 512)
    assert gif.info["duration"] == 100
    # Excluded from "tally" only: in SB3's file, not in ours.
    assert "media/not_in_tally" in ref.Tags()["scalars"] and "media/not_in_tally" not in ours.Tags()["scalars"]

    # HParams: one session in the run itself (no sub-run), hyperparameters typed as given.
    hp_ours, hp_ref = hparams(tmp_path / "tally"), hparams(tmp_path / "sb3")
    assert set(hp_ours) == {"."}
    start = hp_ours["."][hp_metadata.SESSION_START_INFO_TAG].session_start_info.hparams
    ref_start = hp_ref["."][hp_metadata.SESSION_START_INFO_TAG].session_start_info.hparams
    assert start["algorithm"].string_value == "PPO" and start["n_steps"].number_value == 512
    assert {k: start[k] for k in ("algorithm", "learning rate", "n_steps")} == {k: ref_start[k] for k in ("algorithm", "learning rate", "n_steps")}
    # A bool stays a bool (torch's writer stores it as the number 1.0).
    assert start["normalize"].bool_value is True
    exp = hp_ours["."][hp_metadata.EXPERIMENT_TAG].experiment
    assert [m.name.tag for m in exp.metric_infos] == ["rollout/ep_len_mean", "train/value_loss"]


def test_excluded_keys_and_a_value_tensorboard_cannot_show(tmp_path):
    fmt = TallyOutputFormat(str(tmp_path))
    fmt.write({"a/x": 1.0, "a/y": 2, "a/z": 3.0}, {"a/x": None, "a/y": ("tensorboard",), "a/z": "tally"}, step=7)
    # A dict has no TensorBoard form: the error names the key, the keys around it are written.
    with pytest.raises(tally.ValueTypeError, match=r"'b/cfg': a dict value"):
        fmt.write({"b/a": 1.0, "b/cfg": {"lr": 1}, "b/z": 2.0}, {"b/a": None, "b/cfg": None, "b/z": None}, step=8)
    with pytest.raises(tally.ValueTypeError, match=r"'c/b': a bytes .* not a real number; 'c/z': a complex128"):
        fmt.write({"c/b": b"1", "c/ok": 4.0, "c/z": np.complex128(1j)}, {"c/b": None, "c/ok": None, "c/z": None}, step=9)
    fmt.close()
    with pytest.raises(tally.ClosedError):
        fmt.write({"a/x": 1.0}, {"a/x": None}, step=9)
    assert scalars(tmp_path) == {"a/x": [(7, 1.0)], "b/a": [(8, 1.0)], "b/z": [(8, 2.0)], "c/ok": [(9, 4.0)]}


def test_configure_builds_sb3s_logger_with_the_tally_format(tmp_path, capsys):
    logger = configure(str(tmp_path), ["stdout", "csv", "tally"])
    assert isinstance(logger, sb3_logger.Logger)
    kinds = [type(f).__name__ for f in logger.output_formats]
    assert kinds == ["HumanOutputFormat", "CSVOutputFormat", "TallyOutputFormat"]
    assert f"Logging to {tmp_path}" in capsys.readouterr().out
    logger.record("train/x", 0.25)
    logger.dump(3)
    logger.close()
    assert (tmp_path / "progress.csv").read_text().splitlines() == ["train/x", "0.25"]
    assert scalars(tmp_path) == {"train/x": [(3, 0.25)]}
    with pytest.raises(ValueError, match="Unknown format specified: tensorbored"):
        configure(str(tmp_path / "b"), ["tensorbored"])
    with pytest.raises(ValueError, match='"tally" writes what "tensorboard" writes, into the same folder'):
        configure(str(tmp_path / "d"), ["tensorboard", "tally"])
    with pytest.raises(TypeError, match="format_strings must be a list"):
        configure(str(tmp_path / "c"), "stdout,tally")


class FindsTheTensorBoardFormat(BaseCallback):
    """SB3's documented pattern for logging more to TensorBoard: find the output format that is a
    ``TensorBoardOutputFormat`` and write through its ``writer``."""

    def _on_training_start(self) -> None:
        fmt = next(f for f in self.logger.output_formats if isinstance(f, sb3_logger.TensorBoardOutputFormat))
        fmt.writer.add_text("found", type(fmt).__name__, 0)

    def _on_step(self) -> bool:
        return True


def test_install_writes_sb3s_own_numbered_run_folders_through_tally(tmp_path, monkeypatch):
    # A script run twice with tensorboard_log=: SB3 numbers the folders PPO_1, PPO_2 itself.
    for _ in range(2):
        ppo(tensorboard_log=str(tmp_path / "sb3")).learn(1024, tb_log_name="PPO", callback=FindsTheTensorBoardFormat())
    monkeypatch.setattr(sb3_logger, "make_output_format", sb3_logger.make_output_format)  # undone after the test
    install()
    install()  # a second call changes nothing
    for _ in range(2):
        ppo(tensorboard_log=str(tmp_path / "tally")).learn(1024, tb_log_name="PPO", callback=FindsTheTensorBoardFormat())
    runs = sorted(p.name for p in (tmp_path / "tally").iterdir())
    assert runs == sorted(p.name for p in (tmp_path / "sb3").iterdir()) == ["PPO_1", "PPO_2"]
    for run in runs:
        assert len(list((tmp_path / "tally" / run).glob("events.out.tfevents.*"))) == 1
        ref, ours = scalars(tmp_path / "sb3" / run), scalars(tmp_path / "tally" / run)
        assert set(ours) == set(ref) and ours["train/loss"] == ref["train/loss"]
        assert load(tmp_path / "tally" / run).Tags()["tensors"] == ["found/text_summary"]
        assert tally._tally.read_columns([tmp_path / "tally" / run])  # one writer per folder: the run is read, not refused
