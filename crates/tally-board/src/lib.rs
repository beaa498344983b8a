//! `tally board`: the runs under some paths, and every point of them, served to a browser by
//! one process with its page embedded (`docs/contract/board.md`).
//!
//! - [`catalog`]: the runs table, read again per run as files change, and the series charts
//!   ask for, held and read on as runs grow (`tally_read::live`);
//! - [`api`]: the JSON API (the page's, and scripts'), series reduced to a chart's width with
//!   every extreme kept (`tally_read::downsample`);
//! - [`http`]: the routes, who may ask (`Host`, the token); [`gzip`]: answers gzipped; [`cache`]: the
//!   expensive answers kept until their runs change; [`assets`]: the embedded page;
//! - [`server`]: hyper's HTTP/1.1 over tokio, with the bounds a hostile client meets;
//!   [`query`]: a request target decoded; [`options`]: what is served, where, and the token
//!   rule.
//!
//! ```no_run
//! use std::sync::atomic::AtomicBool;
//! let options = tally_board::Options {
//!     paths: vec!["runs".into()],
//!     host: "127.0.0.1".parse().unwrap(),
//!     port: 6007,
//!     token: None,
//! };
//! let board = tally_board::Board::bind(options).unwrap();
//! println!("{}", board.url());
//! board.serve(&AtomicBool::new(false)).unwrap();
//! ```

pub mod api;
pub mod assets;
pub mod cache;
pub mod catalog;
pub mod error;
pub mod gzip;
pub mod http;
pub mod options;
pub mod query;
pub mod server;

pub use error::Error;
pub use options::Options;
pub use server::Limits;

use catalog::Catalog;
use http::Shared;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// A board bound to its address, ready to serve.
pub struct Board {
    listener: TcpListener,
    shared: Arc<Shared>,
    limits: Limits,
    addr: SocketAddr,
}

impl Board {
    /// Binds the board's address (the runs are listed at the first request).
    pub fn bind(options: Options) -> Result<Board, Error> {
        let wanted = SocketAddr::new(options.host, options.port);
        let listening = |source| Error::Io {
            what: format!("listening on {wanted}"),
            source,
        };
        let listener = TcpListener::bind(wanted).map_err(listening)?;
        let addr = listener.local_addr().map_err(listening)?;
        let shared = Shared::new(Catalog::new(options.paths), options.token, addr);
        Ok(Board {
            listener,
            shared: Arc::new(shared),
            limits: Limits::default(),
            addr,
        })
    }

    /// The same board with other bounds on its clients (a test's short deadlines).
    pub fn with_limits(mut self, limits: Limits) -> Board {
        self.limits = limits;
        self
    }

    /// The address bound.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The URL to open, with the token when one is needed.
    pub fn url(&self) -> String {
        let host = if self.addr.ip().is_unspecified() {
            "localhost".to_owned()
        } else {
            self.addr.to_string()
        };
        let host = if self.addr.ip().is_unspecified() {
            format!("{host}:{}", self.addr.port())
        } else {
            host
        };
        match &self.shared.token {
            Some(t) => format!("http://{host}/?token={t}"),
            None => format!("http://{host}/"),
        }
    }

    /// Serves requests until `stop` is set; returns within [`Limits::grace`] of it (and a
    /// tick), whatever the clients connected do.
    pub fn serve(&self, stop: &AtomicBool) -> Result<(), Error> {
        let serving = |source| Error::Io {
            what: format!("serving on {}", self.addr),
            source,
        };
        let listener = self.listener.try_clone().map_err(serving)?;
        server::serve(listener, self.shared.clone(), &self.limits, stop).map_err(serving)
    }
}
