//! The board's server alone, with `tally board`'s arguments (`board PATH... --port P`), for
//! `bench/board.py --tally`: a release build of this crate without the rest of the command
//! line (the SQL engine above all) measures the same server in minutes of build.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use tally_board::{Board, Options};

fn main() {
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().map(String::as_str) == Some("board") {
        args.next();
    }
    let (mut paths, mut port) = (Vec::<PathBuf>::new(), 6007u16);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--port" => port = args.next().and_then(|p| p.parse().ok()).expect("--port N"),
            _ => paths.push(a.into()),
        }
    }
    let host = "127.0.0.1".parse().unwrap();
    let options = Options {
        paths,
        host,
        port,
        token: None,
    };
    let board = Board::bind(options).expect("binding the board's address");
    println!("tally board: {}", board.url());
    // SIGINT's default action ends the process: the board writes nothing to leave half done.
    board.serve(&AtomicBool::new(false)).expect("serving");
}
