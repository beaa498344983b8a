//! Health findings on any run: its scalars fed in reading order (step order, as TensorBoard
//! reads them) through `tally::health`'s evaluator, the one implementation of the rules, with
//! what a logger recorded in its summary (`docs/contract/health.md` "tally health").

use crate::columns::{resolve_inputs, run_name};
use crate::error::Error;
use crate::meta::read_status;
use crate::scalars::RunScalars;
use std::path::{Path, PathBuf};
use tally::health::{Evaluator, Finding, RuleSet, TagSlot};
use tally_tfevents::{Damage, OnCorruption, ScalarRef};

mod named_writer;
mod recorded;
mod writing;
pub use recorded::{summary_findings, with_recorded};

/// What the rules found in one run.
#[derive(Debug)]
pub struct RunHealth {
    /// The run's name under the paths given (`.` for a run given as itself).
    pub run: String,
    /// Its directory.
    pub dir: PathBuf,
    /// Every finding, in the order they first fired.
    pub findings: Vec<Finding>,
    /// Values read.
    pub values: u64,
    /// Whether the run was taken as still being written (its `run_summary.json` says
    /// `running`), so a pause at its end counts as a stall.
    pub live: bool,
    /// What the reader found damaged (truncated tails).
    pub damage: Vec<Damage>,
}

/// The rules fed one run's scalars in reading order, as a reader streams them: each file a
/// segment of its own (a resumed run's pause between files is not a stall). The one way a
/// reader judges a run (`tally health`, the runs table).
pub struct RunChecker {
    eval: Evaluator,
    /// The evaluator's slot of each reader tag id.
    slots: Vec<Option<TagSlot>>,
    file: Option<usize>,
    values: u64,
}

impl RunChecker {
    /// Checks against `rules`.
    pub fn new(rules: &RuleSet) -> Self {
        RunChecker {
            eval: Evaluator::new(rules.clone()),
            slots: Vec::new(),
            file: None,
            values: 0,
        }
    }

    /// One scalar of the run, read from its file number `file`.
    #[inline]
    pub fn scalar(&mut self, file: usize, s: &ScalarRef<'_>) {
        if self.file != Some(file) {
            // A resumed run's next file: the pause between segments is not a stall.
            self.eval.new_segment();
            self.file = Some(file);
        }
        let slot = match s.tag_id {
            Some(id) => {
                if self.slots.len() <= id {
                    self.slots.resize(id + 1, None);
                }
                *self.slots[id].get_or_insert_with(|| self.eval.tag(s.tag))
            }
            None => self.eval.tag(s.tag),
        };
        self.eval.step(s.step, s.wall_time);
        self.eval.value(slot, s.step, s.wall_time, s.value);
        self.values += 1;
    }

    /// The findings so far, in the order they first fired (a finding's step of detection is
    /// that of the value it first appeared after).
    pub fn findings(&self) -> &[Finding] {
        self.eval.findings()
    }

    /// Values fed so far.
    pub fn values(&self) -> u64 {
        self.values
    }

    /// The findings, in the order they first fired. `now` (wall seconds) is given for a run
    /// still being written: a pause since its last step may then be a stall.
    pub fn finish(mut self, now: Option<f64>) -> Vec<Finding> {
        if let Some(now) = now {
            self.eval.overdue(now);
        }
        self.eval.into_findings()
    }
}

/// Checks one run's event `files` (in run order) against `rules`. `now` (wall seconds) is
/// given for a run still being written: a pause since its last step may then be a stall.
pub fn check_files(
    files: &[PathBuf],
    rules: &RuleSet,
    now: Option<f64>,
) -> Result<(Vec<Finding>, u64, Vec<Damage>), Error> {
    let mut checker = RunChecker::new(rules);
    let mut reader = RunScalars::new(files.to_vec(), OnCorruption::Error);
    while let Some(index) = reader.advance()? {
        if let Some(s) = reader.current() {
            checker.scalar(index, &s);
        }
    }
    let values = checker.values();
    Ok((checker.finish(now), values, reader.take_damage()))
}

/// Checks every run under `paths` (event files, run directories, folders of runs) against
/// `rules`, at wall time `now` for the runs still being written; what the listing skips is told
/// to `observer`.
pub fn check_paths(
    paths: &[PathBuf],
    rules: &RuleSet,
    now: f64,
    observer: &mut dyn crate::observer::Observer,
) -> Result<Vec<RunHealth>, Error> {
    let (root, runs) = resolve_inputs(paths, observer).map_err(Error::Refused)?;
    let mut out = Vec::with_capacity(runs.len());
    for (dir, files) in runs {
        let live = is_live(&dir);
        let (findings, values, damage) = check_files(&files, rules, live.then_some(now))?;
        let findings = with_recorded(&dir, findings);
        out.push(RunHealth {
            run: run_name(&root, &dir),
            dir,
            findings,
            values,
            live,
            damage,
        });
    }
    Ok(out)
}

/// `{"healthy", "runs": [{"run", "dir", "live", "values", "findings": [...]}]}`, as
/// `tally health --json` prints it (`docs/contract/health.md` "tally health").
pub fn runs_json(runs: &[RunHealth]) -> serde_json::Value {
    let runs: Vec<serde_json::Value> = runs
        .iter()
        .map(|r| {
            serde_json::json!({
                "run": r.run,
                "dir": r.dir.display().to_string(),
                "live": r.live,
                "values": r.values,
                "findings": r.findings.iter().map(finding_json).collect::<Vec<_>>(),
            })
        })
        .collect();
    let healthy = runs
        .iter()
        .all(|r| r["findings"].as_array().is_some_and(Vec::is_empty));
    serde_json::json!({ "healthy": healthy, "runs": runs })
}

/// One finding: `{"rule", "tag", "first_step", "last_step", "count", "last_value", "message"}`,
/// a non-finite `last_value` as `"NaN"`, `"Infinity"` or `"-Infinity"` (JSON has none).
pub fn finding_json(f: &Finding) -> serde_json::Value {
    serde_json::json!({
        "rule": f.rule.as_str(),
        "tag": f.tag,
        "first_step": f.first_step,
        "last_step": f.last_step,
        "count": f.count,
        "last_value": crate::json::number(f.last_value),
        "message": f.message,
    })
}

/// A run still being written: its summary says `running`, or, without a summary (a
/// `SummaryWriter`'s run), a process on this machine holds its event file open for writing, or
/// the writer process an event file's name carries is alive here and opens it for each write
/// (docs/contract/health.md "tally health").
pub fn is_live(dir: &Path) -> bool {
    match read_status(dir) {
        Some(status) => status == "running",
        None => writing::held_open(dir) || named_writer::alive(dir),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tally::health::RuleKind;
    use tally_tfevents::{EventFileWriter, WriterOptions};

    /// Writes steps `from..=to` of one loss to `w`, step s at wall time `wall0 + s`.
    fn write(w: &mut EventFileWriter, from: i64, to: i64, wall0: f64) {
        for s in from..=to {
            w.write_scalars(s, wall0 + s as f64, &[("Loss/value", 1.0)])
                .unwrap();
        }
    }

    fn open(dir: &Path) -> EventFileWriter {
        EventFileWriter::open(dir, WriterOptions::from_env()).unwrap()
    }

    #[test]
    fn a_resumed_runs_pause_between_its_files_is_not_a_stall() {
        // docs/contract/health.md "Stall": the gaps start again at each file.
        let tmp = tempfile::tempdir().unwrap();
        let mut w = open(tmp.path());
        write(&mut w, 1, 50, 1e9);
        w.close().unwrap();
        let mut w = open(tmp.path());
        write(&mut w, 51, 100, 1e9 + 3600.0);
        w.close().unwrap();
        let runs = check_paths(
            &[tmp.path().to_owned()],
            &RuleSet::defaults(),
            0.0,
            &mut crate::Quiet,
        )
        .unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].values, 100);
        assert!(runs[0].findings.is_empty(), "{:?}", runs[0].findings);
        // The same pause inside one file is a stall after step 50.
        let tmp = tempfile::tempdir().unwrap();
        let mut w = open(tmp.path());
        write(&mut w, 1, 50, 1e9);
        write(&mut w, 51, 100, 1e9 + 3600.0);
        w.close().unwrap();
        let runs = check_paths(
            &[tmp.path().to_owned()],
            &RuleSet::defaults(),
            0.0,
            &mut crate::Quiet,
        )
        .unwrap();
        let f = &runs[0].findings;
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!((f[0].rule, f[0].first_step), (RuleKind::Stall, 50));
    }

    #[test]
    fn a_run_still_running_and_quiet_too_long_is_stalled_at_its_last_step() {
        let tmp = tempfile::tempdir().unwrap();
        let mut w = open(tmp.path());
        write(&mut w, 1, 50, 1e9);
        w.close().unwrap();
        let now = 1e9 + 50.0 + 600.0;
        let check = |status: &str| {
            let summary = format!(r#"{{"status": "{status}"}}"#);
            std::fs::write(tmp.path().join("run_summary.json"), summary).unwrap();
            check_paths(
                &[tmp.path().to_owned()],
                &RuleSet::defaults(),
                now,
                &mut crate::Quiet,
            )
            .unwrap()
        };
        let runs = check("running");
        assert!(runs[0].live);
        let f = &runs[0].findings;
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(
            (f[0].rule, f[0].first_step, f[0].last_value),
            (RuleKind::Stall, 50, 600.0)
        );
        // A finished run's end is not a pause.
        let runs = check("completed");
        assert!(!runs[0].live);
        assert!(runs[0].findings.is_empty());
    }

    #[test]
    fn a_run_without_a_summary_whose_writer_holds_its_file_open_is_live() {
        // A hung SummaryWriter's loop: no summary, the event file still open.
        let tmp = tempfile::tempdir().unwrap();
        let mut w = open(tmp.path());
        write(&mut w, 1, 50, 1e9);
        w.flush().unwrap();
        let now = 1e9 + 50.0 + 600.0;
        let check = || {
            check_paths(
                &[tmp.path().to_owned()],
                &RuleSet::defaults(),
                now,
                &mut crate::Quiet,
            )
            .unwrap()
        };
        if cfg!(target_os = "linux") {
            // The listing of open files is kept for 2 s.
            std::thread::sleep(std::time::Duration::from_millis(2100));
            let runs = check();
            assert!(runs[0].live);
            let f = &runs[0].findings;
            assert_eq!(f.len(), 1, "{f:?}");
            assert_eq!((f[0].rule, f[0].first_step), (RuleKind::Stall, 50));
        }
        w.close().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(2100));
        let runs = check();
        // Its name carries this process, still alive; a writer that keeps its file open is
        // judged by its descriptor alone (health.md "tally health").
        assert!(!runs[0].live, "closed: finished, not hung");
        assert!(runs[0].findings.is_empty());
    }
}
