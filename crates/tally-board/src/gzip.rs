//! Answers gzipped for a client that takes it (`docs/contract/board.md` "Who can see it"):
//! JSON and text only, and only when long enough to gain.

use flate2::write::GzEncoder;
use flate2::Compression;
use hyper::body::Bytes;
use hyper::header::{self, HeaderMap};
use std::collections::HashMap;
use std::io::Write as _;
use std::sync::{Mutex, OnceLock};

/// Answers shorter than this are sent as they are: gzip would save less than a packet.
const GZIP_FROM: usize = 1024;

/// Whether the client takes gzip (`Accept-Encoding: gzip`, not at `q=0`).
pub fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|coding| {
            let mut parts = coding.split(';');
            let name = parts.next().unwrap_or_default().trim();
            let refused = parts.any(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            name.eq_ignore_ascii_case("gzip") && !refused
        })
}

/// Whether answers of this type gain from gzip (text, JSON, SVG; not images already compressed).
pub fn compressible(content_type: &str) -> bool {
    content_type.starts_with("application/json")
        || content_type.starts_with("text/")
        || content_type.starts_with("image/svg")
}

/// `body` gzipped when its type is text and it is long enough to gain; else as it is.
pub fn compress(content_type: &str, body: Bytes) -> Bytes {
    if !compressible(content_type) || body.len() < GZIP_FROM {
        return body;
    }
    let mut encoder = GzEncoder::new(Vec::with_capacity(body.len() / 4), Compression::fast());
    match encoder.write_all(&body).and_then(|()| encoder.finish()) {
        Ok(zipped) => Bytes::from(zipped),
        Err(_) => body,
    }
}

/// An embedded file gzipped, once per run of the board.
pub fn gzipped_asset(path: &'static str, content_type: &str, body: &'static [u8]) -> Bytes {
    static ZIPPED: OnceLock<Mutex<HashMap<&'static str, Bytes>>> = OnceLock::new();
    let all = ZIPPED.get_or_init(Default::default);
    if let Some(b) = all.lock().unwrap_or_else(|e| e.into_inner()).get(path) {
        return b.clone();
    }
    let zipped = compress(content_type, Bytes::from_static(body));
    all.lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(path, zipped.clone());
    zipped
}
