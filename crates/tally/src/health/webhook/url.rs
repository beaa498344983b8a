//! A webhook's URL (docs/contract/health.md "Webhook"): checked when the logger is configured,
//! and a secret (its path is the credential): its `Debug` and [`WebhookUrl::redacted`] show the
//! scheme and host only, and no error text carries it.

/// A webhook URL, parsed and checked when the logger is configured.
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookUrl {
    full: String,
    pub(super) tls: bool,
    /// The host as it is connected to (an IPv6 address without its brackets).
    pub(super) host: String,
    pub(super) port: u16,
    /// `Host:` header's value (the authority as written).
    pub(super) authority: String,
    /// Path and query, the request target.
    pub(super) target: String,
}

impl std::fmt::Debug for WebhookUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WebhookUrl({})", self.redacted())
    }
}

impl WebhookUrl {
    /// Checks `url`: `https://` or `http://`, a host, an optional port, no credentials, no
    /// spaces or control characters. The error names what is wrong without repeating the URL
    /// (it is a secret).
    pub fn parse(url: &str) -> Result<Self, String> {
        if let Some(i) = url.find(|c: char| c.is_whitespace() || c.is_control()) {
            return Err(format!(
                "the URL has a space or control character at byte {i} (a URL pasted with its \
                 line end?)"
            ));
        }
        let Some((scheme, rest)) = url.split_once("://") else {
            return Err(
                "not a URL: expected https://HOST/PATH (Slack's and Discord's webhook URLs are \
                 https)"
                    .into(),
            );
        };
        let tls = match scheme.to_ascii_lowercase().as_str() {
            "https" => true,
            "http" => false,
            other => {
                let shown: String = other.chars().take(16).collect();
                return Err(format!(
                    "scheme '{shown}' is not http or https (Slack's and Discord's webhook URLs \
                     are https)"
                ));
            }
        };
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        if authority.contains('@') {
            return Err("credentials in the URL (user@host) are not supported".into());
        }
        let (host, port) = split_port(authority)?;
        let port = port.unwrap_or(if tls { 443 } else { 80 });
        if host.is_empty() {
            return Err("the URL has no host".into());
        }
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | ':');
        if !bare.chars().all(ok) {
            return Err(format!(
                "host '{}' has a character a host name cannot",
                host.chars().take(64).collect::<String>()
            ));
        }
        let tail = tail.split('#').next().unwrap_or_default();
        let target = match tail.starts_with('/') {
            true => tail.to_owned(),
            false => format!("/{tail}"),
        };
        Ok(WebhookUrl {
            full: url.to_owned(),
            tls,
            host: bare.to_owned(),
            port,
            authority: authority.to_owned(),
            target,
        })
    }

    /// The URL as given: the secret. Only the webhook thread and the run's own redaction use it.
    pub fn secret(&self) -> &str {
        &self.full
    }

    /// Scheme and host, the path and query (the secret) replaced:
    /// `https://hooks.slack.com/<redacted>`.
    pub fn redacted(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}/{}", self.authority, crate::redact::REDACTED)
    }
}

/// `host[:port]`, an IPv6 address in brackets.
fn split_port(authority: &str) -> Result<(&str, Option<u16>), String> {
    let colon = match authority.rfind(']') {
        Some(b) => authority[b..].find(':').map(|i| b + i),
        None => authority.rfind(':'),
    };
    let Some(c) = colon else {
        return Ok((authority, None));
    };
    let digits = &authority[c + 1..];
    match digits.parse::<u16>() {
        Ok(p) if p > 0 => Ok((&authority[..c], Some(p))),
        _ => Err(format!(
            "port '{}' is not a number from 1 to 65535",
            digits.chars().take(16).collect::<String>()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_checked_and_never_repeated_in_an_error() {
        let u = WebhookUrl::parse("https://hooks.slack.com/services/T0/B0/SECRET").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.tls),
            ("hooks.slack.com", 443, true)
        );
        assert_eq!(u.target, "/services/T0/B0/SECRET");
        assert_eq!(u.redacted(), "https://hooks.slack.com/<redacted>");
        assert!(!format!("{u:?}").contains("SECRET"));
        let u = WebhookUrl::parse("http://127.0.0.1:8080?x=1").unwrap();
        assert_eq!((u.port, u.target.as_str()), (8080, "/?x=1"));
        let u = WebhookUrl::parse("http://[::1]:9/hook").unwrap();
        assert_eq!((u.host.as_str(), u.authority.as_str()), ("::1", "[::1]:9"));
        for (bad, says) in [
            ("hooks.slack.com/services/SECRET", "not a URL"),
            ("ftp://h/SECRET", "scheme 'ftp'"),
            ("https://h:0/SECRET", "port '0'"),
            ("https://h:99999/SECRET", "port '99999'"),
            ("https://u:SECRET@h/x", "credentials"),
            ("https:///SECRET", "no host"),
            ("https://h/SECRET\n", "control character at byte 16"),
            ("https://h%2F/SECRET", "host 'h%2F'"),
        ] {
            let e = WebhookUrl::parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad:?}: {e}");
            assert!(!e.contains("SECRET"), "{bad:?}: {e}");
        }
    }
}
