"""transformers' Trainer logging through tally.integrations.transformers.TallyCallback, against
the same training reported to TensorBoard by transformers' own TensorBoardCallback
(docs/contract/integrations.md "transformers and TRL").

The model is a tiny torch module built here (no download); the training is seeded, so the two
runs compute the same losses, gradient norms and learning rates."""

from __future__ import annotations

import json
import math
import warnings

import pytest

pytest.importorskip("transformers", reason="transformers is not installed (make test-integrations)")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from transformers import Trainer, TrainerControl, TrainerState, TrainingArguments, set_seed  # noqa: E402

from conftest import f32, load, scalars  # noqa: E402

from tally.integrations.transformers import TallyCallback  # noqa: E402

# Wall-clock measures: their steps are compared, not their values.
TIMED = ("runtime", "per_second")


class TinyRegressor(torch.nn.Module):
    """A linear model returning ``{"loss": ...}``, as a Trainer expects of any model."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 1)

    def forward(self, x, labels=None):
        out = self.linear(x).squeeze(-1)
        loss = torch.nn.functional.mse_loss(out, labels) if labels is not None else None
        return {"loss": loss, "logits": out}


def dataset(n: int, seed: int) -> list:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    y = x @ torch.tensor([1.0, -2.0, 0.5, 3.0]) + 0.1 * torch.randn(n, generator=g)
    return [{"x": x[i], "labels": y[i]} for i in range(n)]


def train(out_dir, report_to, callbacks, max_steps=6) -> Trainer:
    set_seed(0)
    args = TrainingArguments(
        output_dir=str(out_dir),
        report_to=report_to,
        max_steps=max_steps,
        per_device_train_batch_size=4,
        per_device_eval_batch_size=4,
        learning_rate=0.05,
        logging_steps=1,
        eval_strategy="steps",
        eval_steps=3,
        save_strategy="no",
        use_cpu=True,
        disable_tqdm=True,
        dataloader_num_workers=0,
        seed=0,
    )
    trainer = Trainer(model=TinyRegressor(), args=args, train_dataset=dataset(32, 1), eval_dataset=dataset(8, 2), callbacks=callbacks)
    trainer.train()
    # A log after training (the writer was closed at on_train_end): a number, a str, and a
    # numpy float32, which TensorBoardCallback leaves out.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer.log({"after": 1.5, "note": "done", "np32": np.float32(2.0)})
    return trainer


def texts(d) -> dict:
    acc = load(d)
    return {t: [(e.step, e.tensor_proto.string_val[0].decode()) for e in acc.Tensors(t)] for t in acc.Tags()["tensors"]}


def differing_args(ours: str, ref: str) -> set:
    """The members in which two runs' ``args`` texts differ, both parsed as JSON: the two runs'
    own output_dir and report_to, and hub_token, which transformers writes as its placeholder
    "<HUB_TOKEN>" and tally redacts as any string under a token name."""
    a, b = json.loads(ours), json.loads(ref)
    assert a.keys() == b.keys()
    assert a["hub_token"] == "<redacted>" and b["hub_token"] == "<HUB_TOKEN>"
    return {k for k in a if a[k] != b[k]}


def test_tags_steps_and_values_equal_tensorboard_callbacks(tmp_path, monkeypatch):
    monkeypatch.setenv("TENSORBOARD_LOGGING_DIR", str(tmp_path / "tb"))
    train(tmp_path / "out_tb", ["tensorboard"], None)
    monkeypatch.delenv("TENSORBOARD_LOGGING_DIR")
    train(tmp_path / "out_tally", [], [TallyCallback(log_dir=str(tmp_path / "tally"))])

    ref, ours = scalars(tmp_path / "tb"), scalars(tmp_path / "tally")
    assert set(ours) == set(ref)
    assert {"train/loss", "train/grad_norm", "train/learning_rate", "train/epoch", "eval/loss", "train/train_loss", "train/after"} <= set(ours)
    assert "train/np32" not in ours  # skipped by both
    for tag in ref:
        assert [s for s, _ in ours[tag]] == [s for s, _ in ref[tag]], tag
        if not any(t in tag for t in TIMED):
            assert [v for _, v in ours[tag]] == [v for _, v in ref[tag]], tag
    assert [s for s, _ in ours["train/loss"]] == [1, 2, 3, 4, 5, 6]
    assert [s for s, _ in ours["eval/loss"]] == [3, 6]
    assert all(math.isfinite(v) for _, v in ours["train/loss"])
    assert ours["train/after"] == [(6, f32(1.5))]

    # The texts: the training arguments at step 0, the str log at the last step.
    ref_t, our_t = texts(tmp_path / "tb"), texts(tmp_path / "tally")
    assert set(our_t) == set(ref_t) == {"args/text_summary", "train/note/text_summary"}
    assert our_t["train/note/text_summary"] == ref_t["train/note/text_summary"] == [(6, "done")]
    # tally redacts secret-looking strings in text (docs/contract/run-artifacts.md "Secrets");
    # the arguments hold none, and their numbers and nulls (hub_token: null) stay: the same JSON.
    (ref_args,), (our_args,) = ref_t["args/text_summary"], our_t["args/text_summary"]
    assert our_args[0] == ref_args[0] == 0
    assert differing_args(our_args[1], ref_args[1]) == {"output_dir", "report_to", "hub_token"}
    assert '  "learning_rate": 0.05,' in our_args[1].splitlines()


def test_training_arguments_are_the_runs_configuration(tmp_path):
    trainer = train(tmp_path / "out", [], [TallyCallback()], max_steps=2)
    # The default directory is TensorBoardCallback's: output_dir/runs/<date>_<host>.
    (run,) = (tmp_path / "out" / "runs").iterdir()
    config = json.loads((run / "run_config.json").read_text())["config"]
    assert config["learning_rate"] == 0.05
    assert config["max_steps"] == 2
    assert config["output_dir"] == trainer.args.output_dir
    got = scalars(run)
    assert [s for s, _ in got["train/loss"]] == [1, 2]
    assert [s for s, _ in got["eval/loss"]] == [2]


def test_only_the_world_process_zero_writes(tmp_path):
    args = TrainingArguments(output_dir=str(tmp_path / "out"), report_to=[], use_cpu=True)
    cb = TallyCallback(log_dir=str(tmp_path / "run"))
    state = TrainerState(is_world_process_zero=False, global_step=1)
    cb.on_train_begin(args, state, TrainerControl())
    cb.on_log(args, state, TrainerControl(), logs={"loss": 1.0})
    cb.on_train_end(args, state, TrainerControl())
    assert not (tmp_path / "run").exists()


def test_config_is_refused_naming_the_source():
    with pytest.raises(TypeError, match="TrainingArguments"):
        TallyCallback(config={"lr": 1})


def sft_run(out_dir, report_to, callbacks) -> None:
    """TRL's SFTTrainer on a one-layer GPT-2 built from its config, with a word-level tokenizer
    built in memory (nothing downloaded)."""
    datasets = pytest.importorskip("datasets")
    trl = pytest.importorskip("trl", reason="trl is not installed (make test-integrations)")
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    words = "the cat sat on a mat dog ran to park".split()
    vocab = {w: i for i, w in enumerate(["[PAD]", "[UNK]", "[EOS]", *words])}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="[PAD]", unk_token="[UNK]", eos_token="[EOS]")
    set_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(vocab), n_positions=16, n_embd=16, n_layer=1, n_head=2,
                                       bos_token_id=2, eos_token_id=2, pad_token_id=0))
    texts = [" ".join(words[i % 5: i % 5 + 5]) for i in range(16)]
    config = trl.SFTConfig(
        output_dir=str(out_dir), report_to=report_to, max_steps=4, logging_steps=1, per_device_train_batch_size=4,
        learning_rate=0.01, save_strategy="no", use_cpu=True, disable_tqdm=True, max_length=16, seed=0,
    )
    trainer = trl.SFTTrainer(model=model, args=config, train_dataset=datasets.Dataset.from_dict({"text": texts}),
                             processing_class=tokenizer, callbacks=callbacks)
    trainer.train()


def test_trls_sft_trainer_logs_what_its_tensorboard_callback_logs(tmp_path, monkeypatch):
    monkeypatch.setenv("TENSORBOARD_LOGGING_DIR", str(tmp_path / "tb"))
    sft_run(tmp_path / "out_tb", ["tensorboard"], None)
    monkeypatch.delenv("TENSORBOARD_LOGGING_DIR")
    sft_run(tmp_path / "out_tally", [], [TallyCallback(log_dir=str(tmp_path / "tally"))])
    ref, ours = scalars(tmp_path / "tb"), scalars(tmp_path / "tally")
    assert set(ours) == set(ref)
    assert {"train/loss", "train/mean_token_accuracy", "train/num_tokens"} <= set(ours)
    for tag in ref:
        assert [s for s, _ in ours[tag]] == [s for s, _ in ref[tag]], tag
        if not any(t in tag for t in TIMED):
            assert [v for _, v in ours[tag]] == [v for _, v in ref[tag]], tag
    assert [s for s, _ in ours["train/loss"]] == [1, 2, 3, 4]
    # The model's configuration (its token ids bos_token_id, eos_token_id, pad_token_id) and
    # the arguments: the same texts, still JSON (docs/contract/run-artifacts.md "Secrets").
    ref_t, our_t = texts(tmp_path / "tb"), texts(tmp_path / "tally")
    (ref_model,), (our_model,) = ref_t["model_config/text_summary"], our_t["model_config/text_summary"]
    assert our_model == ref_model
    assert json.loads(our_model[1])["pad_token_id"] == 0
    assert differing_args(our_t["args/text_summary"][0][1], ref_t["args/text_summary"][0][1]) == {"output_dir", "report_to", "hub_token"}


def test_the_example_script_runs(tmp_path):
    from conftest import import_example

    import_example("transformers_trainer").main(["--steps", "10", "--log-dir", str(tmp_path / "run"), "--output-dir", str(tmp_path / "out")])
    got = scalars(tmp_path / "run")
    assert [s for s, _ in got["train/loss"]] == list(range(1, 11))
    assert [s for s, _ in got["eval/loss"]] == [10]


def test_evaluate_without_train_writes_where_tensorboard_callback_writes(tmp_path, monkeypatch):
    # docs/contract/integrations.md "transformers and TRL": runs/<date>_<host> under the working
    # directory (torch's default, which TensorBoardCallback's writer takes before train()).
    monkeypatch.delenv("TENSORBOARD_LOGGING_DIR", raising=False)

    def evaluate(cwd, report_to, callbacks):
        cwd.mkdir()
        monkeypatch.chdir(cwd)
        set_seed(0)
        args = TrainingArguments(output_dir=str(cwd / "out"), report_to=report_to, use_cpu=True, disable_tqdm=True,
                                 per_device_eval_batch_size=4)
        Trainer(model=TinyRegressor(), args=args, eval_dataset=dataset(8, 2), callbacks=callbacks).evaluate()
        (run,) = (cwd / "runs").iterdir()
        return run

    ref = evaluate(tmp_path / "tb", ["tensorboard"], None)
    ours = evaluate(tmp_path / "tally", [], [TallyCallback()])
    import socket

    assert ours.name.endswith("_" + socket.gethostname()) and ref.name.endswith("_" + socket.gethostname())
    got, want = scalars(ours), scalars(ref)
    assert set(got) == set(want) and "eval/loss" in got
    assert got["eval/loss"] == want["eval/loss"]


def test_report_to_tensorboard_beside_the_callback_is_said(tmp_path):
    # Both would write every point: said once, as the stable-baselines3 integration refuses the pair.
    with pytest.warns(UserWarning, match="report_to includes 'tensorboard'") as said:
        train(tmp_path / "out", ["tensorboard"], [TallyCallback(log_dir=str(tmp_path / "tally"))], max_steps=2)
    assert sum("report_to includes" in str(w.message) for w in said) == 1
