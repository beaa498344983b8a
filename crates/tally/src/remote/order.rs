//! A run's event files in run order: a resumed run has several, and they are read as one.

use std::path::{Path, PathBuf};
use tally_tfevents::reader::{is_event_file_name, open_event_file};
use tally_tfevents::OnCorruption;

/// The event files directly in `dir`, in run order: by their first event's wall time, then by
/// name (a file with no readable first event sorts last). A resumed run's files follow each
/// other this way (docs/contract/consumers.md "A run's event files").
pub fn ordered_event_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_file()
            && entry.file_name().to_str().is_some_and(is_event_file_name)
        {
            files.push(entry.path());
        }
    }
    Ok(order_event_files(files))
}

/// Sort one run's event files into run order (see [`ordered_event_files`]).
pub fn order_event_files(files: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut keyed: Vec<(f64, PathBuf)> = files
        .into_iter()
        .map(|f| (first_event_wall(&f).unwrap_or(f64::INFINITY), f))
        .collect();
    sort_keyed(&mut keyed);
    keyed.into_iter().map(|(_, f)| f).collect()
}

/// The wall time of a file's first event (its `file_version` event: when it was created), or
/// `None` when it has no readable first event yet.
pub fn first_event_wall(f: &Path) -> Option<f64> {
    let mut r = open_event_file(f)
        .ok()?
        .with_on_corruption(OnCorruption::Skip);
    r.read_event()
        .ok()
        .flatten()
        .map(|e| e.wall_time)
        .filter(|w| w.is_finite())
}

/// Sort files keyed by [`first_event_wall`] (`f64::INFINITY` for none) into run order: by the
/// key, then by name. For a caller that keeps the keys between listings (`tally watch`).
pub fn sort_keyed(keyed: &mut [(f64, PathBuf)]) {
    keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
}
