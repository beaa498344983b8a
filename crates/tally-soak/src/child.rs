//! The soaked command as a process group: spawned directly (or through `sh -c` when asked)
//! as the leader of a new group, its output into the console log, and ended as a whole.

use rustix::process::{kill_process, kill_process_group, Pid, Signal};
use std::fs::File;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How often a wait polls.
pub const POLL: Duration = Duration::from_millis(50);

/// The running command.
pub struct Group {
    child: Child,
    /// The group id (the leader's pid).
    pub pgid: u32,
    /// Set once the leader was reaped.
    pub status: Option<ExitStatus>,
}

/// Spawn `command` (through `sh -c` with its words joined by spaces when `shell`) in a new
/// process group, stdin from /dev/null, stdout and stderr appended to `console`.
pub fn spawn(command: &[String], shell: bool, console: &Path) -> std::io::Result<Group> {
    let log = File::options().create(true).append(true).open(console)?;
    let mut cmd = if shell {
        let mut c = Command::new("sh");
        c.arg("-c").arg(command.join(" "));
        c
    } else {
        let mut c = Command::new(&command[0]);
        c.args(&command[1..]);
        c
    };
    // Its own group: a Ctrl-C at the terminal reaches tally only, which then ends the whole
    // group, and what the command leaves behind is found by group id.
    cmd.process_group(0)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log);
    let child = cmd.spawn()?;
    let pgid = child.id();
    Ok(Group {
        child,
        pgid,
        status: None,
    })
}

impl Group {
    /// The leader's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Reap the leader if it exited; whether it has.
    pub fn poll(&mut self) -> std::io::Result<bool> {
        if self.status.is_none() {
            self.status = self.child.try_wait()?;
        }
        Ok(self.status.is_some())
    }

    /// Send `signal` to every process of the group. A group that is already empty is not an
    /// error.
    pub fn signal(&self, signal: Signal) {
        if let Some(pid) = i32::try_from(self.pgid).ok().and_then(Pid::from_raw) {
            let _ = kill_process_group(pid, signal);
        }
    }

    /// End the group: SIGTERM to all of it, up to `grace` for the leader to exit, else SIGKILL
    /// to the whole group; the leader is reaped. The rest of a group whose leader exited is
    /// left to the post-shutdown check, which reports and kills what outlives its grace.
    pub fn terminate(&mut self, grace: Duration) -> std::io::Result<()> {
        self.signal(Signal::TERM);
        let deadline = Instant::now() + grace;
        while !self.poll()? && Instant::now() < deadline {
            std::thread::sleep(POLL);
        }
        if self.status.is_none() {
            self.signal(Signal::KILL);
            self.status = Some(self.child.wait()?);
        }
        Ok(())
    }

    /// Kill whatever is left of the group and `escaped`, the command's processes that left it
    /// (after the grace period).
    pub fn kill_rest(&self, escaped: &[u32]) {
        self.signal(Signal::KILL);
        for pid in escaped {
            if let Some(pid) = i32::try_from(*pid).ok().and_then(Pid::from_raw) {
                let _ = kill_process(pid, Signal::KILL);
            }
        }
    }
}

/// An exit status as a return code: the exit code, or minus the signal that ended it.
pub fn returncode(status: ExitStatus) -> Option<i64> {
    status
        .code()
        .map(i64::from)
        .or_else(|| status.signal().map(|s| -i64::from(s)))
}
