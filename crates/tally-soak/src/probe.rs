//! External probes (`nvidia-smi`, `git`, `python3`) with a deadline: a wedged driver makes
//! `nvidia-smi` hang, and a probe must never stop the monitor from sampling or finishing.

use std::ffi::OsStr;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long a per-sample probe may take.
pub const SAMPLE_PROBE: Duration = Duration::from_secs(10);
/// How long a context probe may take (a cold `import torch` is slow).
pub const CONTEXT_PROBE: Duration = Duration::from_secs(60);

/// The trimmed stdout of `program args` run in `cwd` when it succeeds within `timeout`; None
/// when it cannot start, fails, or runs late (it is then killed).
pub fn output(
    program: impl AsRef<OsStr>,
    args: &[&str],
    cwd: &Path,
    timeout: Duration,
) -> Option<String> {
    let mut child = Command::new(program)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdout = child.stdout.take()?;
    // Read beside the wait, so a probe that fills the pipe is not mistaken for a hung one.
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        stdout.read_to_end(&mut buf).map(|_| buf)
    });
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let bytes = reader.join().ok()?.ok()?;
                return status
                    .success()
                    .then(|| String::from_utf8_lossy(&bytes).trim().to_owned());
            }
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_of_a_probe_that_succeeds_fails_or_hangs() {
        let here = Path::new(".");
        let t = Duration::from_secs(30);
        assert_eq!(
            output("sh", &["-c", "echo '  v1.2 '"], here, t).as_deref(),
            Some("v1.2")
        );
        assert_eq!(output("sh", &["-c", "echo x; exit 1"], here, t), None);
        assert_eq!(output("/nonexistent/probe", &[], here, t), None);
        // A hung probe is abandoned at its deadline (the sleep would take 30 s).
        let hung = output("sleep", &["30"], here, Duration::from_millis(100));
        assert_eq!(hung, None);
    }
}
