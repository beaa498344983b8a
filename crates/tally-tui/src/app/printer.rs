//! Plain output: messages and a summary line every interval, no escape codes, for when the
//! live panel does not run.

use super::command::Command;
use super::feed::{is_warmup, message_line, new_messages, snapshot};
use super::options::PanelOptions;
use crate::plain::summary_line;
use crate::text::ascii;
use std::io::{self, Write};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Mutex;
use tally::terminal::TerminalState;
use tally::Clock;

pub(super) fn plain_loop(
    state: &Mutex<TerminalState>,
    clock: &dyn Clock,
    opts: &PanelOptions,
    rx: &Receiver<Command>,
    mut out: Box<dyn Write + Send>,
) -> io::Result<()> {
    let mut seen = 0u64;
    let mut pending_info: Option<String> = None;
    let mut last_info: Option<f64> = None;
    let mut last_summary: Option<f64> = None;
    // The previous frame's model of an rft run, whose eval tables the next one keeps.
    let mut rft_model: Option<crate::state::Model> = None;
    let mut stop = false;
    while !stop {
        match rx.recv_timeout(opts.refresh) {
            Ok(Command::Log(line)) => writeln!(out, "{}", ascii(&line))?,
            Ok(Command::Refresh) | Err(RecvTimeoutError::Timeout) => {}
            Ok(Command::Stop) | Err(RecvTimeoutError::Disconnected) => stop = true,
        }
        let snap = snapshot(state);
        let training = snap.training_started_at.is_some();
        if training && snap.facts.profile == tally_schema::Profile::Rft {
            // Follow every frame: eval keys sit in the window only around an eval step.
            let now = clock.monotonic();
            rft_model = Some(match &rft_model {
                Some(prev) => crate::state::Model::after(prev, &snap, now),
                None => crate::state::Model::build(&snap, now),
            });
        }
        for m in new_messages(&snap, seen) {
            if is_warmup(m, snap.training_started_at) {
                // Warm-up progress: only the latest, at most once per interval.
                pending_info = Some(message_line(m));
            } else {
                // Keep the order: held-back warm-up progress is older than this line.
                if let Some(line) = pending_info.take() {
                    writeln!(out, "{}", ascii(&line))?;
                    last_info = Some(clock.monotonic());
                }
                writeln!(out, "{}", ascii(&message_line(m)))?;
            }
        }
        seen = snap.messages_total;
        let interval = opts.plain_interval.as_secs_f64();
        let due = |t: Option<f64>| t.is_none_or(|t| clock.monotonic() - t >= interval);
        if pending_info.is_some() && (due(last_info) || training || stop) {
            if let Some(line) = pending_info.take() {
                writeln!(out, "{}", ascii(&line))?;
            }
            last_info = Some(clock.monotonic());
        }
        if training && (stop || due(last_summary)) {
            if last_summary.is_none() && !stop {
                // The first summary waits one interval, so a short run prints one final line.
                last_summary = Some(clock.monotonic());
            } else {
                let model = match &rft_model {
                    Some(m) => m.clone(),
                    None => crate::state::Model::build(&snap, clock.monotonic()),
                };
                writeln!(out, "{}", summary_line(&model))?;
                last_summary = Some(clock.monotonic());
            }
        }
        out.flush()?;
    }
    Ok(())
}
