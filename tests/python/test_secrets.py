"""Secrets kept out of what a Python run writes and sends (docs/contract/run-artifacts.md
"Secrets"): each leak users reported, fed through `tally.Logger` and read back from
`run_config.json`, `run_summary.json`, the terminal output and W&B's own offline file."""

import json
import os
import sys
from pathlib import Path

import pytest

import tally

WANDB_KEY = "0123456789abcdef0123456789abcdef01234567"
SECRETS = [
    "abcdefgh1234bearer",
    "wk-123",
    "pw-456",
    "sid-789",
    "dbpass-1",
    "argv-key-2",
    "cmd-key-3",
    "pair-key-4",
    WANDB_KEY,
]


def leaky_config():
    return {
        "http": {"headers": ["Authorization: Bearer abcdefgh1234bearer"]},
        "wandb_key": "wk-123",
        "pwd": "pw-456",
        "cookie": "sid-789",
        "db_url": "postgresql://trainer:dbpass-1@db.internal:5432/runs",
        "argv": ["train.py", "--api-key", "argv-key-2", "--lr", "3e-4"],
        "command": "python train.py --api-key cmd-key-3 --seed 1",
        "env": [["api_key", "pair-key-4"], ["seed", "1"]],
        "note": f"wandb login {WANDB_KEY}",
        "lr": 3e-4,
        "num_keys": 4,
    }


def assert_clean(what, text):
    leaked = [s for s in SECRETS if s in text]
    assert not leaked, f"{leaked} leaked into {what}"


def step(log, i):
    log.step(i, env_steps=64 * i, metrics={"Loss/critic": 1.0}, iteration_time=0.01, steps_this_iter=64)


def test_run_config_summary_and_terminal_hold_no_secret(tmp_path, capfd):
    with tally.Logger(
        algo="sac", task="go2", sim="mujoco", max_iterations=2, num_envs=8, log_root=tmp_path,
        logger="none", panel="plain", config=leaky_config(),
    ) as log:
        log.status("connecting with WANDB_API_KEY=wk-123")
        log.set_runtime_manifest({"schema_version": 1, "shutdown": {"cmd": "train --api-key cmd-key-3"}})
        step(log, 1)
        step(log, 2)
        # An early manifest: a run closed completed with it is recorded failed.
        log.close("interrupted")
    out = capfd.readouterr().out
    assert "connecting with WANDB_API_KEY=<redacted>" in out, out
    assert_clean("the terminal", out)
    text = (log.run_dir / "run_config.json").read_text()
    assert_clean("run_config.json", text)
    config = json.loads(text)["config"]
    # The shape stays: same keys, same list lengths, ordinary values untouched.
    assert set(config) == set(leaky_config())
    assert config["db_url"] == "postgresql://trainer:<redacted>@db.internal:5432/runs"
    assert config["argv"] == ["train.py", "--api-key", "<redacted>", "--lr", "3e-4"]
    assert config["env"] == [["api_key", "<redacted>"], ["seed", "1"]]
    assert config["lr"] == 3e-4 and config["num_keys"] == 4
    summary = (log.run_dir / "run_summary.json").read_text()
    assert_clean("run_summary.json", summary)
    doc = json.loads(summary)
    assert doc["status"] == "interrupted"
    assert doc["runtime_manifest"]["shutdown"] == {"cmd": "train --api-key <redacted>"}


def test_the_wandb_offline_run_holds_no_secret(tmp_path, monkeypatch):
    wandb = pytest.importorskip("wandb")
    from test_wandb import wandb_file, wandb_records

    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path / "wandb-default"))
    with tally.Logger(
        algo="sac", task="go2", sim="mujoco", max_iterations=2, num_envs=8, log_root=tmp_path,
        logger="wandb", panel="off", config=leaky_config(),
        wandb={"project": "tally-test", "notes": "resumed with --api-key cmd-key-3"},
    ) as log:
        run = wandb.run
        step(log, 1)
        step(log, 2)
    assert run is not None and wandb.run is None
    path = wandb_file(log.run_dir / "wandb")
    # The config W&B stores travels in the run record (later updates in config records).
    config = {}
    for r in wandb_records(path):
        kind = r.WhichOneof("record_type")
        if kind in ("run", "config"):
            for it in (r.run.config if kind == "run" else r.config).update:
                config[it.key or "/".join(it.nested_key)] = json.loads(it.value_json)
    # The user's config sits at the top level of W&B's config.
    assert config["wandb_key"] == "<redacted>"
    assert config["argv"] == ["train.py", "--api-key", "<redacted>", "--lr", "3e-4"]
    assert_clean("the W&B config", json.dumps(config))
    assert run.notes == "resumed with --api-key <redacted>"
    # Not only the decoded config: no record of the offline file carries a secret.
    assert_clean("the .wandb file", path.read_bytes().decode("latin-1"))


# --- issue 29: every secret shape, through every writer, grepped across everything written ----

RSA_BODY = "MIIEpAIBAAKCAQEAcorpusRSAbody0123456789abcdefABCDEF"
GCP_BODY = "MIIEvQIBADANBgkqcorpusGCPbody0123456789abcdefABCD"
OPENSSH_BODY = "b3BlbnNzaC1rZXktdjEcorpusOPENSSHbody0123456789"
EC_BODY = "MHcCAQEEIcorpusECbody0123456789abcdefghijklmnop"


def pem(label, body):
    return f"-----BEGIN {label}PRIVATE KEY-----\n{body}\nQmVvcm91cw==\n-----END {label}PRIVATE KEY-----\n"


GCP_SERVICE_ACCOUNT = json.dumps({
    "type": "service_account",
    "project_id": "corpus-proj",
    "private_key_id": "corpuspkid0123456789",
    "private_key": pem("", GCP_BODY),
    "client_email": "svc@corpus-proj.iam.gserviceaccount.com",
})

# Each (value, the secret text that must appear nowhere): the shapes issue 29 found leaking and
# every shape already redacted (crates/tally/src/redact/tests.rs), under ordinary key names.
CORPUS = {
    "pem_rsa": (pem("RSA ", RSA_BODY), RSA_BODY),
    "pem_openssh": (pem("OPENSSH ", OPENSSH_BODY), OPENSSH_BODY),
    "pem_ec_in_text": (f"key follows {pem('EC ', EC_BODY)} end", EC_BODY),
    "gcp": (GCP_SERVICE_ACCOUNT, GCP_BODY),
    "gcp_key_id": (GCP_SERVICE_ACCOUNT, "corpuspkid0123456789"),
    "slack_bot": ("notify xoxb-1234567890-0987654321-CorpusSlackBotTok", "CorpusSlackBotTok"),
    "slack_user": ("xoxp-1234567890-0987654321-CorpusSlackUsrTok", "CorpusSlackUsrTok"),
    "bearer": ("Authorization: Bearer corpusBearer12345", "corpusBearer12345"),
    "bearer_inline": ("curl -H 'Authorization: Bearer corpusInline12345'", "corpusInline12345"),
    "basic": ("auth=Basic Y29ycHVzOmJhc2ljcHc=", "Y29ycHVzOmJhc2ljcHc="),
    "cookie": ("Cookie: session=corpusCookie77; theme=dark", "corpusCookie77"),
    "url_password": ("postgres://bob:corpusPgPw99@db.internal:5432/runs", "corpusPgPw99"),
    "query_token": ("https://example.com/a?token=corpusQueryTok&page=2", "corpusQueryTok"),
    "argv_flag": ("python train.py --api-key corpusArgvKey --lr 3e-4", "corpusArgvKey"),
    "argv_eq": ("python train.py --wandb-token=corpusEqTok --seed 1", "corpusEqTok"),
    "env_pair": ("WANDB_API_KEY=corpusEnvKey python train.py", "corpusEnvKey"),
    "dict_text": ("{'api_key': 'corpusDictKey', 'lr': 0.1}", "corpusDictKey"),
    "wandb_key": ("wandb login 0c0ffee0c0ffee0c0ffee0c0ffee0c0ffee0c0ff", "0c0ffee0c0ffee0c0ffee0c0ffee0c0ffee0c0ff"),
    "openai": ("use sk-proj-corpusOpenAIabcdefghij please", "corpusOpenAIabcdefghij"),
    "github": ("ghp_corpusGithubabcdefghijklmnopqrstuvw", "corpusGithubabcdefghijklmnopqrstuvw"),
    "github_pat": ("github_pat_11CORPUS0123456789_abcdefghij", "11CORPUS0123456789_abcdefghij"),
    "aws": ("aws AKIACORPUS7EXAMPLE12", "AKIACORPUS7EXAMPLE12"),
    "hf": ("hf_corpusHuggingfaceabcdefghijklmnopq", "corpusHuggingfaceabcdefghijklmnopq"),
}
# Under a secret-looking key name: hidden whatever it holds.
NAMED = {"wandb_key": "corpusNamedWk", "db_password": "corpusNamedPw", "HF_TOKEN": "corpusNamedHf"}
ARGV = ["train.py", "--api-key", "corpusArgvOfProcess", "--db", "postgres://bob:corpusArgvPgPw@host/db", "--lr", "3e-4"]
CORPUS_SECRETS = sorted({s for _, s in CORPUS.values()} | set(NAMED.values()) | {"corpusArgvOfProcess", "corpusArgvPgPw"})


def corpus_config():
    cfg = {k: v for k, (v, _) in CORPUS.items()}
    cfg.update(NAMED)
    cfg["deploy"] = {"ssh": pem("RSA ", RSA_BODY)}
    cfg["lr"] = 3e-4
    return cfg


def hits_under(root):
    """Every (file, secret) where a corpus secret appears in a file under ``root`` (bytes,
    recursively, symlinks to files followed, as UTF-8 and as the JSON-escaped form)."""
    found = []
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            p = Path(dirpath) / name
            try:
                data = p.read_bytes()
            except OSError:
                continue
            for s in CORPUS_SECRETS:
                if s.encode() in data:
                    found.append((str(p.relative_to(root)), s))
    return found


def offline_wandb(monkeypatch, tmp_path):
    pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path / "wandb-default"))


def event_bytes(d):
    return b"".join(p.read_bytes() for p in Path(d).rglob("events.out.tfevents.*"))


def test_wandb_does_not_record_the_raw_command_line(tmp_path, monkeypatch):
    offline_wandb(monkeypatch, tmp_path)
    monkeypatch.setattr(sys, "argv", list(ARGV))
    with tally.Logger(
        algo="sac", task="go2", sim="mujoco", max_iterations=2, num_envs=8, log_root=tmp_path / "runs",
        logger="wandb", panel="off", wandb={"project": "tally-test"},
    ) as log:
        step(log, 1)
        step(log, 2)
    assert sys.argv == ARGV, "the process's own argv is left as it was"
    # Offline, W&B keeps its run metadata (wandb-metadata.json online) as an environment record.
    from test_wandb import wandb_file, wandb_records

    envs = [r.environment for r in wandb_records(wandb_file(log.run_dir / "wandb"))
            if r.WhichOneof("record_type") == "environment"]
    assert envs, "W&B recorded its run metadata"
    assert list(envs[0].args) == ["--api-key", "<redacted>", "--db", "postgres://bob:<redacted>@host/db", "--lr", "3e-4"]
    assert not [h for h in hits_under(tmp_path) if h[1] in ("corpusArgvOfProcess", "corpusArgvPgPw")]


def test_summary_writer_wandb_config_is_redacted(tmp_path, monkeypatch):
    offline_wandb(monkeypatch, tmp_path)
    from test_wandb import wandb_file, wandb_records

    d = tmp_path / "sw"
    with tally.SummaryWriter(d, wandb={"project": "tally-test", "config": corpus_config(),
                                       "notes": "run with --api-key corpusArgvKey"}) as w:
        run = w._wandb_run
        w.add_scalar("a", 1.0, 0)
    assert run.notes == "run with --api-key <redacted>"
    config = {}
    for r in wandb_records(wandb_file(d / "wandb")):
        kind = r.WhichOneof("record_type")
        if kind in ("run", "config"):
            for it in (r.run.config if kind == "run" else r.config).update:
                config[it.key or "/".join(it.nested_key)] = json.loads(it.value_json)
    assert config["deploy"] == {"ssh": "<redacted>\n"}  # the block, its trailing newline kept
    assert config["wandb_key"] == "<redacted>" and config["lr"] == 3e-4
    assert not hits_under(tmp_path)


def test_add_text_and_add_hparams_are_redacted_by_default(tmp_path):
    d = tmp_path / "on"
    table = "|param|value|\n|-|-|\n|exp_name|ppo|\n|wandb_key|corpusNamedWk|\n|cmd|--api-key corpusArgvKey|"
    with tally.SummaryWriter(d) as w:
        w.add_text("ssh", pem("RSA ", RSA_BODY), 0)
        w.add_text("hyperparameters", table, 0)
        w.add_hparams({"db_password": "corpusNamedPw", "slack": CORPUS["slack_bot"][0], "lr": 0.1}, {"m": 1.0}, run_name="hp")
    assert not hits_under(tmp_path)
    data = event_bytes(d)
    assert b"|wandb_key|<redacted>|" in data and b"|exp_name|ppo|" in data and b"--api-key <redacted>" in data
    assert b"notify <redacted>" in data


def test_redact_false_writes_text_and_hparams_verbatim(tmp_path):
    d = tmp_path / "off"
    with tally.SummaryWriter(d, redact=False) as w:
        w.add_text("ssh", pem("RSA ", RSA_BODY), 0)
        w.add_hparams({"db_password": "corpusNamedPw", "lr": 0.1}, {"m": 1.0}, run_name="hp")
    data = event_bytes(d)
    assert RSA_BODY.encode() in data and b"corpusNamedPw" in data
    # run_config.json is an artefact: always redacted.
    assert "corpusNamedPw" not in (d / "run_config.json").read_text()


def test_the_secret_corpus_appears_nowhere(tmp_path, monkeypatch, capfd):
    """Every shape, through Logger config (+ trace, status, W&B offline) and SummaryWriter
    text, hparams, config and W&B config, with a leaky argv: no file under the run directories
    (event files as bytes, W&B's offline files, the trace) and no terminal line holds one."""
    offline_wandb(monkeypatch, tmp_path)
    monkeypatch.setattr(sys, "argv", list(ARGV))
    cfg = corpus_config()
    with tally.Logger(
        algo="sac", task="go2", sim="mujoco", max_iterations=2, num_envs=8, log_root=tmp_path / "runs",
        logger="wandb", panel="plain", config=cfg, trace=True,
        wandb={"project": "tally-test", "notes": CORPUS["argv_flag"][0]},
    ) as log:
        for k, (v, _) in CORPUS.items():
            log.status(f"{k}: {v}")
        step(log, 1)
        step(log, 2)
    assert list(log.run_dir.rglob("*.wandb")), "W&B's offline run is under the run directory"
    trace = Path(json.loads((log.run_dir / "run_summary.json").read_text())["trace_path"])
    assert trace.is_file() and log.run_dir in trace.parents, "the trace is in the run directory"

    d = tmp_path / "writer"
    with tally.SummaryWriter(d, config=cfg, wandb={"project": "tally-test", "config": cfg}) as w:
        for k, (v, _) in CORPUS.items():
            w.add_text(k, v, 0)
        table = "|param|value|\n|-|-|\n" + "\n".join(f"|{k}|{v}|" for k, v in {**NAMED, "cmd": CORPUS["argv_flag"][0]}.items())
        w.add_text("hyperparameters", table, 0)
        w.add_hparams({k: v for k, v in cfg.items() if not isinstance(v, dict)}, {"m": 1.0}, run_name="hp")
        w.add_scalar("a", 1.0, 0)
    assert list(d.rglob("*.wandb"))
    assert list(d.rglob("events.out.tfevents.*"))

    out = capfd.readouterr()
    leaked = hits_under(tmp_path)
    leaked += [("stdout", s) for s in CORPUS_SECRETS if s in out.out]
    leaked += [("stderr", s) for s in CORPUS_SECRETS if s in out.err]
    assert not leaked, leaked
