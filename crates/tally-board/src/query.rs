//! A request's path and query string, percent-decoded.

use std::collections::HashMap;

/// A request target split into its path and its query parameters (the last of a repeated
/// name wins).
pub struct Target {
    /// The path, decoded.
    pub path: String,
    /// Each parameter, decoded.
    pub params: HashMap<String, String>,
}

impl Target {
    /// Splits and decodes `url` (`/path?a=1&b=x%20y`); `+` is a space, as forms send it.
    pub fn parse(url: &str) -> Target {
        let (path, query) = url.split_once('?').unwrap_or((url, ""));
        let params = query
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                (decode(k, true), decode(v, true))
            })
            .collect();
        Target {
            path: decode(path, false),
            params,
        }
    }

    /// A parameter, if given.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.params.get(name).map(String::as_str)
    }
}

/// Percent-decoding (and `+` as a space in a query, `plus`); a malformed escape is kept as written, bytes that are not UTF-8 replaced.
fn decode(s: &str, plus: bool) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' if plus => out.push(b' '),
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
                    .and_then(|h| std::str::from_utf8(h).ok());
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => {
                        out.push(b);
                        i += 3;
                        continue;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_parameters_are_decoded() {
        let t =
            Target::parse("/api/scalars?run=ppo%2Fseed_1&tag=charts/episodic_return&x=step+1&e");
        assert_eq!(t.path, "/api/scalars");
        assert_eq!(t.get("run"), Some("ppo/seed_1"));
        assert_eq!(t.get("tag"), Some("charts/episodic_return"));
        assert_eq!(t.get("x"), Some("step 1"));
        assert_eq!(t.get("e"), Some(""));
        assert_eq!(t.get("missing"), None);
    }

    #[test]
    fn malformed_escapes_are_kept_as_written() {
        assert_eq!(decode("100%", true), "100%");
        assert_eq!(decode("%zz%4%+1", true), "%zz%4% 1");
        assert_eq!(decode("a+b", false), "a+b");
        assert_eq!(decode("%C3%A9", true), "é");
        assert_eq!(decode("%FF", true), "\u{FFFD}");
    }
}
