//! The connections: hyper's HTTP/1.1 over tokio's sockets, each request's work on tokio's pool
//! of blocking threads, and the bounds a hostile or careless client meets
//! (`docs/contract/board.md` "Who can see it", "The API").
//!
//! - a request head must arrive whole within [`Limits::head`] of the board waiting for it
//!   (hyper's header timeout), so slow heads (slowloris) and idle connections are closed;
//! - an answer whose bytes the client stops taking for [`Limits::write`] ends its connection;
//! - at most [`Limits::per_peer`] connections from one address, [`Limits::connections`] in all;
//!   past them a new connection is answered 503 and closed; at most [`Limits::work_per_peer`]
//!   requests of one address computed at once, so a flood of expensive requests from one
//!   address waits its turn while others are answered;
//! - answers waiting to be sent hold at most [`ANSWER_BYTES`]; past that a new one is 503;
//! - the stop flag ends the board within [`Limits::grace`] plus a tick, whatever its clients do.

use crate::http::{self, Shared};
use hyper::body::{Body, Bytes, Frame, SizeHint};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Semaphore};

/// The longest request head read: a browser's is a few hundred bytes (hyper's smallest
/// buffer is 8 KiB).
pub const MAX_HEAD: usize = 16 * 1024;

/// The bytes of answers computed and not yet taken by their clients, all connections together:
/// past it a new answer is 503, so clients that never read cannot make the board hold
/// unbounded memory.
pub const ANSWER_BYTES: usize = 128 << 20;

/// How often the accept loop looks at the stop flag.
const TICK: Duration = Duration::from_millis(50);

/// Bytes and time a closing connection is read on, so the kernel's reset for unread bytes
/// cannot overtake the answer (a 431, a 413).
const LINGER_BYTES: usize = 1 << 20;
const LINGER: Duration = Duration::from_secs(2);

/// The server's bounds.
#[derive(Debug, Clone)]
pub struct Limits {
    /// A request head must be whole this long after the board starts waiting for it (on a new
    /// connection, or after the previous answer): an idle connection is closed then too.
    pub head: Duration,
    /// An answer the client takes no byte of for this long ends its connection.
    pub write: Duration,
    /// Connections open at once from one address.
    pub per_peer: usize,
    /// Connections open at once in all.
    pub connections: usize,
    /// On stop, how long answers being sent may finish before every connection is dropped.
    pub grace: Duration,
    /// Threads answering requests at once (the rest wait their turn).
    pub workers: usize,
    /// Requests of one address computed at once (the rest wait their turn).
    pub work_per_peer: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            head: Duration::from_secs(10),
            write: Duration::from_secs(10),
            per_peer: 64,
            connections: 1024,
            grace: Duration::from_secs(1),
            workers: 128,
            work_per_peer: 8,
        }
    }
}

/// Serves `listener` until `stop` is set, then returns within [`Limits::grace`] and a tick.
pub fn serve(
    listener: std::net::TcpListener,
    shared: Arc<Shared>,
    limits: &Limits,
    stop: &AtomicBool,
) -> io::Result<()> {
    listener.set_nonblocking(true)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .max_blocking_threads(limits.workers.max(1))
        .thread_name("tally-board")
        .build()?;
    let result = runtime.block_on(accept(listener, shared, limits.clone(), stop));
    // A request still computing (a first read of a huge run) sees its client gone and stops
    // on its own; the board does not wait for it.
    runtime.shutdown_timeout(Duration::from_millis(100));
    result
}

/// Who is connected: per address and in all.
#[derive(Default)]
struct Peers {
    open: Mutex<(HashMap<IpAddr, Peer>, usize)>,
}

/// One address's connections, and the turns its requests take to be computed.
struct Peer {
    connections: usize,
    work: Arc<Semaphore>,
}

/// A connection's place among [`Peers`], given back when dropped.
struct Slot {
    peers: Arc<Peers>,
    ip: IpAddr,
}

impl Peers {
    fn take(self: &Arc<Self>, ip: IpAddr, limits: &Limits) -> Option<(Slot, Arc<Semaphore>)> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let (per, all) = &mut *open;
        let mine = per.entry(ip).or_insert_with(|| Peer {
            connections: 0,
            work: Arc::new(Semaphore::new(limits.work_per_peer.max(1))),
        });
        if mine.connections >= limits.per_peer || *all >= limits.connections {
            if mine.connections == 0 {
                per.remove(&ip);
            }
            return None;
        }
        mine.connections += 1;
        *all += 1;
        Some((
            Slot {
                peers: self.clone(),
                ip,
            },
            mine.work.clone(),
        ))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.peers.open.lock().unwrap_or_else(|e| e.into_inner());
        let (per, all) = &mut *open;
        *all -= 1;
        if let Some(peer) = per.get_mut(&self.ip) {
            peer.connections -= 1;
            if peer.connections == 0 {
                per.remove(&self.ip);
            }
        }
    }
}

async fn accept(
    listener: std::net::TcpListener,
    shared: Arc<Shared>,
    limits: Limits,
    stop: &AtomicBool,
) -> io::Result<()> {
    let listener = TcpListener::from_std(listener)?;
    let peers = Arc::new(Peers::default());
    let (stopping, stopped) = watch::channel(false);
    let alive = Arc::new(());
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.head)
        .max_buf_size(MAX_HEAD)
        .keep_alive(true)
        .half_close(false)
        .title_case_headers(true);
    let builder = Arc::new(builder);
    // Looked at before each accept too: a flood of connections must not keep the sleep from
    // ever ending.
    while !stop.load(Ordering::Relaxed) {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            () = tokio::time::sleep(TICK) => continue,
        };
        let Ok((stream, peer)) = accepted else {
            // A connection gone before it was taken, or out of descriptors for now: the
            // listener itself still works.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let ip = peer.ip().to_canonical();
        let Some((slot, work)) = peers.take(ip, &limits) else {
            refuse(&stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let io = Guarded {
            stream: Some(stream),
            stalled: None,
            write: limits.write,
            slot: Some(slot),
        };
        let (shared, builder, alive) = (shared.clone(), builder.clone(), alive.clone());
        let mut stopped = stopped.clone();
        tokio::spawn(async move {
            let _alive = alive;
            let service = hyper::service::service_fn(move |request| {
                let (shared, work) = (shared.clone(), work.clone());
                async move { Ok::<_, Infallible>(answer(shared, work, request).await) }
            });
            let conn = builder.serve_connection(TokioIo::new(io), service);
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => return,
                _ = stopped.wait_for(|s| *s) => {}
            }
            // Stopping: an idle connection closes now, one sending its answer may finish it
            // within the grace (the runtime then drops it).
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        });
    }
    drop(listener);
    let _ = stopping.send(true);
    let deadline = Instant::now() + limits.grace;
    while Arc::strong_count(&alive) > 1 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Ok(())
}

/// Tells a connection past the bounds so, without waiting for its request, and closes it.
fn refuse(stream: &TcpStream) {
    let body = r#"{"error":"too many connections at once (from this address, or in all)"}"#;
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.try_write(answer.as_bytes());
}

/// Sets its flag when dropped unless disarmed: hyper drops a request's future when its client
/// goes away (a closed connection), which a read in progress then sees.
struct Gone(Arc<AtomicBool>, bool);

impl Drop for Gone {
    fn drop(&mut self) {
        if self.1 {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

async fn answer(
    shared: Arc<Shared>,
    work: Arc<Semaphore>,
    request: hyper::Request<hyper::body::Incoming>,
) -> hyper::Response<Sent> {
    // The address's turn: a client gone meanwhile is dropped here, never computed for.
    let Ok(_turn) = work.acquire_owned().await else {
        return hyper::Response::new(Sent::unbudgeted(Bytes::new()));
    };
    let gone = Arc::new(AtomicBool::new(false));
    let mut armed = Gone(gone.clone(), true);
    let (head, body) = request.into_parts();
    let has_body = !body.is_end_stream();
    let work = shared.clone();
    let computed = tokio::task::spawn_blocking(move || {
        let wanted = || !gone.load(Ordering::Relaxed);
        http::respond(&work, &head, has_body, &wanted)
    })
    .await;
    armed.1 = false;
    let response = match computed {
        Ok(r) => r,
        Err(_) => http::error(500, "the answer's computation failed"),
    };
    let (parts, bytes) = response.into_parts();
    match Sent::new(bytes, &shared.sending) {
        Some(sent) => hyper::Response::from_parts(parts, sent),
        None => {
            let (parts, bytes) =
                http::error(503, "the board is sending too much at once").into_parts();
            hyper::Response::from_parts(parts, Sent::unbudgeted(bytes))
        }
    }
}

/// An answer's body, whole, counted in [`ANSWER_BYTES`] until sent or dropped.
pub struct Sent {
    bytes: Option<Bytes>,
    counted: Option<(Arc<AtomicUsize>, usize)>,
}

impl Sent {
    fn new(bytes: Bytes, sending: &Arc<AtomicUsize>) -> Option<Sent> {
        let n = bytes.len();
        let before = sending.fetch_add(n, Ordering::AcqRel);
        if before > 0 && before + n > ANSWER_BYTES {
            sending.fetch_sub(n, Ordering::AcqRel);
            return None;
        }
        Some(Sent {
            bytes: Some(bytes),
            counted: Some((sending.clone(), n)),
        })
    }

    fn unbudgeted(bytes: Bytes) -> Sent {
        Sent {
            bytes: Some(bytes),
            counted: None,
        }
    }
}

impl Drop for Sent {
    fn drop(&mut self) {
        if let Some((sending, n)) = self.counted.take() {
            sending.fetch_sub(n, Ordering::AcqRel);
        }
    }
}

impl Body for Sent {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.bytes.take().map(|b| Ok(Frame::data(b))))
    }

    fn is_end_stream(&self) -> bool {
        self.bytes.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.bytes.as_ref().map_or(0, |b| b.len() as u64))
    }
}

/// A connection's socket: a write that makes no progress for [`Limits::write`] fails, and
/// closing reads on what the client still sends (bounded) before the socket is let go.
struct Guarded {
    stream: Option<TcpStream>,
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
    write: Duration,
    slot: Option<Slot>,
}

impl Guarded {
    fn stream(&mut self) -> Pin<&mut TcpStream> {
        Pin::new(
            self.stream
                .as_mut()
                .expect("a connection's socket until it is dropped"),
        )
    }

    /// A write that could not progress: fails once it has not for [`Limits::write`].
    fn stall<T>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        let write = self.write;
        let timer = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(write)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client took no byte of its answer",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn progressed<T>(
        &mut self,
        polled: Poll<io::Result<T>>,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<T>> {
        match polled {
            Poll::Ready(r) => {
                self.stalled = None;
                Poll::Ready(r)
            }
            Poll::Pending => self.stall(cx),
        }
    }
}

impl AsyncRead for Guarded {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.stream().poll_read(cx, buf)
    }
}

impl AsyncWrite for Guarded {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = self.stream().poll_write(cx, buf);
        self.progressed(polled, cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = self.stream().poll_write_vectored(cx, bufs);
        self.progressed(polled, cx)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = self.stream().poll_flush(cx);
        self.progressed(polled, cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = self.stream().poll_shutdown(cx);
        self.progressed(polled, cx)
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        let (Some(stream), slot) = (self.stream.take(), self.slot.take()) else {
            return;
        };
        // Closing a socket with bytes unread makes the kernel reset it, and the reset can
        // reach the client before the answer: read on a little first (docs/contract/board.md
        // "The API"). Once the board stops, the runtime drops this at once.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                linger(stream).await;
                drop(slot);
            });
        }
    }
}

async fn linger(mut stream: TcpStream) {
    let _ = stream.shutdown().await;
    let drain = async {
        let mut chunk = [0u8; 4096];
        let mut read = 0;
        while read < LINGER_BYTES {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => read += n,
            }
        }
    };
    let _ = tokio::time::timeout(LINGER, drain).await;
}
