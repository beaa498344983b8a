//! What changed in a run's files since its last export: nothing, only growth (read on from
//! where the last export stopped), or a change to what was already exported (a file shrank,
//! vanished, was written anew or reordered, a purge marker drops exported points), after which
//! the run is exported again whole (`docs/contract/consumers.md` "A Parquet dataset").

use super::state::{Head, RuleKey, RunState};
use crate::error::Error;
use crate::scalars::{cut_steps, Resume};
use std::path::{Path, PathBuf};

/// What an export of a run does.
#[derive(Debug, PartialEq)]
pub(super) enum Plan {
    /// Export the run whole, replacing its partition; why its exported rows no longer hold
    /// (`None`: it was never exported).
    Whole(Option<String>),
    /// Nothing was added since the last export.
    Nothing,
    /// Read on from the last export; the reading starts in file `file` at byte `offset` (the
    /// part's name).
    From {
        resume: Resume,
        file: usize,
        offset: u64,
    },
}

/// The plan for the run in `dir` (its event files `files`, in run order) exported under `rule`,
/// given its state after the last export (`None`: never exported) and whether its partition
/// is there.
pub(super) fn plan(
    known: Option<&RunState>,
    dir: &Path,
    files: &[PathBuf],
    rule: &RuleKey,
    partition_there: bool,
) -> Result<Plan, Error> {
    let Some(known) = known else {
        return Ok(Plan::Whole(None));
    };
    let whole = |why: String| Ok(Plan::Whole(Some(why)));
    if known.dir != dir {
        return whole(format!(
            "the run's name stood for {} at the last export",
            known.dir.display()
        ));
    }
    if known.rule != *rule {
        return whole("it was exported with other --tags or --migrate-legacy".into());
    }
    if known.rows > 0 && !partition_there {
        return whole("its scalars partition is missing".into());
    }
    for (i, f) in known.files.iter().enumerate() {
        let p = f.path.display();
        if files.get(i) != Some(&f.path) {
            return whole(if files.contains(&f.path) {
                format!("{p} is no longer in the same place in the run's file order")
            } else {
                format!("{p} is gone")
            });
        }
        let len = match std::fs::metadata(&f.path) {
            Ok(m) => m.len(),
            Err(_) => return whole(format!("{p} is gone")),
        };
        if len < f.read_to {
            return whole(format!(
                "{p} shrank to {len} bytes, below the {} already exported",
                f.read_to
            ));
        }
        if Head::of_len(&f.path, f.head.len)? != f.head {
            return whole(format!("{p} was written anew"));
        }
    }
    let cuts = cut_steps(files);
    for (f, cut) in known.files.iter().zip(&cuts) {
        if let (Some(cut), Some(max)) = (cut, f.max_step) {
            if max >= *cut {
                return whole(format!(
                    "a purge marker at step {cut} in a later file drops points of {} \
                     already exported (up to step {max})",
                    f.path.display()
                ));
            }
        }
    }
    let mut start = None;
    for (i, path) in files.iter().enumerate() {
        let Some(f) = known.files.get(i) else {
            start = Some((i, 0));
            break;
        };
        let len = std::fs::metadata(path).map_or(0, |m| m.len());
        if len > f.read_to {
            start = Some((i, f.read_to));
            break;
        }
    }
    let Some((file, offset)) = start else {
        return Ok(Plan::Nothing);
    };
    Ok(Plan::From {
        resume: Resume {
            offsets: known.files.iter().map(|f| f.read_to).collect(),
            max_steps: known.files.iter().map(|f| f.max_step).collect(),
        },
        file,
        offset,
    })
}
