//! `tally watch PATH --curves` (and `tally watch` on a folder of runs): each tag's whole series
//! drawn in the terminal, the runs under PATH overlaid, live while they grow
//! (`docs/contract/panel.md` "Curves in the terminal").
//!
//! Runs are found by the listing every reader shares (`tally_read::columns::resolve_inputs`,
//! named by `run_name` as `tally runs` and `tally board` name them), held as
//! [`LiveRun`]s read on where they stopped, and each series is reduced to the chart's dot
//! columns by the reader's M4 buckets ([`Series::downsample`]): every extreme stays. The panel
//! crate draws plain data ([`tally_tui::curves`]); off a terminal one frame is printed.

use super::watch::{hangup_flag, MAX_POLL, POLL};
use crate::error::{CliError, Exit};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tally_read::columns::{resolve_inputs, run_name};
use tally_read::downsample::{Axis, Bucket, Series};
use tally_read::live::LiveRun;
use tally_tfevents::Damage;
use tally_tui::curves::{
    dot_columns, plain_text, Action, Chart, Column, CurvesModel, CurvesView, Nav, RunLabel,
    RunValue, Trace,
};
use tally_tui::{Glyphs, Output, Screen, TermEnv};

/// How often keys are looked at.
const TICK: Duration = Duration::from_millis(50);
/// How often the runs under the path are listed again (new runs join the list).
const RELIST: Duration = Duration::from_secs(1);
/// The 2-second mean's window, as the generic dashboard's (`docs/contract/panel.md`).
const WINDOW_SECS: f64 = tally::window::WINDOW_SECS;
/// Plain output's width when `COLUMNS` does not say.
const PLAIN_WIDTH: u16 = 100;

/// Validated `tally watch --curves` settings.
#[derive(Debug, Clone)]
pub struct CurvesConfig {
    /// A run directory, a folder of runs, or one event file (its run is read).
    pub path: PathBuf,
    /// `--panel auto|on|off`: off (or stdout not a terminal) prints one frame.
    pub panel: tally_tui::Mode,
}

/// Whether `path` holds several runs side by side (not one run with its `add_scalars`
/// sub-runs): `tally watch` shows such a folder as curves.
pub fn is_folder_of_runs(path: &Path) -> bool {
    if !path.is_dir() {
        return false;
    }
    let Ok(runs) = tally_read::files::runs_under(path, &mut tally_read::Quiet) else {
        return false;
    };
    // Path order puts a directory before everything below it.
    runs.len() >= 2 && !runs[1..].iter().all(|(d, _)| d.starts_with(&runs[0].0))
}

/// One run watched.
struct Watched {
    name: String,
    dir: PathBuf,
    run: Option<LiveRun>,
    error: Option<String>,
    /// Its health (docs/contract/health.md "In tally watch").
    health: RunHealthSeen,
}

/// A run's newest health finding: a logger's from its `run_summary.json` (read again when it
/// changes), any other run's from `tally health`'s reading of its files, again at most every
/// [`JUDGE_AGAIN`] while it grows.
#[derive(Default)]
struct RunHealthSeen {
    line: Option<String>,
    summary_seen: Option<std::time::SystemTime>,
    judged: Option<(Instant, u64)>,
}

/// How often another tool's growing run is read again for its findings (a whole reading).
const JUDGE_AGAIN: Duration = Duration::from_secs(30);

impl RunHealthSeen {
    /// Whether the line changed.
    fn refresh(&mut self, dir: &Path, points: u64) -> bool {
        let newest = if crate::cmd::watch::is_logger_run(dir) {
            let path = dir.join(tally::run::RUN_SUMMARY_FILE);
            let Ok(modified) = std::fs::metadata(&path).and_then(|m| m.modified()) else {
                return false;
            };
            if self.summary_seen == Some(modified) {
                return false;
            }
            self.summary_seen = Some(modified);
            crate::cmd::watch::summary_findings(&path).pop()
        } else {
            let due = match self.judged {
                None => true,
                Some((at, n)) => n != points && at.elapsed() >= JUDGE_AGAIN,
            };
            if !due {
                return false;
            }
            self.judged = Some((Instant::now(), points));
            let now = tally::Clock::wall(&tally::SystemClock::default());
            let rules = tally::health::RuleSet::defaults();
            tally_read::health::check_paths(&[dir.to_owned()], &rules, now, &mut tally_read::Quiet)
                .ok()
                .and_then(|runs| runs.into_iter().flat_map(|r| r.findings).last())
        };
        let line = newest.as_ref().map(tally_tui::state::health_line);
        let changed = line != self.line;
        self.line = line;
        changed
    }
}

/// The runs under the path, in the order they were found (a run's index is its colour).
struct Runs {
    path: PathBuf,
    runs: Vec<Watched>,
    /// Why no run is listed (nothing written yet, a path missing): the live view waits.
    notice: Option<String>,
    /// What the last listing skipped, each path with why (docs/contract/untrusted-input.md
    /// "Special files"), said under the charts.
    skipped: Vec<(PathBuf, String)>,
    listed: Option<Instant>,
}

impl Runs {
    fn new(path: &Path) -> Runs {
        Runs {
            path: path.to_owned(),
            runs: Vec::new(),
            notice: None,
            skipped: Vec::new(),
            listed: None,
        }
    }

    /// List the runs again (at most once a [`RELIST`]) and read on each; whether anything
    /// shown changed.
    fn refresh(&mut self) -> bool {
        let mut changed = false;
        if self.listed.is_none_or(|t| t.elapsed() >= RELIST) {
            changed |= self.list();
            self.listed = Some(Instant::now());
        }
        for w in &mut self.runs {
            let read = match &mut w.run {
                Some(run) => run.refresh(),
                None => LiveRun::open_own(&w.dir).map(|run| {
                    let points = run.points();
                    w.run = Some(run);
                    points
                }),
            };
            // A damaged run is drawn up to its damage and still named, as one that cannot be
            // read at all (docs/contract/panel.md "Curves in the terminal").
            let error = match &read {
                Err(e) => Some(e.to_string()),
                Ok(_) => w.run.as_ref().and_then(|r| {
                    r.damage()
                        .iter()
                        .find(|d| matches!(d, Damage::Skipped { .. }))
                        .map(ToString::to_string)
                }),
            };
            changed |= read.is_ok_and(|n| n > 0) || error != w.error;
            w.error = error;
            let points = w.run.as_ref().map_or(0, |r| r.points());
            changed |= w.health.refresh(&w.dir, points);
        }
        changed
    }

    /// Add the runs not known yet; whether the list or its notice changed.
    fn list(&mut self) -> bool {
        let mut skipped = Vec::new();
        let listed = resolve_inputs(std::slice::from_ref(&self.path), &mut skipped);
        let skipped_changed = skipped != self.skipped;
        self.skipped = skipped;
        let (root, dirs) = match listed {
            Ok(found) => found,
            Err(e) => {
                let notice = Some(e);
                let changed = notice != self.notice;
                self.notice = notice;
                return changed;
            }
        };
        let mut changed = self.notice.take().is_some() || skipped_changed;
        for (dir, _) in dirs {
            if self.runs.iter().any(|w| w.dir == dir) {
                continue;
            }
            let mut name = run_name(&root, &dir);
            if name == "." {
                name = dir
                    .file_name()
                    .map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into());
            }
            self.runs.push(Watched {
                name,
                dir,
                run: None,
                error: None,
                health: RunHealthSeen::default(),
            });
            changed = true;
        }
        changed
    }

    /// Every tag of every run passing `nav`'s filter, in name order.
    fn tags(&self, nav: &Nav) -> Vec<String> {
        let mut tags = BTreeSet::new();
        for run in self.runs.iter().filter_map(|w| w.run.as_ref()) {
            for (tag, _) in run.tags() {
                if nav.shows(tag) && !tags.contains(tag) {
                    tags.insert(tag.to_owned());
                }
            }
        }
        tags.into_iter().collect()
    }

    /// The frame's model: the runs, and `count` charts from the `nav.offset`th tag on, each
    /// trace reduced to `dots` dot columns.
    fn model(&self, nav: &Nav, count: usize, dots: usize) -> CurvesModel {
        let tags = self.tags(nav);
        let first = nav.offset.min(tags.len().saturating_sub(1));
        let end = (first + count).min(tags.len());
        let runs: Vec<(usize, &LiveRun, f64)> = self
            .runs
            .iter()
            .enumerate()
            .filter(|(i, _)| nav.is_picked(*i))
            .filter_map(|(i, w)| w.run.as_ref().map(|r| (i, r, newest_wall(r))))
            .collect();
        let waiting = self
            .notice
            .as_ref()
            .map(|e| format!("Waiting for runs: {e}"));
        let skipped = (!self.skipped.is_empty()).then(|| {
            let each: Vec<String> = self
                .skipped
                .iter()
                .map(|(p, why)| format!("{}: {why}", p.display()))
                .collect();
            format!("Skipped: {}", each.join("; "))
        });
        let notice = waiting
            .or_else(|| {
                (tags.is_empty() && !self.runs.is_empty())
                    .then(|| "No scalar yet in the runs picked (or matching the filter)".to_owned())
            })
            .or(skipped);
        CurvesModel {
            title: self.path.display().to_string(),
            runs: self
                .runs
                .iter()
                .map(|w| RunLabel {
                    name: w.name.clone(),
                    error: w.error.clone(),
                    health: w.health.line.clone(),
                })
                .collect(),
            tags: tags.len(),
            first,
            charts: tags[first..end]
                .iter()
                .map(|tag| chart(tag, &runs, dots))
                .collect(),
            notice,
        }
    }

    fn errors(&self) -> impl Iterator<Item = String> + '_ {
        self.runs
            .iter()
            .filter_map(|w| Some(format!("{}: {}", w.name, w.error.as_ref()?)))
    }
}

/// The run's newest wall time: the 2 s mean's window ends there.
fn newest_wall(run: &LiveRun) -> f64 {
    run.tags()
        .map(|(_, s)| s.point(s.len() - 1).wall_time)
        .fold(f64::NEG_INFINITY, f64::max)
}

/// One tag's chart over the picked `runs` (index, run, newest wall time): one step range
/// spanning them all, each one's M4 buckets as dot columns, its newest value and 2 s mean.
fn chart(tag: &str, runs: &[(usize, &LiveRun, f64)], dots: usize) -> Chart {
    let series: Vec<(usize, &Series, f64)> = runs
        .iter()
        .filter_map(|&(i, run, newest)| Some((i, run.series(tag)?, newest)))
        .collect();
    // One x range for every trace: spanning each series' own range, so no point falls outside.
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for (_, s, _) in &series {
        let own = s.downsample(Axis::Step, None, None, 1);
        lo = lo.min(own.start);
        hi = hi.max(own.end);
    }
    let (lo, hi) = if lo <= hi { (lo, hi) } else { (0.0, 0.0) };
    let traces = series
        .iter()
        .map(|&(run, s, _)| Trace {
            run,
            columns: columns(s, lo, hi, dots),
        })
        .collect();
    let values = series
        .iter()
        .map(|&(run, s, newest)| {
            let last = s.point(s.len() - 1);
            RunValue {
                run,
                last: last.value,
                mean_2s: mean_since(s, newest - WINDOW_SECS),
                step: last.step,
            }
        })
        .collect();
    Chart {
        tag: tag.to_owned(),
        steps: (lo as i64, hi as i64),
        traces,
        values,
    }
}

/// `s` over steps `[lo, hi]` as `dots` dot columns: each M4 bucket in the column the reader
/// put it in (the same slot rule as [`Series::downsample`]).
fn columns(s: &Series, lo: f64, hi: f64, dots: usize) -> Vec<Option<Column>> {
    let dots = dots.max(1);
    let d = s.downsample(Axis::Step, Some(lo), Some(hi), dots);
    let span = d.end - d.start;
    let scale = if span > 0.0 { dots as f64 / span } else { 0.0 };
    let mut out = vec![None; dots];
    for b in &d.buckets {
        let slot = (((b.first.step as f64 - d.start) * scale) as usize).min(dots - 1);
        out[slot] = Some(column(b));
    }
    out
}

/// A bucket as the panel draws it.
fn column(b: &Bucket) -> Column {
    let finite = |v: f64| if v.is_finite() { v } else { f64::NAN };
    Column {
        min: b.min.map_or(f64::NAN, |p| p.value),
        max: b.max.map_or(f64::NAN, |p| p.value),
        first: finite(b.first.value),
        last: finite(b.last.value),
        nan: b.nonfinite.iter().any(|p| p.value.is_nan()),
        pos_inf: b.nonfinite.iter().any(|p| p.value == f64::INFINITY),
        neg_inf: b.nonfinite.iter().any(|p| p.value == f64::NEG_INFINITY),
    }
}

/// The mean of `s`'s newest points whose wall time is `since` or later (read back from the
/// newest; events come in wall-time order), `None` when there is none.
fn mean_since(s: &Series, since: f64) -> Option<f64> {
    let (mut sum, mut n) = (0.0, 0u64);
    for i in (0..s.len()).rev() {
        let p = s.point(i);
        if p.wall_time < since {
            break;
        }
        sum += p.value;
        n += 1;
    }
    (n > 0).then(|| sum / n as f64)
}

/// Why the live view ended.
enum End {
    /// `q`, `Esc` or Ctrl-C.
    Done,
    /// SIGINT or SIGTERM.
    Interrupted,
    /// SIGHUP.
    HungUp,
    /// The terminal's input ended or a write to it failed.
    TerminalGone(std::io::Error),
}

/// `tally watch --curves`: the live view until `q`, or one frame off a terminal.
pub fn main(c: &CurvesConfig) -> Result<Exit, CliError> {
    if !c.path.exists() {
        return Err(CliError::Refused(format!(
            "{}: no such run directory, folder of runs or event file",
            c.path.display()
        )));
    }
    // Signals first: the first read of large runs heeds them.
    let stop = crate::interrupt::interrupt_flag();
    let hup = hangup_flag();
    let mut runs = Runs::new(&c.path);
    runs.refresh();
    let env = TermEnv::detect();
    let glyphs = Glyphs::detect();
    if env.output(c.panel) == Output::Live {
        match Screen::open() {
            Ok(mut screen) => {
                let end = live(&mut runs, &mut screen, glyphs, env.color(), stop, &hup);
                let closed = screen.close();
                drop(screen);
                let mut stderr = std::io::stderr();
                return match end {
                    End::Done => {
                        if let Err(e) = closed {
                            let _ = writeln!(stderr, "tally: panel: {e}");
                        }
                        Ok(Exit::Success)
                    }
                    End::Interrupted => Ok(Exit::Interrupted),
                    End::HungUp => {
                        let _ = writeln!(
                            stderr,
                            "tally watch: the terminal hung up (SIGHUP); stopped"
                        );
                        Ok(Exit::Success)
                    }
                    End::TerminalGone(e) => {
                        let _ =
                            writeln!(stderr, "tally watch: the terminal went away ({e}); stopped");
                        Ok(Exit::Success)
                    }
                };
            }
            Err(e) => {
                if c.panel == tally_tui::Mode::On {
                    crate::stderr::line(format!(
                        "tally: cannot drive the terminal ({e}); printing the curves once"
                    ));
                }
            }
        }
    }
    plain(&runs, glyphs)
}

/// One frame as plain text on stdout, every tag's chart; the runs that could not be read on
/// stderr (exit 1: what was printed is not every run).
fn plain(runs: &Runs, glyphs: Glyphs) -> Result<Exit, CliError> {
    if let Some(notice) = &runs.notice {
        return Err(CliError::Refused(notice.clone()));
    }
    let width = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<u16>().ok())
        .filter(|w| *w >= 40)
        .unwrap_or(PLAIN_WIDTH);
    let nav = Nav::new(runs.runs.len());
    let model = runs.model(&nav, usize::MAX, dot_columns(width, glyphs));
    let mut out = std::io::stdout().lock();
    out.write_all(plain_text(&model, &nav, glyphs, width).as_bytes())?;
    out.flush()?;
    let errors: Vec<String> = runs.errors().collect();
    if errors.is_empty() {
        return Ok(Exit::Success);
    }
    Err(CliError::Refused(errors.join("\n")))
}

/// The live view's loop: keys, reading on (200 ms, backing off to 1 s while nothing comes, as
/// `watch` polls), drawing when something changed.
fn live(
    runs: &mut Runs,
    screen: &mut Screen,
    glyphs: Glyphs,
    color: bool,
    stop: &std::sync::atomic::AtomicBool,
    hup: &std::sync::atomic::AtomicBool,
) -> End {
    let mut nav = Nav::new(runs.runs.len());
    let mut wait = POLL;
    let mut next_poll = Instant::now() + wait;
    let mut dirty = true;
    let mut size = screen.size();
    loop {
        // A hang-up also sets the interrupt flag: look at it first.
        if hup.load(Ordering::SeqCst) {
            return End::HungUp;
        }
        if stop.load(Ordering::SeqCst) {
            return End::Interrupted;
        }
        let keys = match screen.keys() {
            Ok(keys) => keys,
            Err(e) => return End::TerminalGone(e),
        };
        if !keys.is_empty() {
            let tags = runs.tags(&nav).len();
            for key in keys {
                match nav.key(key, tags) {
                    Action::Quit => return End::Done,
                    Action::Redraw => dirty = true,
                    Action::None => {}
                }
            }
        }
        if Instant::now() >= next_poll {
            if runs.refresh() {
                nav.grow(runs.runs.len());
                wait = POLL;
                dirty = true;
            } else {
                wait = (wait * 2).min(MAX_POLL);
            }
            next_poll = Instant::now() + wait;
        }
        let now = screen.size();
        if now != size {
            size = now;
            dirty = true;
        }
        if dirty {
            dirty = false;
            let (width, height) = size;
            let dots = dot_columns(width, glyphs);
            let frame = runs.model(&nav, 0, dots);
            let fit = CurvesView {
                model: &frame,
                nav: &nav,
                glyphs,
                color,
                live: true,
            }
            .charts_fitting(width, height);
            nav.offset = nav.offset.min(frame.tags.saturating_sub(1));
            let model = runs.model(&nav, fit, dots);
            let view = CurvesView {
                model: &model,
                nav: &nav,
                glyphs,
                color,
                live: true,
            };
            if let Err(e) = screen.draw(&view) {
                return End::TerminalGone(e);
            }
        }
        std::thread::sleep(TICK);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tally_tui::curves::view::dot_columns as dots_at;

    #[test]
    fn a_spike_in_a_million_points_reaches_its_dot_column_through_the_readers_buckets() {
        let mut s = Series::new();
        for i in 0..1_000_000i64 {
            let v = match i {
                777_777 => 1.0,
                500_000 => f64::NAN,
                _ => 0.0,
            };
            s.push(i, 1000.0 + i as f64 * 1e-3, v);
        }
        let dots = dots_at(80, Glyphs::UNICODE);
        let cols = columns(&s, 0.0, 999_999.0, dots);
        let spike = (777_777.0 * dots as f64 / 999_999.0) as usize;
        assert_eq!(cols[spike].unwrap().max, 1.0);
        assert!(cols.iter().flatten().filter(|c| c.max == 1.0).count() == 1);
        let nan = (500_000.0 * dots as f64 / 999_999.0) as usize;
        assert!(cols[nan].unwrap().nan);
        // The newest 2 s: the points from wall time 1997.999 on, all 0.
        assert_eq!(mean_since(&s, 1999.999 - 2.0), Some(0.0));
        assert_eq!(mean_since(&s, 3000.0), None);
    }
}
