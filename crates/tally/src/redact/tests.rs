//! The redaction rules as a table: what must be hidden, and what must stay.

use super::*;
use serde_json::json;

const WANDB_KEY: &str = "0123456789abcdef0123456789abcdef01234567";

#[test]
fn key_names_match_whole_words_case_insensitively() {
    for name in [
        "api_key",
        "apiKey",
        "APIKEY",
        "X-Api-Key",
        "wandb_key",
        "WANDB_API_KEY",
        "HF_TOKEN",
        "token",
        "db_password",
        "PGPASSWORD",
        "passwd",
        "pwd",
        "auth",
        "Authorization",
        "HTTPAuthorization",
        "cookie",
        "Set-Cookie",
        "credentials",
        "private_key",
        "session",
        "session_id",
        "signature",
        "client_secret",
        "secrets",
        "aws_secret_access_key",
    ] {
        assert!(is_secret_key(name), "{name} should name a secret");
    }
    for name in [
        "keyboard",
        "monkey",
        "num_keys",
        "max_tokens",
        "tokenizer",
        "author",
        "authors",
        "passes",
        "lr",
        "commit",
        "hotkeys",
        "pwdiff",
        "sessions_per_day",
        "tokens_per_sec",
    ] {
        assert!(!is_secret_key(name), "{name} should not name a secret");
    }
}

/// (input, expected) for strings under ordinary keys.
const TEXT: &[(&str, &str)] = &[
    // Header lines and schemes.
    (
        "Authorization: Bearer abc.def-123456",
        "Authorization: <redacted>",
    ),
    (
        "curl -H 'Authorization: Bearer abcdefgh1234'",
        "curl -H 'Authorization: Bearer <redacted>'",
    ),
    ("Bearer eyJhbGciOiJIUzI1NiJ9.e30.x", "Bearer <redacted>"),
    ("auth=Basic dXNlcjpwYXNzd29yZA==", "auth=Basic <redacted>"),
    (
        "header Basic dXNlcjpwYXNzd29yZA==",
        "header Basic <redacted>",
    ),
    ("Cookie: session=abc; theme=dark", "Cookie: <redacted>"),
    ("X-Api-Key: abc123", "X-Api-Key: <redacted>"),
    // URLs with a password: user and host stay.
    (
        "postgres://alice:hunter2@db.example.com:5432/runs",
        "postgres://alice:<redacted>@db.example.com:5432/runs",
    ),
    (
        "connect to redis://:s3cr3t@cache:6379/0 now",
        "connect to redis://:<redacted>@cache:6379/0 now",
    ),
    (
        "https://example.com/a?token=abc123&page=2",
        "https://example.com/a?token=<redacted>&page=2",
    ),
    // argv inside one command string, `--flag=value`, KEY=VALUE.
    (
        "python train.py --api-key sk123 --lr 3e-4",
        "python train.py --api-key <redacted> --lr 3e-4",
    ),
    (
        "python train.py --wandb-token=abc --seed 1",
        "python train.py --wandb-token=<redacted> --seed 1",
    ),
    (
        "--db-password 'hunter2' --x 1",
        "--db-password '<redacted>' --x 1",
    ),
    (
        "WANDB_API_KEY=abc123 python train.py",
        "WANDB_API_KEY=<redacted> python train.py",
    ),
    (
        "export HF_TOKEN=\"hf_short\"",
        "export HF_TOKEN=\"<redacted>\"",
    ),
    (
        "{'api_key': 'abc', 'lr': 0.1}",
        "{'api_key': '<redacted>', 'lr': 0.1}",
    ),
    // Known token shapes, anywhere.
    (
        "key is 0123456789abcdef0123456789abcdef01234567.",
        "key is <redacted>.",
    ),
    (
        "use sk-proj-abcdefghijklmnopqrstuvwx please",
        "use <redacted> please",
    ),
    ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "<redacted>"),
    ("github_pat_11ABCDEFG0123456789_abcdefghij", "<redacted>"),
    ("aws AKIAIOSFODNN7EXAMPLE", "aws <redacted>"),
    ("hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "<redacted>"),
];

/// Strings that look a little like secrets and must stay as they are.
const KEPT: &[&str] = &[
    "Warming up...",
    "Checkpoint saved: /runs/sac/go2/2026-03-09_10-30-00/model_1000.pt",
    "basic settings for the bearer of news",
    "https://github.com/org/repo/tree/main",
    "https://user@example.com/path",
    "lr=3e-4 batch=256 num_keys=4 max_tokens=2048",
    "python train.py --keyboard on --monkey 3 --lr 0.1",
    "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "git 0123456789abcdef0123456789abcdef0123456", // 39 hex
    "task-skeleton sk-short",
    "12:30: done",
    "",
];

#[test]
fn secrets_in_text_are_replaced_in_place() {
    for (input, expected) in TEXT {
        assert_eq!(redact_text(input), *expected, "input {input:?}");
        // Redacting twice changes nothing more.
        assert_eq!(
            redact_text(expected),
            *expected,
            "second pass over {expected:?}"
        );
    }
}

#[test]
fn ordinary_text_is_not_touched() {
    for input in KEPT {
        assert!(
            matches!(redact_text(input), Cow::Borrowed(_)),
            "{input:?} changed to {:?}",
            redact_text(input)
        );
    }
}

#[test]
fn documents_keep_their_shape_and_lose_their_secrets() {
    let doc = json!({
        "wandb_key": "abc", "pwd": "hunter2", "cookie": "sid=1", "X-Api-Key": "k",
        "credentials": {"user": "bob", "pass": "p", "port": 5432},
        "use_auth": true, "private": null, "session_token": 1234, "empty_token": "",
        "db": "mysql://root:toor@localhost/db",
        "argv": ["train.py", "--api-key", "X1", "--lr", "0.1", "--token", "--verbose"],
        "pairs": [["api_key", "X2"], ["lr", "0.1"]],
        "headers": {"Authorization": "Bearer abcdefgh12345"},
        "cmd": "train --api-key X3",
        "git": {"commit": WANDB_KEY}, "git_sha": WANDB_KEY, "wandb": {"note": WANDB_KEY},
        "num_keys": 4, "keyboard": "qwerty", "max_tokens": 2048,
    });
    let want = json!({
        "wandb_key": REDACTED, "pwd": REDACTED, "cookie": REDACTED, "X-Api-Key": REDACTED,
        "credentials": {"user": REDACTED, "pass": REDACTED, "port": 5432},
        "use_auth": true, "private": null, "session_token": 1234, "empty_token": "",
        "db": "mysql://root:<redacted>@localhost/db",
        "argv": ["train.py", "--api-key", REDACTED, "--lr", "0.1", "--token", "--verbose"],
        "pairs": [["api_key", REDACTED], ["lr", "0.1"]],
        "headers": {"Authorization": REDACTED},
        "cmd": "train --api-key <redacted>",
        "git": {"commit": WANDB_KEY}, "git_sha": WANDB_KEY, "wandb": {"note": REDACTED},
        "num_keys": 4, "keyboard": "qwerty", "max_tokens": 2048,
    });
    let got = redact_value(&doc);
    assert_eq!(got, want);
    assert_eq!(redact_value(&got), want, "redaction is idempotent");
}

#[test]
fn a_secret_key_name_wins_over_a_hash_key_name() {
    let doc = json!({"git_token": WANDB_KEY, "commit": "ghp_abcdefghijklmnopqrstuvwxyz0123456789"});
    assert_eq!(
        redact_value(&doc),
        json!({"git_token": REDACTED, "commit": REDACTED})
    );
}

#[test]
fn odd_text_never_panics_and_redacting_twice_changes_nothing() {
    for input in [
        "://",
        "a@b",
        "x://:@",
        "s3://u:@h",
        "=",
        "==",
        "token=",
        "--",
        "--api-key",
        "--api-key=",
        "Bearer",
        "Bearer ",
        "basic",
        "Authorization:",
        "Authorization: ",
        ": value",
        "\n\n",
        "clé: valeur",
        "mot_de_passe=é",
        "token=日本語 🙂",
        "--api-key 🙂🙂",
        "Bearer 🙂🙂🙂🙂🙂🙂🙂🙂",
        "ü://ü:ü@ü",
        "\"'`,;()[]{}",
        "password: \r\nnext",
        "a=b&&c=d;;token=e,,",
    ] {
        let once = redact_text(input).into_owned();
        assert_eq!(redact_text(&once), once, "second pass over {input:?}");
    }
    assert_eq!(redact_text("token=日本語 🙂"), "token=<redacted> 🙂");
    assert_eq!(redact_text("clé: valeur"), "clé: valeur");
}
