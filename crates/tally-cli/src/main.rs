//! The `tally` binary: everything lives in the library so the Python package can run it too.

fn main() -> std::process::ExitCode {
    tally_cli::run(std::env::args_os(), &tally_cli::Extensions::default())
}
