//! The HTTP side: the routes, who may ask (the `Host` a loopback board answers, the token),
//! and the headers and encoding of each answer (`docs/contract/board.md` "Who can see it",
//! "The API"); the connections are [`crate::server`]'s.

use crate::api::{self, Body};
use crate::assets::asset;
use crate::cache::Cache;
use crate::catalog::Catalog;
use crate::gzip::{accepts_gzip, compress, compressible, gzipped_asset};
use crate::query::Target;
use hyper::body::Bytes;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::http::request::Parts;
use hyper::{Method, Response, StatusCode};
use std::net::SocketAddr;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// The cookie a page carries once it was opened with the token.
const COOKIE: &str = "tally_board_token";

/// What every request's answer is made from.
pub struct Shared {
    /// The runs.
    pub catalog: Catalog,
    /// The token a request must carry, if any.
    pub token: Option<String>,
    /// On a loopback address, the `Host` values answered (`None`: any, the token decides).
    pub hosts: Option<Vec<String>>,
    /// Expensive answers, by request and their runs' generations.
    pub cache: Cache,
    /// Bytes of answers not yet taken by their clients ([`crate::server::ANSWER_BYTES`]).
    pub sending: Arc<AtomicUsize>,
}

impl Shared {
    /// The board's state for `catalog` bound at `addr`.
    pub fn new(catalog: Catalog, token: Option<String>, addr: SocketAddr) -> Shared {
        Shared {
            catalog,
            token,
            hosts: addr.ip().is_loopback().then(|| allowed_hosts(addr)),
            cache: Cache::default(),
            sending: Arc::new(AtomicUsize::new(0)),
        }
    }
}

/// The names a browser on this machine reaches a loopback board by, with its port (and
/// without it on port 80, where browsers leave it out), lower case.
fn allowed_hosts(addr: SocketAddr) -> Vec<String> {
    let port = addr.port();
    let mut names = vec![
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
        "[::1]".to_owned(),
    ];
    let own = match addr {
        SocketAddr::V4(a) => a.ip().to_string(),
        SocketAddr::V6(a) => format!("[{}]", a.ip()),
    };
    if !names.contains(&own) {
        names.push(own);
    }
    let mut hosts: Vec<String> = names.iter().map(|n| format!("{n}:{port}")).collect();
    if port == 80 {
        hosts.extend(names);
    }
    hosts
}

/// A JSON error answer.
pub fn error(status: u16, message: &str) -> Response<Bytes> {
    let body = serde_json::json!({ "error": message }).to_string();
    let mut response = Response::new(Bytes::from(body));
    *response.status_mut() =
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(JSON));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

const JSON: &str = "application/json";

/// The answer to one request (its head; `has_body`: it came with a body). `wanted` says
/// whether its client still waits.
pub fn respond(
    shared: &Shared,
    head: &Parts,
    has_body: bool,
    wanted: &dyn Fn() -> bool,
) -> Response<Bytes> {
    let target = Target::parse(head.uri.path_and_query().map_or("/", |p| p.as_str()));
    let by_param = shared
        .token
        .as_deref()
        .is_some_and(|t| target.get("token").is_some_and(|g| same(g, t)));
    let with_token = shared
        .token
        .as_deref()
        .is_some_and(|t| by_param || carries(&head.headers, t));
    if !with_token && !host_allowed(shared, head) {
        // A page of another site that made its name resolve to 127.0.0.1 (DNS rebinding)
        // sends its own name: the board is not that site.
        return error(
            403,
            "this board answers only the hosts localhost, 127.0.0.1 and [::1] with its port \
             (a page of another site reaches it only through DNS rebinding)",
        );
    }
    if has_body {
        let mut refused = error(413, "the board takes no request body");
        refused
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        return refused;
    }
    if !matches!(head.method, Method::GET | Method::HEAD) {
        return error(405, "the board answers GET only: it changes nothing");
    }
    if shared.token.is_some() && !with_token {
        return error(
            403,
            "this board needs its token: open the URL it printed, with ?token=",
        );
    }
    let gzip = accepts_gzip(&head.headers);
    let (status, content_type, body, cached) = if target.path.starts_with("/api/") {
        let computed = || {
            let answer = api::answer(&shared.catalog, &target, wanted);
            let (content_type, body) = match answer.body {
                Body::Json(v) => (JSON, Bytes::from(v.to_string())),
                Body::File(content_type, bytes) => (content_type, Bytes::from(bytes)),
            };
            (answer.status, content_type, body)
        };
        match shared.cache.answer(&shared.catalog, &target, computed) {
            Ok((answer, hit)) => {
                let body = if gzip {
                    answer.gzipped()
                } else {
                    answer.body.clone()
                };
                (answer.status, answer.content_type, body, Some(hit))
            }
            Err((status, content_type, body)) => {
                let body = if gzip {
                    compress(content_type, body)
                } else {
                    body
                };
                (status, content_type, body, None)
            }
        }
    } else {
        match asset(&target.path) {
            Some(a) => {
                let body = if gzip {
                    gzipped_asset(a.path, a.content_type, a.body)
                } else {
                    Bytes::from_static(a.body)
                };
                (200, a.content_type, body, None)
            }
            None => return error(404, &format!("{}: not found", target.path)),
        }
    };
    let mut response = Response::new(body);
    *response.status_mut() =
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    if gzip && compressible(content_type) {
        headers.insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
        // `compress` leaves a short body as it is; a gzip stream starts with these two bytes,
        // which no JSON or text does.
        if response.body().starts_with(&[0x1f, 0x8b]) {
            let headers = response.headers_mut();
            headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        }
    }
    if let Some(hit) = cached {
        let value = HeaderValue::from_static(if hit { "hit" } else { "miss" });
        response.headers_mut().insert("x-tally-cache", value);
    }
    if by_param {
        if let Some(token) = &shared.token {
            let cookie = format!("{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict");
            if let Ok(v) = HeaderValue::from_str(&cookie) {
                response.headers_mut().insert(header::SET_COOKIE, v);
            }
        }
    }
    response
}

/// Whether the request names this board: always off loopback (the token guards it), and on
/// loopback when its `Host` (or a target's authority) is one of [`Shared::hosts`]. A request
/// without either cannot come from a browser and is answered.
fn host_allowed(shared: &Shared, head: &Parts) -> bool {
    let Some(hosts) = &shared.hosts else {
        return true;
    };
    let by_uri = head.uri.authority().map(|a| a.as_str().to_owned());
    let by_header = head
        .headers
        .get_all(header::HOST)
        .iter()
        .map(|v| v.to_str().map(str::to_owned).unwrap_or_default());
    by_uri
        .into_iter()
        .chain(by_header)
        .all(|h| hosts.iter().any(|a| a.eq_ignore_ascii_case(h.trim())))
}

/// Whether the request carries `token` in its cookie or an `Authorization: token` header.
fn carries(headers: &HeaderMap, token: &str) -> bool {
    let by_header = headers
        .get_all(header::AUTHORIZATION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| v.strip_prefix("token "))
        .any(|v| same(v.trim(), token));
    let by_cookie = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|value| {
            value.split(';').any(|c| {
                c.trim()
                    .strip_prefix(COOKIE)
                    .and_then(|r| r.strip_prefix('='))
                    .is_some_and(|v| same(v, token))
            })
        });
    by_header || by_cookie
}

/// Compares in time independent of where the strings differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}
