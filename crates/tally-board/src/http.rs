//! The HTTP side: worker threads taking requests, the token check, and the responses
//! (`docs/contract/board.md` "Who can see it").

use crate::api::{self, Body};
use crate::assets::asset;
use crate::catalog::Catalog;
use crate::query::Target;
use std::io::Cursor;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tiny_http::{Header, Method, Request, Response, Server};

/// Threads answering requests: a chart's several series are fetched at once.
pub const WORKERS: usize = 4;

/// The cookie a page carries once it was opened with the token.
const COOKIE: &str = "tally_board_token";

/// Answers requests on `server` until `stop` is set.
pub fn serve(server: Arc<Server>, catalog: Arc<Catalog>, token: Option<String>, stop: &AtomicBool) {
    std::thread::scope(|scope| {
        for i in 0..WORKERS {
            let (server, catalog, token) = (server.clone(), catalog.clone(), token.clone());
            std::thread::Builder::new()
                .name(format!("tally-board-{i}"))
                .spawn_scoped(scope, move || {
                    while !stop.load(Ordering::Relaxed) {
                        match server.recv_timeout(Duration::from_millis(200)) {
                            Ok(Some(request)) => respond(request, &catalog, token.as_deref()),
                            Ok(None) => {}
                            Err(_) => return,
                        }
                    }
                })
                .expect("spawning a board worker thread");
        }
    });
}

fn respond(request: Request, catalog: &Catalog, token: Option<&str>) {
    let target = Target::parse(request.url());
    let (status, content_type, body, set_cookie) = route(&request, &target, catalog, token);
    let len = body.len();
    let mut response = Response::new(
        status.into(),
        Vec::new(),
        Cursor::new(body),
        Some(len),
        None,
    )
    .with_header(header("Content-Type", content_type))
    .with_header(header("Cache-Control", "no-store"))
    .with_header(header("X-Content-Type-Options", "nosniff"));
    if set_cookie {
        if let Some(token) = token {
            let cookie = format!("{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict");
            response = response.with_header(header("Set-Cookie", &cookie));
        }
    }
    // A client gone before its answer is not the board's failure.
    let _ = request.respond(response);
}

/// The status, content type and body for a request, and whether to set the token's cookie.
fn route(
    request: &Request,
    target: &Target,
    catalog: &Catalog,
    token: Option<&str>,
) -> (u16, &'static str, Vec<u8>, bool) {
    const JSON: &str = "application/json";
    if !matches!(request.method(), Method::Get | Method::Head) {
        let body = br#"{"error":"the board answers GET only: it changes nothing"}"#;
        return (405, JSON, body.to_vec(), false);
    }
    let by_param = token.is_some_and(|t| target.get("token").is_some_and(|g| same(g, t)));
    if let Some(t) = token {
        if !by_param && !carries(request, t) {
            let body =
                br#"{"error":"this board needs its token: open the URL it printed, with ?token="}"#;
            return (403, JSON, body.to_vec(), false);
        }
    }
    if target.path.starts_with("/api/") {
        let answer = api::answer(catalog, target);
        let (content_type, body) = match answer.body {
            Body::Json(v) => (JSON, v.to_string().into_bytes()),
            Body::File(content_type, bytes) => (content_type, bytes),
        };
        return (answer.status, content_type, body, by_param);
    }
    match asset(&target.path) {
        Some(a) => (200, a.content_type, a.body.to_vec(), by_param),
        None => {
            let body = serde_json::json!({ "error": format!("{}: not found", target.path) });
            (404, JSON, body.to_string().into_bytes(), false)
        }
    }
}

/// Whether the request carries `token` in its cookie or an `Authorization: token` header.
fn carries(request: &Request, token: &str) -> bool {
    request.headers().iter().any(|h| {
        let value = h.value.as_str();
        if h.field.equiv("Authorization") {
            value
                .strip_prefix("token ")
                .is_some_and(|v| same(v.trim(), token))
        } else if h.field.equiv("Cookie") {
            value.split(';').any(|c| {
                c.trim()
                    .strip_prefix(COOKIE)
                    .and_then(|r| r.strip_prefix('='))
                    .is_some_and(|v| same(v, token))
            })
        } else {
            false
        }
    })
}

/// Compares in time independent of where the strings differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

fn header(name: &str, value: &str) -> Header {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("a valid ASCII header")
}
