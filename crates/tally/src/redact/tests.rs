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
    // JSON held in text: the whole string value of a secret-looking member.
    (
        "{\"api_key\": \"a b\\\"c\", \"lr\": 1}",
        "{\"api_key\": \"<redacted>\", \"lr\": 1}",
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
        "-----BEGIN PRIVATE KEY-----",
        "-----BEGIN PRIVATE KEY",
        "-----BEGIN -----END PRIVATE KEY-----",
        "x -----BEGIN PRIVATE KEY----- y -----END PUBLIC KEY----- z",
        "\"token\":",
        "\"token\": \"x",
        "\"token\" : \"\"",
        "\"\\\"",
        "|key|",
        "| |",
        "||",
        "|token||x|",
        "xoxb-",
    ] {
        let once = redact_text(input).into_owned();
        assert_eq!(redact_text(&once), once, "second pass over {input:?}");
    }
    assert_eq!(redact_text("token=日本語 🙂"), "token=<redacted> 🙂");
    assert_eq!(redact_text("clé: valeur"), "clé: valeur");
}

const RSA_PEM: &str = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo\n4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onL\n-----END RSA PRIVATE KEY-----";

#[test]
fn a_pem_private_key_is_hidden_whole_wherever_it_is() {
    // Under an ordinary key name, alone or inside text, every variant of the label.
    for label in ["RSA ", "", "OPENSSH ", "EC ", "DSA ", "ENCRYPTED "] {
        let pem = format!(
            "-----BEGIN {label}PRIVATE KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX\n-----END {label}PRIVATE KEY-----"
        );
        let doc = json!({"deploy": {"ssh": pem.clone()}});
        assert_eq!(
            redact_value(&doc),
            json!({"deploy": {"ssh": REDACTED}}),
            "{label:?}"
        );
        let text = format!("key follows:\n{pem}\ndone");
        assert_eq!(redact_text(&text), "key follows:\n<redacted>\ndone");
    }
    // Escaped newlines (a PEM inside a JSON document held as a string), CRLF, no END line.
    let escaped = RSA_PEM.replace('\n', "\\n");
    assert_eq!(redact_text(&format!("x {escaped} y")), "x <redacted> y");
    assert_eq!(redact_text(&RSA_PEM.replace('\n', "\r\n")), REDACTED);
    assert_eq!(
        redact_text("cut: -----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBn"),
        "cut: <redacted>"
    );
    // A public key or certificate is not a secret.
    let public = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----";
    assert!(matches!(redact_text(public), Cow::Borrowed(_)));
}

#[test]
fn a_service_account_json_string_loses_its_whole_private_key() {
    let body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7";
    let sa = json!({
        "type": "service_account",
        "project_id": "proj",
        "private_key_id": "abc123def456",
        "private_key": format!("-----BEGIN PRIVATE KEY-----\n{body}\nx9Zq\n-----END PRIVATE KEY-----\n"),
        "client_email": "svc@proj.iam.gserviceaccount.com",
    })
    .to_string();
    let got = redact_value(&json!({"gcp": sa}));
    let text = got["gcp"].as_str().unwrap();
    assert!(!text.contains(body) && !text.contains("x9Zq"), "{text}");
    assert!(!text.contains("abc123def456"), "{text}");
    assert!(text.contains("svc@proj.iam.gserviceaccount.com"), "{text}");
    // The word after a secret's name is hidden even when it starts with dashes (not a flag).
    assert_eq!(
        redact_text("private_key: -----BEGIN"),
        "private_key: <redacted>"
    );
    assert_eq!(redact_text("--api-key -9Zq"), "--api-key <redacted>");
    assert_eq!(redact_text("--api-key --verbose"), "--api-key --verbose");
    assert_eq!(
        redact_value(&json!(["--token", "-----BEGIN x"])),
        json!(["--token", REDACTED])
    );
}

#[test]
fn slack_tokens_are_recognised() {
    for p in ["xoxb", "xoxp", "xoxa", "xoxr", "xoxs"] {
        let tok = format!("{p}-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx");
        assert_eq!(redact_text(&format!("slack {tok}.")), "slack <redacted>.");
        assert_eq!(
            redact_value(&json!({"hook": tok})),
            json!({"hook": REDACTED})
        );
    }
    assert!(matches!(redact_text("xoxb-"), Cow::Borrowed(_)));
    assert!(matches!(redact_text("toxoxb-thing"), Cow::Borrowed(_)));
}

#[test]
fn a_hyperparameter_table_row_naming_a_secret_loses_its_value() {
    let table = "|param|value|\n|-|-|\n|exp_name|ppo|\n|wandb_key|wk-123|\n|lr|0.00025|";
    assert_eq!(
        redact_text(table),
        "|param|value|\n|-|-|\n|exp_name|ppo|\n|wandb_key|<redacted>|\n|lr|0.00025|"
    );
    assert_eq!(redact_text("| api_key | x1 |"), "| api_key | <redacted> |");
    // A flag inside a cell: the word after it, up to the bar.
    assert_eq!(
        redact_text("|cmd|train.py --api-key X1|\n|seed|1|"),
        "|cmd|train.py --api-key <redacted>|\n|seed|1|"
    );
    assert_eq!(
        redact_text("|cmd|--api-key X1|"),
        "|cmd|--api-key <redacted>|"
    );
}

#[test]
fn a_slack_or_discord_webhook_url_loses_its_path() {
    // docs/contract/health.md "Webhook": the path is the credential.
    for (url, kept) in [
        (
            "https://hooks.slack.com/services/T0AB/B0CD/xyzSECRET",
            "https://hooks.slack.com/<redacted>",
        ),
        (
            "https://discord.com/api/webhooks/123/tokSECRET?wait=true",
            "https://discord.com/<redacted>",
        ),
        (
            "https://discordapp.com/api/v10/webhooks/1/tokSECRET",
            "https://discordapp.com/<redacted>",
        ),
    ] {
        assert_eq!(
            redact_text(&format!("alerts to {url}, daily")),
            format!("alerts to {kept}, daily")
        );
        assert_eq!(
            redact_value(&json!({"notify": [url]})),
            json!({"notify": [kept]})
        );
    }
    // Not a webhook: the path stays.
    for s in [
        "https://discord.com/channels/1/2",
        "https://hooks.slack.com/",
        "https://example.com/api/webhooks/1/x",
    ] {
        assert!(matches!(redact_text(s), Cow::Borrowed(_)), "{s}");
    }
    // By key name, any URL.
    assert_eq!(
        redact_value(&json!({"health_webhook": "http://10.0.0.1/h", "slackWebhookUrl": "x"})),
        json!({"health_webhook": REDACTED, "slackWebhookUrl": REDACTED})
    );
}

#[test]
fn a_secret_known_by_value_is_replaced_under_any_key() {
    let url = "http://127.0.0.1:9/hook/T0K3N";
    let doc = json!({"notify": {"to": url, "why": format!("posting to {url} now")}, "n": 3});
    assert_eq!(
        replace_exact(&doc, url, "http://127.0.0.1:9/<redacted>"),
        json!({"notify": {"to": "http://127.0.0.1:9/<redacted>",
                          "why": "posting to http://127.0.0.1:9/<redacted> now"}, "n": 3})
    );
    assert_eq!(replace_exact(&doc, "", "x"), doc);
}

/// docs/contract/run-artifacts.md "Secrets": in text as in a document, a number, `true`,
/// `false` or `null` after a secret-looking name stays, so JSON held in text (transformers'
/// `model_config` and `args`) is still JSON; a string there is still hidden.
#[test]
fn json_literals_after_a_secret_looking_name_stay_in_text() {
    let config = json!({
        "bos_token_id": 0, "eos_token_id": [1, 2], "pad_token_id": null, "decoder_start_token_id": 2.5e3,
        "hub_token": null, "hub_private_repo": false, "push_to_hub_token": "<HUB_TOKEN>",
        "api_key": "abc123", "hf_token": "hf_abcdefghijklmnopqrstuvwxyz0123", "token_count": -7,
    });
    for text in [
        config.to_string(),
        serde_json::to_string_pretty(&config).unwrap(),
    ] {
        let out = redact_text(&text);
        let back: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        assert_eq!(back, redact_value(&config), "{out}");
        assert_eq!(back["bos_token_id"], 0);
        assert_eq!(back["api_key"], REDACTED);
    }
    // The `name: value` lines of YAML or a header block, and a Python repr's None.
    for (input, expected) in [
        (
            "pad_token_id: 0\napi_key: abc123\n",
            "pad_token_id: 0\napi_key: <redacted>\n",
        ),
        ("hub_token: null", "hub_token: null"),
        (
            "{'eos_token_id': 2, 'hub_token': None}",
            "{'eos_token_id': 2, 'hub_token': None}",
        ),
        ("\"session\": true,", "\"session\": true,"),
        ("token: 0xdeadbeef", "token: <redacted>"),
        ("--api-key 12345", "--api-key <redacted>"),
        // A tokenizer's special tokens are text, not credentials.
        (
            "eos_token: [EOS]\npad_token: <pad>",
            "eos_token: [EOS]\npad_token: <pad>",
        ),
        (
            "\"mask_token\": \"<mask>\", \"hf_token\": \"abc\"",
            "\"mask_token\": \"<mask>\", \"hf_token\": \"<redacted>\"",
        ),
    ] {
        assert_eq!(redact_text(input), expected, "input {input:?}");
    }
}
