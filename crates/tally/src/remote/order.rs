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
    let first_wall = |f: &Path| {
        let mut r = open_event_file(f)
            .ok()?
            .with_on_corruption(OnCorruption::Skip);
        r.read_event()
            .ok()
            .flatten()
            .map(|e| e.wall_time)
            .filter(|w| w.is_finite())
    };
    let mut keyed: Vec<(f64, PathBuf)> = files
        .into_iter()
        .map(|f| (first_wall(&f).unwrap_or(f64::INFINITY), f))
        .collect();
    keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
    keyed.into_iter().map(|(_, f)| f).collect()
}
