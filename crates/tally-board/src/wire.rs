//! HTTP/1.1 on std's sockets: a thread per connection, so a connection a browser keeps open,
//! or opens before it has anything to ask, never holds another's request waiting
//! (`docs/contract/board.md` "The API").
//!
//! The board answers GET and HEAD from a browser or a script on the same host or network: a
//! request is its head alone (no body), and the answer is whole, with its length.

use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The longest request head read: a browser's is a few hundred bytes.
pub const MAX_HEAD: usize = 16 * 1024;
/// Connections served at once; past them a connection is told 503 and closed.
pub const MAX_CONNECTIONS: usize = 128;
/// How long a connection may sit without a request before it is closed.
pub const IDLE: Duration = Duration::from_secs(60);
/// How often a waiting thread looks at the stop flag.
const TICK: Duration = Duration::from_millis(100);

/// A request's head.
#[derive(Debug, PartialEq)]
pub struct Request {
    /// `GET`, `HEAD`, ... as sent.
    pub method: String,
    /// The path and query, still percent-encoded.
    pub target: String,
    /// `HTTP/1.1` keeps the connection unless asked to close; `HTTP/1.0` closes it.
    pub keep_alive: bool,
    headers: Vec<(String, String)>,
}

impl Request {
    /// The value of header `name` (any case), the first when repeated.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// An answer: its status, headers and whole body.
pub struct Response {
    /// The status code.
    pub status: u16,
    /// Headers besides `Content-Length` and `Connection`, which the connection sets.
    pub headers: Vec<(&'static str, String)>,
    /// The whole body (not sent for `HEAD`).
    pub body: Vec<u8>,
}

/// Why a head is refused: the status to answer and what to say.
#[derive(Debug, PartialEq)]
pub struct Refused {
    /// 400, 413, 431 or 505 (503 when too many connections are open).
    pub status: u16,
    /// The error message answered.
    pub why: &'static str,
}

/// Reads one request head from its bytes (up to and without the blank line).
pub fn parse_head(head: &[u8]) -> Result<Request, Refused> {
    let bad = |why| Refused { status: 400, why };
    let text = std::str::from_utf8(head).map_err(|_| bad("the request head is not UTF-8"))?;
    let mut lines = text.split("\r\n");
    let line = lines.next().unwrap_or_default();
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad("the request line is not `METHOD TARGET HTTP/1.x`"));
    };
    let keep_alive = match version {
        "HTTP/1.1" => true,
        "HTTP/1.0" => false,
        _ => {
            return Err(Refused {
                status: 505,
                why: "the board speaks HTTP/1.0 and HTTP/1.1",
            })
        }
    };
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(bad("the method is not a word in capitals"));
    }
    if !target.starts_with('/') {
        return Err(bad("the target is not a path from `/`"));
    }
    let mut headers = Vec::new();
    for line in lines {
        let (name, value) = line
            .split_once(':')
            .ok_or(bad("a header line has no `:`"))?;
        if name.is_empty() || name.bytes().any(|b| b.is_ascii_whitespace()) {
            return Err(bad("a header name is empty or has spaces"));
        }
        headers.push((name.to_owned(), value.trim().to_owned()));
    }
    let mut request = Request {
        method: method.to_owned(),
        target: target.to_owned(),
        keep_alive,
        headers,
    };
    // A body would have to be read past; the board takes none.
    let has_body = request.header("Transfer-Encoding").is_some()
        || request
            .header("Content-Length")
            .is_some_and(|n| n.trim() != "0");
    if has_body {
        return Err(Refused {
            status: 413,
            why: "the board takes no request body",
        });
    }
    match request.header("Connection").map(str::to_ascii_lowercase) {
        Some(c) if c.contains("close") => request.keep_alive = false,
        Some(c) if c.contains("keep-alive") => request.keep_alive = true,
        _ => {}
    }
    Ok(request)
}

/// Accepts connections on `listener` until `stop` is set, each served on its own thread by
/// `answer`, which is also given a check that its client still waits; returns once every
/// connection is closed.
pub fn serve<F>(listener: &TcpListener, stop: &AtomicBool, answer: F) -> std::io::Result<()>
where
    F: Fn(&Request, &dyn Fn() -> bool) -> Response + Sync,
{
    listener.set_nonblocking(false)?;
    let wake = loopback(listener.local_addr()?);
    let open = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        // `accept` blocks: once the stop flag is set, a connection of our own wakes it.
        scope.spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(TICK);
            }
            let _ = TcpStream::connect(wake);
        });
        for stream in listener.incoming() {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let Ok(stream) = stream else {
                // A connection gone before it was taken, or out of descriptors for now: the
                // listener itself still works.
                std::thread::sleep(Duration::from_millis(10));
                continue;
            };
            if open.fetch_add(1, Ordering::AcqRel) >= MAX_CONNECTIONS {
                open.fetch_sub(1, Ordering::AcqRel);
                let why = "too many connections at once";
                let _ = refuse(stream, Refused { status: 503, why });
                continue;
            }
            let (open, answer) = (&open, &answer);
            let spawned = std::thread::Builder::new()
                .name("tally-board-conn".to_owned())
                .spawn_scoped(scope, move || {
                    // A client gone mid-answer is not the board's failure.
                    let _ = connection(stream, stop, answer);
                    open.fetch_sub(1, Ordering::AcqRel);
                });
            if spawned.is_err() {
                open.fetch_sub(1, Ordering::AcqRel);
            }
        }
    });
    Ok(())
}

/// Where a connection of our own reaches a listener bound to `addr` (a wildcard address is
/// reached on its loopback).
fn loopback(addr: SocketAddr) -> SocketAddr {
    match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => (Ipv4Addr::LOCALHOST, addr.port()).into(),
        IpAddr::V6(ip) if ip.is_unspecified() => (Ipv6Addr::LOCALHOST, addr.port()).into(),
        _ => addr,
    }
}

/// Answers the requests of one connection until it closes, idles past [`IDLE`], asks to close,
/// sends what cannot be read, or the board stops.
fn connection<F>(mut stream: TcpStream, stop: &AtomicBool, answer: &F) -> std::io::Result<()>
where
    F: Fn(&Request, &dyn Fn() -> bool) -> Response,
{
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(TICK))?;
    stream.set_nodelay(true)?;
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = [0u8; 4096];
    let mut since = Instant::now();
    loop {
        let end = find_blank_line(&buf);
        if end.unwrap_or(buf.len()) > MAX_HEAD {
            let why = "the request head is longer than 16 KiB";
            return refuse(stream, Refused { status: 431, why });
        }
        let Some(end) = end else {
            if stop.load(Ordering::Relaxed) || since.elapsed() >= IDLE {
                return Ok(());
            }
            match stream.read(&mut chunk) {
                Ok(0) => return Ok(()),
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
            continue;
        };
        let request = match parse_head(&buf[..end]) {
            Ok(r) => r,
            Err(refused) => return refuse(stream, refused),
        };
        buf.drain(..end + 4);
        let response = answer(&request, &|| waits(&stream));
        write_response(&mut stream, &response, &request)?;
        if !request.keep_alive {
            return Ok(());
        }
        since = Instant::now();
    }
}

/// Whether the client of `stream` still waits for an answer: a client that closed its side
/// (a page gone, a fetch aborted) has nothing more to read, so the peek finds the end of the
/// stream; one that waits has sent nothing more, or its next request.
fn waits(stream: &TcpStream) -> bool {
    if stream.set_nonblocking(true).is_err() {
        return true;
    }
    let peeked = stream.peek(&mut [0u8; 1]);
    let _ = stream.set_nonblocking(false);
    match peeked {
        Ok(0) => false,
        Ok(_) => true,
        Err(e) => matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted),
    }
}

fn find_blank_line(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n")
}

fn write_response(
    stream: &mut TcpStream,
    response: &Response,
    request: &Request,
) -> std::io::Result<()> {
    let mut out = format!(
        "HTTP/1.1 {} {}\r\nContent-Length: {}\r\n",
        response.status,
        reason(response.status),
        response.body.len()
    );
    for (name, value) in &response.headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    if !request.keep_alive {
        out.push_str("Connection: close\r\n");
    }
    out.push_str("\r\n");
    let mut bytes = out.into_bytes();
    if request.method != "HEAD" {
        bytes.extend_from_slice(&response.body);
    }
    stream.write_all(&bytes)?;
    stream.flush()
}

/// Answers what cannot be read with its status and a JSON error, and closes.
fn refuse(mut stream: TcpStream, refused: Refused) -> std::io::Result<()> {
    let body = serde_json::json!({ "error": refused.why }).to_string();
    let head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        refused.status,
        reason(refused.status),
        body.len()
    );
    stream.set_nonblocking(false)?;
    stream.write_all(head.as_bytes())?;
    stream.write_all(body.as_bytes())?;
    stream.flush()?;
    linger(&mut stream);
    Ok(())
}

/// Bytes and time a refused connection is read on before it is closed.
const LINGER_BYTES: usize = 1 << 20;
const LINGER: Duration = Duration::from_secs(2);

/// Closes a refused connection only once its client stopped sending (or a bound is reached):
/// closing a socket with unread bytes makes the kernel reset it, and a reset can reach the
/// client before the answer does, so it would never learn why (docs/contract/board.md "The API").
fn linger(stream: &mut TcpStream) {
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let started = Instant::now();
    let mut chunk = [0u8; 4096];
    let mut read = 0;
    while read < LINGER_BYTES && started.elapsed() < LINGER {
        match stream.read(&mut chunk) {
            Ok(0) => return,
            Ok(n) => read += n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        413 => "Content Too Large",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_that_closed_its_side_no_longer_waits() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        server.set_read_timeout(Some(TICK)).unwrap();
        assert!(waits(&server), "connected and silent: waiting");
        (&client).write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
        assert!(waits(&server), "its next request: still there");
        drop(client);
        // The close reaches the server's side after the bytes sent before it.
        let mut rest = Vec::new();
        let _ = (&server).read_to_end(&mut rest);
        assert!(!waits(&server), "closed: gone");
        // The check leaves the stream as the connection reads it: blocking, with its timeout.
        assert_eq!(server.read_timeout().unwrap(), Some(TICK));
    }

    #[test]
    fn a_browsers_head_is_read_with_its_headers_in_any_case() {
        let r = parse_head(b"GET /api/runs?since=3 HTTP/1.1\r\nHost: x\r\ncookie:  a=b ").unwrap();
        assert_eq!(
            (r.method.as_str(), r.target.as_str(), r.keep_alive),
            ("GET", "/api/runs?since=3", true)
        );
        assert_eq!(r.header("Cookie"), Some("a=b"));
        assert_eq!(r.header("host"), Some("x"));
        assert_eq!(r.header("Accept"), None);
        let r = parse_head(b"GET / HTTP/1.1\r\nConnection: close").unwrap();
        assert!(!r.keep_alive);
        let r = parse_head(b"GET / HTTP/1.0").unwrap();
        assert!(!r.keep_alive);
        let r = parse_head(b"GET / HTTP/1.0\r\nConnection: keep-alive").unwrap();
        assert!(r.keep_alive);
    }

    #[test]
    fn what_is_not_a_request_head_is_refused_with_its_reason() {
        let refused = |head: &[u8]| parse_head(head).unwrap_err();
        assert_eq!(refused(b"GET /").status, 400);
        assert_eq!(refused(b"GET / HTTP/1.1 extra").status, 400);
        assert_eq!(refused(b"GET / HTTP/2").status, 505);
        assert_eq!(refused(b"get / HTTP/1.1").status, 400);
        assert_eq!(refused(b"GET api HTTP/1.1").status, 400);
        assert_eq!(refused(b"GET / HTTP/1.1\r\nno colon").status, 400);
        assert_eq!(refused(b"GET / HTTP/1.1\r\nBad Name: x").status, 400);
        assert_eq!(refused(b"GET / HTTP/1.1\r\n\xff: x").status, 400);
        assert_eq!(refused(b"POST / HTTP/1.1\r\nContent-Length: 5").status, 413);
        assert_eq!(
            refused(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked").status,
            413
        );
        assert!(parse_head(b"POST / HTTP/1.1\r\nContent-Length: 0").is_ok());
    }
}
