//! What `tally board` serves and where (`docs/contract/board.md` "Who can see it").

use crate::error::Error;
use std::io::Read;
use std::net::IpAddr;
use std::path::PathBuf;

/// The board's settings.
#[derive(Debug, Clone)]
pub struct Options {
    /// The files and directories whose runs are shown (as `tally.read` takes them).
    pub paths: Vec<PathBuf>,
    /// The address to listen on: loopback unless the user says otherwise.
    pub host: IpAddr,
    /// The port; 0 picks a free one.
    pub port: u16,
    /// The token a request must carry: `None` serves anyone who can reach the address, which
    /// only loopback allows ([`Options::token_for`]).
    pub token: Option<String>,
}

impl Options {
    /// The token for `host`: none on a loopback address, else a new random one (a board
    /// reachable from other machines never serves without one).
    pub fn token_for(host: IpAddr) -> Result<Option<String>, Error> {
        if host.is_loopback() {
            return Ok(None);
        }
        random_token().map(Some)
    }
}

/// 128 bits from the kernel's random source, as 32 hexadecimal digits.
fn random_token() -> Result<String, Error> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|source| Error::Io {
            what: "/dev/urandom (the board's token)".to_owned(),
            source,
        })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_goes_without_a_token() {
        assert_eq!(
            Options::token_for("127.0.0.1".parse().unwrap()).unwrap(),
            None
        );
        assert_eq!(Options::token_for("::1".parse().unwrap()).unwrap(), None);
        let a = Options::token_for("0.0.0.0".parse().unwrap())
            .unwrap()
            .unwrap();
        let b = Options::token_for("10.1.2.3".parse().unwrap())
            .unwrap()
            .unwrap();
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
    }
}
