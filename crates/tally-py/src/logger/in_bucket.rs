//! A `tally.Logger` whose `log_dir` is an object-store URL (docs/contract/object-storage.md
//! "Writing"): the run directory is a staging directory, the logger's event-file sink hands
//! its segments to the run's uploader (`tally::upload::Upload`), and the run's other files
//! (`run_config.json`, `run_summary.json`, the trace, ...) are put whole here, at each
//! `flush` and at `close`, after the logger wrote them.

use std::path::Path;
use std::sync::Arc;
use tally::OnStorageError;
use tally_cloud::segments::{CLOSE_WAIT, FLUSH_WAIT};
use tally_cloud::Uploader;

/// Hand the uploader every file of `run_dir` but the event segments (the sink puts those) and
/// the hidden ones (the lock, temporaries, cursors); the last put's ticket.
fn put_artefacts(uploader: &Uploader, dir: &Path, last: &mut Option<u64>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || name.starts_with("events.out.tfevents") {
            continue;
        }
        match entry.file_type() {
            Ok(t) if t.is_dir() => put_artefacts(uploader, &entry.path(), last),
            Ok(t) if t.is_file() => *last = Some(uploader.put(&entry.path(), None, false)),
            _ => {}
        }
    }
}

fn fault(uploader: &Uploader, message: String) -> tally::Error {
    tally::Error::EventFileFault {
        path: uploader.staging().to_owned(),
        message,
    }
}

/// The run started: `run_config.json` and the first `run_summary.json` put (no wait), so the
/// bucket names the run before its first segment closes.
pub(super) fn started(uploader: &Uploader) {
    put_artefacts(uploader, uploader.staging(), &mut None);
}

/// After the logger's `flush` (which handed the open segment in): the artefacts put, and every
/// put so far waited for, at most [`FLUSH_WAIT`]. A store that refuses: an error with `raise`,
/// nothing with `warn` (the outage itself is printed by the sink); what is not in the bucket
/// stays in staging and is put later either way.
pub(super) fn flushed(uploader: &Uploader, on_error: OnStorageError) -> Result<(), tally::Error> {
    let mut last = None;
    put_artefacts(uploader, uploader.staging(), &mut last);
    let Some(ticket) = last else {
        return Ok(());
    };
    match uploader.wait(ticket, FLUSH_WAIT) {
        Err(cause) if on_error == OnStorageError::Raise => Err(fault(
            uploader,
            format!(
                "{} files are not in the bucket yet (kept in {} and put again until the store \
                 takes them): {cause}",
                uploader.pending(),
                uploader.staging().display()
            ),
        )),
        _ => Ok(()),
    }
}

/// After the logger closed: the final artefacts put, and every put waited for, at most
/// [`CLOSE_WAIT`] once the store refuses. What is left stays in staging, said (raised with
/// `raise`), and the uploader goes on trying while the process lives.
pub(super) fn closed(
    uploader: Arc<Uploader>,
    on_error: OnStorageError,
) -> Result<(), tally::Error> {
    let mut last = None;
    put_artefacts(&uploader, uploader.staging(), &mut last);
    let left = uploader.drain(CLOSE_WAIT);
    for report in uploader.take_report() {
        eprintln!("tally: warning: {report}");
    }
    if left == 0 {
        return Ok(());
    }
    let e = fault(
        &uploader,
        format!(
            "{left} files are not in {} after {} s of the store refusing: they stay in {} and \
             are put while this process lives; copy that directory to the bucket if it ends \
             first",
            uploader.url(),
            CLOSE_WAIT.as_secs(),
            uploader.staging().display()
        ),
    );
    match on_error {
        OnStorageError::Raise => Err(e),
        OnStorageError::Warn => {
            eprintln!("tally: warning: {e}");
            Ok(())
        }
    }
}
