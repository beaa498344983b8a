//! Secrets kept out of every artefact a run writes (docs/contract/run-artifacts.md "Secrets").
//!
//! Pure: a JSON document or a string in, the same shape out with each secret replaced by
//! [`REDACTED`]. Two rules combine: a value under a secret-looking key name is text to hide;
//! any string anywhere is scanned for secrets carried by their shape (PEM private-key blocks,
//! URL passwords, `Bearer` tokens, `--api-key X` argv pairs, `KEY=VALUE`, hyperparameter table
//! rows, known token formats).

use serde_json::Value;
use std::borrow::Cow;

/// The placeholder that replaces a secret.
pub const REDACTED: &str = "<redacted>";

/// Key-name parts that mark a secret. A part is a word of the name split at non-alphanumerics
/// and camelCase humps, so `wandb_key` and `X-Api-Key` match while `keyboard`, `monkey` and
/// `num_keys` do not (`keys`/`tokens` are counts far more often than credentials).
const SECRET_PARTS: [&str; 28] = [
    "key",
    "token",
    "secret",
    "secrets",
    "password",
    "passwords",
    "passwd",
    "passphrase",
    "pwd",
    "auth",
    "oauth",
    "authorization",
    "cookie",
    "cookies",
    "credential",
    "credentials",
    "private",
    "session",
    "signature",
    "apikey",
    "accesskey",
    "secretkey",
    "privatekey",
    "sessionid",
    "authtoken",
    "accesstoken",
    // A webhook URL's path is its credential (docs/contract/health.md "Webhook").
    "webhook",
    "webhooks",
];

/// Words that mark a secret even glued to a prefix (`PGPASSWORD`, `dbpasswd`, `clientsecret`).
const SECRET_SUFFIXES: [&str; 5] = ["password", "passwd", "secret", "apikey", "credentials"];

/// Key-name parts under which a 40-hex string is a content hash, not a W&B key.
const HASH_PARTS: [&str; 10] = [
    "commit", "commits", "sha", "sha1", "git", "revision", "rev", "hash", "checksum", "digest",
];

/// The lowercase words of a key name: split at non-alphanumerics and camelCase humps
/// (`XApiKey` → `x`, `api`, `key`; `HTTPAuthorization` → `http`, `authorization`).
fn parts(name: &str) -> Vec<String> {
    let chars: Vec<char> = name.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if c.is_uppercase() && !cur.is_empty() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if prev.is_lowercase() || prev.is_ascii_digit() || (prev.is_uppercase() && next_lower) {
                out.push(std::mem::take(&mut cur));
            }
        }
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Whether a key name (a JSON key, a flag without its dashes, the name of `NAME=VALUE`) names
/// a secret.
pub fn is_secret_key(name: &str) -> bool {
    let parts = parts(name);
    parts.iter().enumerate().any(|(i, p)| {
        let special = p == "token" && i > 0 && SPECIAL_TOKENS.contains(&parts[i - 1].as_str());
        !special
            && (SECRET_PARTS.contains(&p.as_str())
                || SECRET_SUFFIXES.iter().any(|s| p.ends_with(s)))
    })
}

/// A tokenizer's special tokens (`eos_token`, `pad_token`, `bos_token_id`): text a model
/// configuration names, never a credential.
const SPECIAL_TOKENS: [&str; 7] = ["bos", "eos", "pad", "unk", "sep", "cls", "mask"];

/// Whether a 40-hex string under this key is a content hash (`commit`, `git_sha`, ...).
fn names_a_hash(name: &str) -> bool {
    parts(name).iter().any(|p| HASH_PARTS.contains(&p.as_str()))
}

/// A copy of `doc` with every secret replaced by [`REDACTED`]; same keys, same list lengths,
/// numbers, booleans and null untouched.
pub fn redact_value(doc: &Value) -> Value {
    walk(doc, "", false)
}

fn walk(v: &Value, key: &str, secret: bool) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, child)| (k.clone(), walk(child, k, secret || is_secret_key(k))))
                .collect(),
        ),
        Value::Array(items) => {
            let hidden = hidden_items(items);
            Value::Array(
                items
                    .iter()
                    .zip(hidden)
                    .map(|(item, h)| walk(item, key, secret || h))
                    .collect(),
            )
        }
        Value::String(s) if secret && !s.is_empty() => Value::String(REDACTED.into()),
        Value::String(s) => match redact_string(s, names_a_hash(key)) {
            Cow::Borrowed(_) => v.clone(),
            Cow::Owned(r) => Value::String(r),
        },
        other => other.clone(),
    }
}

/// Which items of a list are secrets because of the item before them: the value after a
/// secret flag (`["--api-key", "X"]`), and the second item of a `[name, value]` pair whose
/// name is secret-looking (`[["api_key", x]]`).
fn hidden_items(items: &[Value]) -> Vec<bool> {
    let mut hidden = vec![false; items.len()];
    if let [Value::String(name), _] = items {
        if !name.starts_with('-') && is_secret_key(name) {
            hidden[1] = true;
        }
    }
    for i in 1..items.len() {
        if let (Value::String(prev), Value::String(cur)) = (&items[i - 1], &items[i]) {
            if secret_flag(prev) && !is_flag(cur) {
                hidden[i] = true;
            }
        }
    }
    hidden
}

/// `--api-key`, `-token`: a flag (no `=VALUE`) whose name is secret-looking.
fn secret_flag(tok: &str) -> bool {
    let name = tok.trim_start_matches('-');
    tok.starts_with('-') && name.len() < tok.len() && !name.contains('=') && is_secret_key(name)
}

/// `-v`, `--lr`: a command-line flag, so not the value of the flag before it. A value may
/// start with dashes too (`-----BEGIN PRIVATE KEY-----`, `-1`): a letter must follow one or
/// two dashes.
fn is_flag(tok: &str) -> bool {
    let name = tok.strip_prefix("--").or_else(|| tok.strip_prefix('-'));
    name.and_then(|n| n.chars().next())
        .is_some_and(|c| c.is_ascii_alphabetic())
}

/// A copy of `doc` with every occurrence of `secret` inside its strings (and keys) replaced by
/// `with`: a secret the run knows by value (the health webhook's URL), wherever a config
/// holds it, under any key.
pub fn replace_exact(doc: &Value, secret: &str, with: &str) -> Value {
    if secret.is_empty() {
        return doc.clone();
    }
    match doc {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.replace(secret, with), replace_exact(v, secret, with)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| replace_exact(v, secret, with))
                .collect(),
        ),
        Value::String(s) => Value::String(s.replace(secret, with)),
        other => other.clone(),
    }
}

/// Free text (a status line, a name) with every secret found by its shape replaced; borrowed
/// when nothing was found.
pub fn redact_text(s: &str) -> Cow<'_, str> {
    redact_string(s, false)
}

/// The value rules in order; `hash_ok` keeps 40-hex words (the key names a commit or hash).
fn redact_string(s: &str, hash_ok: bool) -> Cow<'_, str> {
    let out = pem_blocks(s);
    let out = json_members(&out);
    let out = table_rows(&out);
    let out = header_lines(&out);
    let out = url_passwords(&out);
    let out = schemes(&out);
    let out = tokens(&out, hash_ok);
    if out == s {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(out)
    }
}

/// The opening of a PEM block (`-----BEGIN RSA PRIVATE KEY-----`).
const PEM_BEGIN: &str = "-----BEGIN ";
const PEM_END: &str = "-----END ";
const PEM_DASHES: &str = "-----";

/// A PEM label that names a private key: `PRIVATE KEY`, `RSA PRIVATE KEY`, `OPENSSH PRIVATE
/// KEY`, `ENCRYPTED PRIVATE KEY`, `PGP PRIVATE KEY BLOCK`, ... (capitals, digits, spaces).
fn private_label(label: &str) -> bool {
    label.len() <= 64
        && label.contains("PRIVATE KEY")
        && label
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == ' ')
}

/// Every PEM private-key block, from `-----BEGIN … PRIVATE KEY-----` through the matching
/// `-----END … PRIVATE KEY-----`, whatever separates its lines (newlines, CRLF, the `\n`
/// escapes of a JSON document held as a string), becomes one [`REDACTED`]; a block cut off
/// before its END line is hidden to the end of the string. Public keys and certificates stay.
fn pem_blocks(s: &str) -> Cow<'_, str> {
    if !s.contains(PEM_BEGIN) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(PEM_BEGIN) {
        let after = &rest[i + PEM_BEGIN.len()..];
        let label_end = after.find(PEM_DASHES);
        match label_end.filter(|&e| private_label(&after[..e])) {
            Some(e) => {
                out.push_str(&rest[..i]);
                out.push_str(REDACTED);
                let body = &after[e + PEM_DASHES.len()..];
                rest = pem_end(body).map_or("", |end| &body[end..]);
            }
            None => {
                out.push_str(&rest[..i + PEM_BEGIN.len()]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// Where the `-----END … PRIVATE KEY-----` line closing a block ends in `body`, if it has one.
fn pem_end(body: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(j) = body[from..].find(PEM_END) {
        let label = from + j + PEM_END.len();
        let close = body[label..].find(PEM_DASHES)?;
        if private_label(&body[label..label + close]) {
            return Some(label + close + PEM_DASHES.len());
        }
        from = label;
    }
    None
}

/// A JSON string starting at `s[0] == '"'`: its text (escapes left as written) and the byte
/// just past its closing quote; `None` when it does not close.
fn json_string(s: &str) -> Option<(&str, usize)> {
    let mut escaped = false;
    for (i, c) in s.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return Some((&s[1..i], i + 1)),
            _ => {}
        }
    }
    None
}

/// `"name": "value"` members of JSON held in text (a service-account file given as a string,
/// compact or not) whose name is secret-looking: the whole string value, spaces and escapes
/// included.
fn json_members(s: &str) -> Cow<'_, str> {
    if !s.contains("\":") && !s.contains("\" :") {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(q) = rest.find('"') {
        out.push_str(&rest[..q]);
        rest = &rest[q..];
        let Some((name, end)) = json_string(rest) else {
            break;
        };
        out.push_str(&rest[..end]);
        rest = &rest[end..];
        let after_colon = rest
            .trim_start()
            .strip_prefix(':')
            .map(|t| t.trim_start())
            .filter(|t| t.starts_with('"'));
        let Some(value_at) = after_colon else {
            continue;
        };
        let Some((value, value_end)) = json_string(value_at) else {
            continue;
        };
        if !is_secret_key(name) || value.is_empty() || value == REDACTED {
            continue;
        }
        let gap = rest.len() - value_at.len();
        out.push_str(&rest[..gap]);
        out.push('"');
        out.push_str(REDACTED);
        out.push('"');
        rest = &value_at[value_end..];
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// A markdown table row `|name|value|` whose first cell names a secret (CleanRL's
/// hyperparameter table, `|wandb_key|…|`): every other non-empty cell, spaces kept.
fn table_rows(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for line in s.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let row = body.trim();
        let cells: Vec<&str> = if row.len() >= 2 && row.starts_with('|') && row.ends_with('|') {
            row[1..row.len() - 1].split('|').collect()
        } else {
            Vec::new()
        };
        if cells.len() < 2 || !is_secret_key(cells[0].trim()) {
            out.push_str(line);
            continue;
        }
        let indent = body.len() - body.trim_start().len();
        out.push_str(&body[..indent]);
        out.push('|');
        out.push_str(cells[0]);
        for cell in &cells[1..] {
            out.push('|');
            let value = cell.trim();
            if value.is_empty() {
                out.push_str(cell);
            } else {
                let lead = cell.len() - cell.trim_start().len();
                out.push_str(&cell[..lead]);
                out.push_str(REDACTED);
                out.push_str(&cell[lead + value.len()..]);
            }
        }
        out.push('|');
        out.push_str(&body[indent + row.len()..]);
        out.push_str(&line[body.len()..]);
    }
    out
}

/// `Authorization: Bearer x`, `Cookie: a=b` at the start of a line: the rest of the line.
fn header_lines(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for line in s.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let indent = body.len() - body.trim_start().len();
        let hidden = body[indent..].split_once(": ").filter(|(name, value)| {
            !name.is_empty()
                && !value.trim().is_empty()
                && !literal(value.trim().trim_end_matches(','))
                && name
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '-' || c == '_')
                && is_secret_key(name)
        });
        match hidden {
            Some((name, _)) => {
                out.push_str(&body[..indent]);
                out.push_str(name);
                out.push_str(": ");
                out.push_str(REDACTED);
                out.push_str(&line[body.len()..]);
            }
            None => out.push_str(line),
        }
    }
    out
}

/// `scheme://user:password@host` → `scheme://user:<redacted>@host`.
fn url_passwords(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        let end = tail
            .find(|c: char| c == '/' || c == '?' || c == '#' || c.is_whitespace())
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        match authority.rfind('@').and_then(|at| {
            let colon = authority[..at].find(':')?;
            (colon + 1 < at).then_some((colon, at))
        }) {
            Some((colon, at)) => {
                out.push_str(&authority[..=colon]);
                out.push_str(REDACTED);
                out.push_str(&authority[at..]);
            }
            None => out.push_str(authority),
        }
        rest = &tail[end..];
        if webhook_url(authority, rest) {
            // The path is the credential: all of it goes, to the URL's end.
            let stop = rest
                .find(|c: char| c.is_whitespace() || "'\"`<>)]}".contains(c))
                .unwrap_or(rest.len());
            // Punctuation closing a sentence is not the URL's.
            let stop = rest[..stop]
                .trim_end_matches([',', '.', ';', ':', '!', '?'])
                .len();
            out.push('/');
            out.push_str(REDACTED);
            rest = &rest[stop..];
        }
    }
    out.push_str(rest);
    out
}

/// A Slack or Discord incoming-webhook URL, whose path is its secret:
/// `hooks.slack.com/services/…`, `discord.com/api/webhooks/…` (also `discordapp.com`, `ptb.`
/// and `canary.`, and a versioned `/api/v10/webhooks/`).
fn webhook_url(authority: &str, path: &str) -> bool {
    let host = authority.rsplit('@').next().unwrap_or(authority);
    let host = host.split(':').next().unwrap_or(host).to_ascii_lowercase();
    let path = path.to_ascii_lowercase();
    match host.as_str() {
        "hooks.slack.com" => path.len() > 1 && path.starts_with('/'),
        "discord.com" | "discordapp.com" | "ptb.discord.com" | "canary.discord.com" => {
            let p = path.strip_prefix("/api/").unwrap_or("");
            let p = match p.strip_prefix('v') {
                Some(v) => v
                    .trim_start_matches(|c: char| c.is_ascii_digit())
                    .trim_start_matches('/'),
                None => p,
            };
            p.starts_with("webhooks/")
        }
        _ => false,
    }
}

/// `Bearer <token>` (8+ token characters) and `Basic <base64>` (so `Basic settings` stays).
fn schemes(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut hide_next: Option<&str> = None;
    for piece in split_keep_ws(s) {
        if piece.trim().is_empty() {
            out.push_str(piece);
            continue;
        }
        let core = piece.trim_end_matches(['\'', '"', '`', ',', ';', ')', ']', '}']);
        match hide_next.take() {
            Some("bearer") if core.len() >= 8 && core.chars().all(bearer_char) => {
                out.push_str(&replace_core(piece));
                continue;
            }
            Some("basic") if looks_base64(core) => {
                out.push_str(&replace_core(piece));
                continue;
            }
            _ => {}
        }
        let word = piece
            .rsplit(|c: char| !c.is_alphanumeric())
            .next()
            .unwrap_or("");
        hide_next = if word.eq_ignore_ascii_case("bearer") {
            Some("bearer")
        } else if word.eq_ignore_ascii_case("basic") {
            Some("basic")
        } else {
            None
        };
        out.push_str(piece);
    }
    out
}

/// `Bearer`/`Basic`: the word after it is the secret, not the scheme itself.
fn is_scheme(word: &str) -> bool {
    word.eq_ignore_ascii_case("bearer") || word.eq_ignore_ascii_case("basic")
}

fn bearer_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-._~+/=".contains(c)
}

fn looks_base64(t: &str) -> bool {
    let body = t.trim_end_matches('=');
    t.len() >= 8
        && t.len().is_multiple_of(4)
        && body
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '+' || c == '/')
        && body
            .chars()
            .skip(1)
            .any(|c| c.is_ascii_digit() || c.is_ascii_uppercase() || c == '+' || c == '/')
}

/// Whitespace runs and non-whitespace runs, in order.
fn split_keep_ws(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut ws = None;
    for (i, c) in s.char_indices() {
        let is_ws = c.is_whitespace();
        if ws.is_some_and(|w| w != is_ws) {
            out.push(&s[start..i]);
            start = i;
        }
        ws = Some(is_ws);
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

/// Word-level rules: the value after a secret flag or a `name:` token, `NAME=VALUE` pairs
/// (also inside `?a=b&c=d` and `a=b; c=d`), and known token shapes.
fn tokens(s: &str, hash_ok: bool) -> String {
    let mut out = String::with_capacity(s.len());
    let mut hide_next = false;
    // The word to hide follows `name:`, not a flag: a JSON literal there is no secret.
    let mut after_name = false;
    for piece in split_keep_ws(s) {
        if piece.trim().is_empty() {
            out.push_str(piece);
            continue;
        }
        let core = piece.trim_matches(|c: char| "'\"`,;()[]{}|".contains(c));
        // A markdown cell's text starts after its bar (`|cmd|--api-key X|`).
        let core = core.rsplit('|').next().unwrap_or(core);
        let kept = std::mem::take(&mut after_name) && literal(core);
        if std::mem::take(&mut hide_next) && !is_flag(core) && !core.is_empty() && !kept {
            // `Authorization: Bearer x`: the scheme stays, the word after it is the secret.
            hide_next = is_scheme(core);
            out.push_str(&if hide_next {
                piece.to_owned()
            } else {
                replace_core(piece)
            });
            continue;
        }
        let named = core.strip_suffix(':').map(|n| n.trim_matches(['\'', '"']));
        after_name = named.is_some_and(|n| !n.contains(':') && is_secret_key(n));
        hide_next = secret_flag(core) || after_name;
        out.push_str(&shapes(&pairs(piece), hash_ok));
    }
    out
}

/// A JSON number, `true`, `false` or `null` (or Python's `True`, `False`, `None`): a value
/// that is never a secret (docs/contract/run-artifacts.md "Secrets": numbers, booleans and null
/// stay), so JSON held in text stays JSON.
fn literal(word: &str) -> bool {
    matches!(word, "null" | "true" | "false" | "None" | "True" | "False")
        || serde_json::from_str::<serde_json::Number>(word).is_ok()
}

/// `piece` with its inner text replaced, keeping the quotes and punctuation around it.
fn replace_core(piece: &str) -> String {
    let lead = piece.len()
        - piece
            .trim_start_matches(['\'', '"', '`', '(', '[', '{', '|'])
            .len();
    let trail = piece.len()
        - piece
            .trim_end_matches(['\'', '"', '`', ',', ';', ')', ']', '}', '|'])
            .len();
    if lead + trail >= piece.len() {
        return REDACTED.to_owned();
    }
    format!(
        "{}{REDACTED}{}",
        &piece[..lead],
        &piece[piece.len() - trail..]
    )
}

/// Each `name=value` segment of a word (segments split at `? & ; ,`) with a secret name gets
/// its value replaced.
fn pairs(word: &str) -> Cow<'_, str> {
    if !word.contains('=') {
        return Cow::Borrowed(word);
    }
    let mut out = String::with_capacity(word.len());
    for seg in word.split_inclusive(['?', '&', ';', ',']) {
        let body = seg.trim_end_matches(['?', '&', ';', ',']);
        let hidden = body.split_once('=').filter(|(name, value)| {
            let name = name
                .trim_start_matches('-')
                .trim_matches(['\'', '"', '(', '[', '{']);
            !value.is_empty()
                && !value.starts_with(REDACTED)
                && !is_scheme(value)
                && is_secret_key(name)
        });
        match hidden {
            Some((name, value)) => {
                out.push_str(name);
                out.push('=');
                out.push_str(&replace_core(value));
                out.push_str(&seg[body.len()..]);
            }
            None => out.push_str(seg),
        }
    }
    Cow::Owned(out)
}

/// Known token shapes, each a maximal run of `[A-Za-z0-9_-]` inside the word.
fn shapes(word: &str, hash_ok: bool) -> String {
    let mut out = String::with_capacity(word.len());
    let mut start = None;
    let is_tok = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    for (i, c) in word.char_indices().chain([(word.len(), ' ')]) {
        match (start, is_tok(c)) {
            (None, true) => start = Some(i),
            (Some(s), false) => {
                let run = &word[s..i];
                out.push_str(if known_token(run, hash_ok) {
                    REDACTED
                } else {
                    run
                });
                start = None;
                if i < word.len() {
                    out.push(c);
                }
            }
            (None, false) if i < word.len() => out.push(c),
            _ => {}
        }
    }
    out
}

/// W&B API keys (40 lowercase hex), OpenAI/Anthropic `sk-…`, GitHub `ghp_…`/`gho_…`/
/// `ghu_…`/`ghs_…`/`ghr_…`/`github_pat_…`, AWS access key ids `AKIA…`/`ASIA…`, Hugging Face
/// `hf_…`, Slack `xoxb-`/`xoxp-`/`xoxa-`/`xoxr-`/`xoxs-…`.
fn known_token(run: &str, hash_ok: bool) -> bool {
    let alnum = |t: &str| t.chars().all(|c| c.is_ascii_alphanumeric());
    let wandb = run.len() == 40 && run.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f'));
    let github = ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"].iter().any(|p| {
        run.strip_prefix(p)
            .is_some_and(|t| t.len() >= 30 && alnum(t))
    }) || run
        .strip_prefix("github_pat_")
        .is_some_and(|t| t.len() >= 22);
    let aws = ["AKIA", "ASIA"].iter().any(|p| {
        run.strip_prefix(p).is_some_and(|t| {
            t.len() == 16
                && t.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        })
    });
    let sk = run.strip_prefix("sk-").is_some_and(|t| t.len() >= 20);
    let hf = run
        .strip_prefix("hf_")
        .is_some_and(|t| t.len() >= 30 && alnum(t));
    let slack = ["xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-"]
        .iter()
        .any(|p| run.strip_prefix(p).is_some_and(|t| t.len() >= 10));
    (wandb && !hash_ok) || github || aws || sk || hf || slack
}

#[cfg(test)]
mod tests;
