//! One run's row, read as a stream (docs/contract/consumers.md "The runs table"): the run's
//! points are never all held, so a run of any size costs the same memory. A first pass gathers
//! every figure but the final means and feeds the health rules; the final means need each
//! tag's step range, so a second pass takes the chosen tags' points again, from memory when
//! they were few enough to keep, else from the files.

use super::figures::Figures;
use super::row::RunRow;
use crate::columns::{policy, ReadOptions};
use crate::config::run_configuration;
use crate::health::RunChecker;
use crate::meta::read_status;
use crate::scalars::RunScalars;
use std::path::{Path, PathBuf};
use tally::health::RuleSet;
use tally_schema::legacy::glob_match;
use tally_tfevents::{Damage, ScalarRef};

/// Chosen points a run's second pass takes from memory (24 bytes each, 48 MiB per reading
/// thread at most); a run with more is read a second time instead.
pub(super) const KEPT_POINTS: usize = 1 << 21;

/// What reading one run gave: its row (`None` when its files hold no scalar) and the damage
/// read past.
pub(super) struct RowRead {
    pub row: Option<RunRow>,
    pub damage: Vec<Damage>,
}

/// How the run's tags are told apart: each reader tag id's slot among the chosen tags, found
/// once per tag.
struct Slots<'a> {
    globs: &'a [String],
    /// `None`: not seen yet; `Some(None)`: not chosen.
    by_id: Vec<Option<Option<usize>>>,
    /// Whether a tag met for the first time may be given a slot (first pass) or only found
    /// (second pass).
    grow: bool,
}

impl Slots<'_> {
    #[inline]
    fn of(&mut self, s: &ScalarRef<'_>, figures: &mut Figures) -> Option<usize> {
        let Some(id) = s.tag_id else {
            return self.first(s.tag, figures);
        };
        if let Some(Some(known)) = self.by_id.get(id) {
            return *known;
        }
        let slot = self.first(s.tag, figures);
        if self.by_id.len() <= id {
            self.by_id.resize(id + 1, None);
        }
        self.by_id[id] = Some(slot);
        slot
    }

    #[cold]
    fn first(&self, tag: &str, figures: &mut Figures) -> Option<usize> {
        match figures.slot_of(tag) {
            Some(slot) => Some(slot),
            None if self.grow && self.globs.iter().any(|g| glob_match(g, tag)) => {
                Some(figures.slot(tag))
            }
            None => None,
        }
    }
}

/// The row of the run in `dir` named `name`, read from its `files` (run order; `opts.strict` refuses
/// steps going back across files), with the tags matching `globs` summarized and `rules`
/// judged. `now` (wall seconds) judges a run still being written for a stall at its end. At most
/// `keep` chosen points are held for the second pass ([`KEPT_POINTS`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn read_row(
    name: String,
    dir: &Path,
    files: Vec<PathBuf>,
    globs: &[String],
    opts: ReadOptions,
    rules: &RuleSet,
    now: f64,
    keep: usize,
) -> Result<RowRead, String> {
    let mut figures = Figures::default();
    let mut slots = Slots {
        globs,
        by_id: Vec::new(),
        grow: true,
    };
    let mut checker = RunChecker::new(rules);
    let mut kept: Vec<(u32, i64, f64)> = Vec::new();
    let mut keeping = true;
    let mut reader = RunScalars::new(files.clone(), policy(opts))
        .strict(opts.strict)
        .readable_part(opts.readable_part);
    while let Some(file) = reader.advance().map_err(|e| e.to_string())? {
        let Some(s) = reader.current() else { continue };
        checker.scalar(file, &s);
        let slot = slots.of(&s, &mut figures);
        figures.point(slot, s.step, s.wall_time, s.value);
        if let (Some(slot), true) = (slot, keeping) {
            if kept.len() < keep {
                kept.push((slot as u32, s.step, s.value));
            } else {
                keeping = false;
                kept = Vec::new();
            }
        }
    }
    let damage = reader.take_damage();
    if figures.points == 0 {
        return Ok(RowRead { row: None, damage });
    }
    if keeping {
        for (slot, step, v) in kept {
            figures.final_point(slot as usize, step, v);
        }
    } else if figures.any_chosen() {
        second_pass(files, opts, &mut figures)?;
    }
    let live = crate::health::is_live(dir);
    let status = read_status(dir);
    let row = RunRow {
        name,
        status,
        start: figures.first_wall,
        duration: figures
            .first_wall
            .zip(figures.last_wall)
            .map(|(a, b)| b - a),
        last_step: figures.last_step,
        points: figures.points,
        config: run_configuration(dir).map_err(|e| e.to_string())?,
        tags: figures.tag_stats(),
        health: Some(crate::health::with_recorded(
            dir,
            checker.finish(live.then_some(now)),
        )),
        dir: dir.to_owned(),
    };
    Ok(RowRead {
        row: Some(row),
        damage,
    })
}

/// The chosen tags' points read again from the files, as many scalars as the first pass read
/// (a run still being written may have grown since).
fn second_pass(
    files: Vec<PathBuf>,
    opts: ReadOptions,
    figures: &mut Figures,
) -> Result<(), String> {
    let mut slots = Slots {
        globs: &[],
        by_id: Vec::new(),
        grow: false,
    };
    let mut left = figures.points;
    let mut reader = RunScalars::new(files, policy(opts))
        .strict(opts.strict)
        .readable_part(opts.readable_part);
    while left > 0 {
        if reader.advance().map_err(|e| e.to_string())?.is_none() {
            break;
        }
        let Some(s) = reader.current() else { continue };
        left -= 1;
        if let Some(slot) = slots.of(&s, figures) {
            figures.final_point(slot, s.step, s.value);
        }
    }
    Ok(())
}
