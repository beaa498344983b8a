//! `tally board [PATH...] [--host H] [--port P] [--open]`: serve the runs under the paths to a
//! browser ([`tally_board`]) until Ctrl-C, printing the URL to open.

use crate::error::{CliError, Exit};
use std::io::Write as _;
use std::net::IpAddr;
use std::path::PathBuf;
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
