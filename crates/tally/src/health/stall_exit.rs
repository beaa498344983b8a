//! Ending a stalled run (docs/contract/health.md "Ending a stalled run"): with
//! `stall_exit_after`, a thread of its own watches the stall timer's pauses; when one has
//! lasted the grace period past its finding with no step, the run is recorded `failed` with a
//! status reason naming the stall, its summary written (over the run's room when the disk is
//! full, as close writes it: docs/contract/run-artifacts.md "Storage faults"), and the process
//! ended with [`STALL_EXIT_CODE`]. A stalled loop sends no step, so nothing on the step's path
//! can do it.

use super::finding::RuleKind;
use super::live::LiveHealth;
use crate::room::Room;
use crate::run::{iso_utc, utc, write_run_summary_in};
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tally_clock::Clock;
use tally_schema::artifacts::{HealthFinding, RunStatus, RunSummary};

/// The exit code of a process ended for a stall: 75, `EX_TEMPFAIL` of sysexits.h ("a
/// temporary failure; the user is invited to retry"): a scheduler may restart the job, which
/// can resume the run from its checkpoint.
pub const STALL_EXIT_CODE: i32 = 75;

/// The summary the logger last handed its writer, with the run clock's monotonic time it was
/// made at: the exit finishes it, since the logger itself is with the stalled loop.
pub type LastSummary = Arc<Mutex<(RunSummary, f64)>>;

/// Called before the process ends, in order (the panel registers its terminal restore).
static BEFORE_EXIT: Mutex<Vec<fn()>> = Mutex::new(Vec::new());

/// Registers `f` to run before a stall ends the process (once per function).
pub fn before_exit(f: fn()) {
    let mut hooks = BEFORE_EXIT.lock().unwrap_or_else(|e| e.into_inner());
    if !hooks.iter().any(|h| std::ptr::fn_addr_eq(*h, f)) {
        hooks.push(f);
    }
}

/// The watcher's thread; stopped at close (a run being closed is not stalled).
#[derive(Debug)]
pub struct StallExit {
    stop: Option<Sender<()>>,
    /// Taken by whichever comes first, close or the exit: a close never races the exit's
    /// summary.
    gate: Arc<Mutex<bool>>,
}

/// What the exit needs besides the health.
pub struct Ending {
    /// The grace period after a stall finding.
    pub grace: Duration,
    /// The summary the logger last handed its writer.
    pub last: LastSummary,
    /// A resumed run's earlier segments' findings, which the summary keeps before this one's.
    pub carried: Vec<HealthFinding>,
    /// Where the summary is written.
    pub run_dir: PathBuf,
    /// The room kept for the summary, written over when the disk is full, then given back.
    pub room: Room,
    /// The run's clock (its end time, the wall time since the last summary).
    pub clock: Arc<dyn Clock>,
    /// A finding as the summary lists it.
    pub entry: fn(&super::Finding) -> HealthFinding,
}

/// How often the watcher looks (two reads: the pause count, the step count under its lock).
const POLL: Duration = Duration::from_millis(100);

impl StallExit {
    /// Starts watching `health`'s pauses.
    pub fn start(health: Arc<LiveHealth>, ending: Ending) -> std::io::Result<Self> {
        let (tx, rx) = std::sync::mpsc::channel();
        let gate = Arc::new(Mutex::new(false));
        let g = gate.clone();
        std::thread::Builder::new()
            .name("tally-stall-exit".into())
            .spawn(move || watch(&health, &ending, &rx, &g))?;
        Ok(StallExit {
            stop: Some(tx),
            gate,
        })
    }

    /// Stops watching; waits for an exit already under way (which then ends the process).
    pub fn stop(&mut self) {
        *self.gate.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.stop.take();
    }
}

impl Drop for StallExit {
    fn drop(&mut self) {
        self.stop();
    }
}

fn watch(health: &LiveHealth, ending: &Ending, stop: &Receiver<()>, gate: &Mutex<bool>) {
    let mut seen = health.pauses();
    // A pause found: when, and the step count then.
    let mut armed: Option<(Instant, u64)> = None;
    loop {
        match stop.recv_timeout(POLL) {
            Err(RecvTimeoutError::Timeout) => {}
            _ => return,
        }
        let pauses = health.pauses();
        if pauses != seen {
            seen = pauses;
            armed = Some((Instant::now(), health.steps()));
        }
        let Some((at, steps)) = armed else { continue };
        if health.steps() != steps {
            // The loop came back within the grace period: the run goes on.
            armed = None;
            continue;
        }
        if at.elapsed() >= ending.grace {
            let stopped = gate.lock().unwrap_or_else(|e| e.into_inner());
            if *stopped {
                return;
            }
            end_run(health, ending, at.elapsed());
        }
    }
}

/// Records the run `failed`, writes its summary and ends the process. `since` is the time
/// since the stall was found.
fn end_run(health: &LiveHealth, ending: &Ending, since: Duration) -> ! {
    let findings = health.findings();
    let stall = findings.iter().find(|f| f.rule == RuleKind::Stall);
    let (after, paused) = stall.map_or((None, since.as_secs_f64()), |f| {
        (Some(f.first_step), f.last_value + since.as_secs_f64())
    });
    let after = after.map_or_else(String::new, |s| format!(" after step {s}"));
    let reason = format!(
        "stalled: no step{after} for {paused:.0} s (health rule stall), none within \
         stall_exit_after={} s of the finding; the process was ended with exit code \
         {STALL_EXIT_CODE}",
        ending.grace.as_secs_f64()
    );
    let (mut s, made_at) = ending
        .last
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    let elapsed = (ending.clock.monotonic() - made_at).max(0.0);
    s.wall_time_sec += elapsed;
    if s.training_wall_time_sec > 0.0 {
        s.training_wall_time_sec += elapsed;
    }
    s.status = RunStatus::Failed;
    s.status_reason = Some(reason.clone());
    s.end_time_utc = Some(iso_utc(&utc(ending.clock.wall())));
    s.health = ending.carried.clone();
    s.health.extend(findings.iter().map(ending.entry));
    let written = write_run_summary_in(&ending.run_dir, &s, &ending.room);
    ending.room.release();
    let hooks = BEFORE_EXIT
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    hooks.iter().for_each(|h| h());
    eprintln!("tally: {reason}");
    if let Err(e) = written {
        eprintln!("tally: the final run_summary.json could not be written: {e}");
    }
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // A stalled process is often wedged in a library (a collective, a GPU driver) whose exit
    // handlers may wait on the very thing that stalled: if `exit` has not ended the process
    // within EXIT_BACKSTOP, SIGKILL does.
    let _ = std::thread::Builder::new()
        .name("tally-stall-kill".into())
        .spawn(|| {
            std::thread::sleep(EXIT_BACKSTOP);
            let me = rustix::process::getpid();
            let _ = rustix::process::kill_process(me, rustix::process::Signal::KILL);
        });
    std::process::exit(STALL_EXIT_CODE)
}

/// How long `exit` may take before the process is killed instead.
const EXIT_BACKSTOP: Duration = Duration::from_secs(10);
