//! `tally board [PATH...] [--host H] [--port P] [--open]`: serve the runs under the paths to a
//! browser ([`tally_board`]) until Ctrl-C, printing the URL to open. The server is the CLI's
//! `board` feature (on by default; off in the README's demo build, which then compiles no HTTP
//! server): without it the command is still parsed and says how to get it.

use crate::error::{CliError, Exit};
#[cfg(feature = "board")]
use std::io::Write as _;
use std::net::IpAddr;
use std::path::PathBuf;
#[cfg(feature = "board")]
use tally_board::{Board, Options};

/// `tally board`'s flags.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Directories searched recursively for `events.out.tfevents.*` (or event files).
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// The address to listen on; any other than loopback requires the printed token.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: std::net::IpAddr,
    /// The port (0: a free one).
    #[arg(long, default_value_t = 6007)]
    pub port: u16,
    /// Open the page in the desktop's browser.
    #[arg(long)]
    pub open: bool,
}

/// What `tally board` says in a build without its server.
pub const NOT_BUILT: &str = "this tally was built without its board (the `board` feature of \
tally-cli, left out of the lean demo build); `pip install tally-rl`, `cargo install --path \
crates/tally-cli` or `cargo build --release -p tally-cli` (default features) bring it";

impl Args {
    /// Check the flags and run the command.
    pub fn execute(self) -> Result<Exit, CliError> {
        let Args {
            paths,
            host,
            port,
            open,
        } = self;
        main(paths, host, port, open)
    }
}

/// Without the `board` feature: a usage error saying how to get it.
#[cfg(not(feature = "board"))]
pub fn main(_: Vec<PathBuf>, _: IpAddr, _: u16, _: bool) -> Result<Exit, CliError> {
    Err(CliError::Usage(NOT_BUILT.to_string()))
}

#[cfg(feature = "board")]
/// Run `tally board`: bind, print the URL (and open it when asked), serve until interrupted.
pub fn main(paths: Vec<PathBuf>, host: IpAddr, port: u16, open: bool) -> Result<Exit, CliError> {
    let token = Options::token_for(host).map_err(|e| CliError::Run(e.to_string()))?;
    let needs_token = token.is_some();
    let options = Options {
        paths,
        host,
        port,
        token,
    };
    let board = Board::bind(options).map_err(|e| CliError::Run(e.to_string()))?;
    let url = board.url();
    let mut out = std::io::stdout().lock();
    writeln!(out, "tally board: {url}")?;
    if needs_token {
        writeln!(
            out,
            "  listening on {}, reachable from other machines: every request needs the token \
             in this URL",
            board.addr()
        )?;
    }
    out.flush()?;
    drop(out);
    if open {
        open_browser(&url);
    }
    let stop = crate::interrupt::interrupt_flag();
    board
        .serve(stop)
        .map_err(|e| CliError::Run(e.to_string()))?;
    // Ctrl-C is how a board ends: a success.
    Ok(Exit::Success)
}

#[cfg(feature = "board")]
/// Asks the desktop to open `url` (`xdg-open`, or `open` on macOS); a failure is said, not
/// fatal: the URL is printed.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    if let Err(e) = std::process::Command::new(opener)
        .arg(url)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
    {
        crate::stderr::line(format!(
            "tally: could not run {opener} to open the page: {e}"
        ));
    }
}

#[cfg(all(test, not(feature = "board")))]
mod tests {
    use super::*;

    #[test]
    fn without_the_server_board_is_a_usage_error_saying_how_to_get_it() {
        match main(vec![PathBuf::from(".")], [127, 0, 0, 1].into(), 0, false) {
            Err(CliError::Usage(m)) => assert_eq!(m, NOT_BUILT),
            other => panic!("expected a usage error, got {other:?}"),
        }
    }
}
