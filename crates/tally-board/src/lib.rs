//! `tally board`: the runs under some paths, and every point of them, served to a browser by
//! one process with its page embedded (`docs/contract/board.md`).
//!
//! - [`catalog`]: the runs table, read again per run as files change, and the series charts
//!   ask for, held and read on as runs grow (`tally_read::live`);
//! - [`api`]: the JSON API (the page's, and scripts'), series reduced to a chart's width with
//!   every extreme kept (`tally_read::downsample`);
//! - [`http`]: requests, the token, responses; [`assets`]: the embedded page;
//! - [`wire`]: HTTP/1.1 on std's sockets, a thread per connection; [`query`]: a request
//!   target decoded; [`options`]: what is served, where, and the token rule.
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
pub mod catalog;
pub mod error;
pub mod http;

pub mod options;
pub mod query;
pub mod wire;

pub use error::Error;
pub use options::Options;

use catalog::Catalog;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::AtomicBool;

/// A board bound to its address, ready to serve.
pub struct Board {
    listener: TcpListener,
    catalog: Catalog,
    token: Option<String>,
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
        Ok(Board {
            listener,
            catalog: Catalog::new(options.paths),
            token: options.token,
            addr,
        })
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
        match &self.token {
            Some(t) => format!("http://{host}/?token={t}"),
            None => format!("http://{host}/"),
        }
    }

    /// Serves requests until `stop` is set.
    pub fn serve(&self, stop: &AtomicBool) -> Result<(), Error> {
        http::serve(&self.listener, &self.catalog, self.token.as_deref(), stop).map_err(|source| {
            Error::Io {
                what: format!("serving on {}", self.addr),
                source,
            }
        })
    }
}
