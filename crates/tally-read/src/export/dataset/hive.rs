//! A run's name as a Hive partition directory, `run=<name>` with every byte outside
//! `[A-Za-z0-9._-]` percent-encoded (`/` as `%2F`), as Hive writes them and as DuckDB, Polars,
//! Spark and pyarrow decode them (`docs/contract/consumers.md` "A Parquet dataset").

/// The partition directory of run `name`: `run=` and the encoded name.
pub(super) fn partition(name: &str) -> String {
    format!("run={}", encode(name))
}

/// `name` with every byte outside `[A-Za-z0-9._-]` as `%XX` (upper-case hex): the name is one
/// path component whatever it holds, and decoding gives back exactly the same bytes.
pub(super) fn encode(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for &b in name.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference decoder: `%XX` back to its byte.
    fn decode(s: &str) -> String {
        let b = s.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'%' {
                out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
                i += 3;
            } else {
                out.push(b[i]);
                i += 1;
            }
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn every_byte_outside_the_safe_set_is_escaped_and_decodes_back() {
        assert_eq!(encode("seed 1/ppo"), "seed%201%2Fppo");
        assert_eq!(encode("a=b%c"), "a%3Db%25c");
        assert_eq!(encode("run-1_v2.0"), "run-1_v2.0");
        assert_eq!(partition("."), "run=.");
        for name in [
            "seed 1/ppo",
            "a=b%c/d",
            "ünï/日本",
            "x+y?z#w&v",
            "%2F",
            "tab\there",
        ] {
            let enc = encode(name);
            assert!(
                enc.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b".-_%".contains(&b)),
                "{enc}"
            );
            assert_eq!(decode(&enc), name);
        }
    }
}
