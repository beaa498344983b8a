//! The HTTP side: the routes, the token check, and the headers of each answer
//! (`docs/contract/board.md` "Who can see it"); the connections are `wire`'s.

use crate::api::{self, Body, Wanted};
use crate::assets::asset;
use crate::catalog::Catalog;
use crate::query::Target;
use crate::wire::{self, Request, Response};
use std::net::TcpListener;
use std::sync::atomic::AtomicBool;

/// The cookie a page carries once it was opened with the token.
const COOKIE: &str = "tally_board_token";

/// Answers requests on `listener` until `stop` is set.
pub fn serve(
    listener: &TcpListener,
    catalog: &Catalog,
    token: Option<&str>,
    stop: &AtomicBool,
) -> std::io::Result<()> {
    wire::serve(listener, stop, |request, wanted| {
        respond(request, wanted, catalog, token)
    })
}

fn respond(request: &Request, wanted: Wanted, catalog: &Catalog, token: Option<&str>) -> Response {
    let target = Target::parse(&request.target);
    let (status, content_type, body, set_cookie) = route(request, &target, wanted, catalog, token);
    let mut headers = vec![
        ("Content-Type", content_type.to_owned()),
        ("Cache-Control", "no-store".to_owned()),
        ("X-Content-Type-Options", "nosniff".to_owned()),
    ];
    if set_cookie {
        if let Some(token) = token {
            headers.push((
                "Set-Cookie",
                format!("{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict"),
            ));
        }
    }
    Response {
        status,
        headers,
        body,
    }
}

/// The status, content type and body for a request, and whether to set the token's cookie.
fn route(
    request: &Request,
    target: &Target,
    wanted: Wanted,
    catalog: &Catalog,
    token: Option<&str>,
) -> (u16, &'static str, Vec<u8>, bool) {
    const JSON: &str = "application/json";
    if !matches!(request.method.as_str(), "GET" | "HEAD") {
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
        let answer = api::answer(catalog, target, wanted);
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
    let by_header = request
        .header("Authorization")
        .and_then(|v| v.strip_prefix("token "))
        .is_some_and(|v| same(v.trim(), token));
    let by_cookie = request.header("Cookie").is_some_and(|value| {
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
