//! The runs under the board's paths: listed again at most once a second, each run's row of the
//! runs table read again only when its files changed, and the series of the runs a chart asks
//! for held and read on as they grow (`docs/contract/board.md` "Live runs").
//!
//! Every cost is bounded by a constant below: how often a look happens, how long it reads, how
//! many runs it reads at once, and the bytes of points held for charts, all runs together. A
//! first read of a run's series stops between events when its asker is gone, and the next
//! request reads on from there.

use crate::error::Error;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};
use tally_read::columns::{resolve_inputs, run_name, ReadOptions};
use tally_read::live::LiveRun;
use tally_read::runs::{runs_table_of, RunRow};
use tally_read::summaries::RunSummaries;
use tally_read::RunDir;
use tally_tfevents::Damage;

/// How often the paths are listed again, and a held run's files looked at again.
pub const LOOK_EVERY: Duration = Duration::from_secs(1);

/// The bytes of points held in memory for charts, all runs together; past it the run used
/// longest ago is let go (and read again if asked for again). A point takes 12 bytes when its
/// run's steps are regular and its values float32 (most runs), 24 at most.
pub const HELD_BYTES: usize = 1 << 30;

/// A run holding more than this share of [`HELD_BYTES`] lets go of its points and holds
/// per-block summaries instead, reading points back from its files when a chart needs them
/// (`docs/contract/board.md` "Bounded reads"): so one run, however large, holds a bounded part
/// of the budget.
pub const RUN_SHARE: usize = 4;

/// The rows of growing runs are read again after a pause of this many times the last reading's
/// duration, so following many growing runs takes about 1/ROW_SHARE of a core for the table (a
/// chart's series are followed on their own, from where they stopped).
pub const ROW_SHARE: u32 = 100;

/// Runs whose rows are read together (in parallel): the memory a listing holds is a batch's
/// points, not the whole logdir's.
pub const READ_BATCH: usize = 64;

/// A look reads rows for at most this long (whole batches, at least one): the runs left are
/// listed as being read and read at the next look, which the page asks for at once. So a
/// logdir of thousands of runs answers its first request in a fraction of a second, and a chart
/// never waits for the whole table.
pub const LOOK_BUDGET: Duration = Duration::from_millis(250);

/// A run's files and their lengths: when it differs, the run's row is read again.
type Signature = Vec<(PathBuf, u64)>;

/// One run of the table.
pub struct Entry {
    /// The run's directory.
    pub dir: PathBuf,
    /// The row (every tag's figures), or why the run could not be read; `None` while the run
    /// waits to be read ([`LOOK_BUDGET`]).
    pub row: Option<Result<RunRow, String>>,
    /// What its reader read past (a truncated tail, skipped records, steps going back).
    pub damage: Vec<Damage>,
    /// The newest modification time of its files.
    pub written: Option<SystemTime>,
    /// Whether its files grew while the board watched them.
    pub grew: bool,
    /// The catalog's generation when the row last changed.
    pub changed: u64,
    files: Signature,
    /// Its files unchanged since, its row cannot come to hold a new stall ([`may_stall`]).
    settled: bool,
}

/// What the runs table is now.
#[derive(Default)]
pub struct Table {
    /// Each run by name (relative to the paths' common directory).
    pub runs: BTreeMap<String, Entry>,
    /// Bumped whenever a row changes or a run comes or goes.
    pub generation: u64,
    /// Why no run could be listed (e.g. no event file yet), shown instead of the table; or what
    /// the listing skipped, shown above it.
    pub notice: Option<String>,
    /// Runs listed but not read yet.
    pub pending: usize,
    listed_at: Option<Instant>,
    /// When the rows of runs that grew may be read again ([`ROW_SHARE`]).
    rows_due: Option<Instant>,
}

/// Something read from a run, and when its files were last looked at.
type Looked<T> = (Arc<Mutex<T>>, Instant);

struct Held {
    run: Arc<Mutex<LiveRun>>,
    looked_at: Instant,
    used_at: Instant,
}

/// The board's view of its paths.
pub struct Catalog {
    inputs: Vec<PathBuf>,
    table: Mutex<Table>,
    held: Mutex<HashMap<String, Held>>,
    look_budget: Duration,
    /// The bytes a run holds before it lets go of its points ([`RUN_SHARE`]).
    run_bytes: usize,
    opened: AtomicU64,
    /// Runs' text, images and histograms, by name, read when first asked for.
    summaries: Mutex<HashMap<String, Looked<RunSummaries>>>,
}

impl Catalog {
    /// A catalog of the runs of `inputs`, listed at the first look.
    pub fn new(inputs: Vec<PathBuf>) -> Self {
        Catalog {
            inputs,
            table: Mutex::new(Table::default()),
            held: Mutex::new(HashMap::new()),
            look_budget: LOOK_BUDGET,
            run_bytes: HELD_BYTES / RUN_SHARE,
            opened: AtomicU64::new(0),
            summaries: Mutex::new(HashMap::new()),
        }
    }

    /// The same catalog with another [`LOOK_BUDGET`] (zero: one batch of rows per look).
    pub fn with_look_budget(mut self, budget: Duration) -> Self {
        self.look_budget = budget;
        self
    }

    /// The same catalog with another share of [`HELD_BYTES`] a run holds before it lets go of
    /// its points (a test's large run, small).
    pub fn with_run_bytes(mut self, bytes: usize) -> Self {
        self.run_bytes = bytes;
        self
    }

    /// The paths the board shows.
    pub fn inputs(&self) -> &[PathBuf] {
        &self.inputs
    }

    /// The table, listed and read again first when the last look is older than [`LOOK_EVERY`]
    /// or left runs to read.
    pub fn table(&self) -> MutexGuard<'_, Table> {
        let mut table = lock(&self.table);
        if table.pending > 0 || table.listed_at.is_none_or(|t| t.elapsed() >= LOOK_EVERY) {
            self.look(&mut table);
            table.listed_at = Some(Instant::now());
        }
        table
    }

    /// Lists the paths' runs and reads the rows of the runs new or changed since the last look.
    fn look(&self, table: &mut Table) {
        let mut skipped = Vec::new();
        let (root, runs) = match resolve_inputs(&self.inputs, &mut skipped) {
            Ok(found) => found,
            Err(message) => {
                if table.notice.as_deref() != Some(&message) || !table.runs.is_empty() {
                    table.runs.clear();
                    table.notice = Some(message);
                    table.generation += 1;
                }
                return;
            }
        };
        // What the listing skipped is said above the runs listed (docs/contract/untrusted-input.md
        // "Special files").
        table.notice = (!skipped.is_empty()).then(|| {
            let each: Vec<String> = skipped
                .iter()
                .map(|(p, why)| format!("{}: {why}", p.display()))
                .collect();
            format!("Skipped: {}", each.join("; "))
        });
        let mut seen: BTreeMap<String, (RunDir, Signature, Option<SystemTime>)> = BTreeMap::new();
        for (dir, files) in runs {
            let (signature, written) = signature(&files);
            seen.insert(run_name(&root, &dir), ((dir, files), signature, written));
        }
        let before = table.runs.len();
        table.runs.retain(|name, _| seen.contains_key(name));
        let mut changed = table.runs.len() != before;
        let mut to_read = Vec::new();
        let rows_due = table.rows_due.is_none_or(|t| Instant::now() >= t);
        for (name, (run, signature, written)) in seen {
            match table.runs.get_mut(&name) {
                // Unchanged: read again only while its end may still turn into a stall.
                Some(e) if e.row.is_some() && e.files == signature => {
                    if rows_due && may_stall(e) {
                        to_read.push((name, run, signature, written));
                    }
                }
                // A run that grew: its row when due, its last write (the state) now.
                Some(e) if e.row.is_some() && !rows_due => e.written = written,
                _ => to_read.push((name, run, signature, written)),
            }
        }
        let started = Instant::now();
        let generation = table.generation + 1;
        changed |= !to_read.is_empty();
        // A batch at a time: the points of a batch are held while its rows are made.
        let mut read_any = false;
        while !to_read.is_empty() {
            if read_any && started.elapsed() >= self.look_budget {
                break;
            }
            let rest = to_read.split_off(to_read.len().min(READ_BATCH));
            for (name, entry) in read_rows(&root, std::mem::replace(&mut to_read, rest), generation)
            {
                let grew = table
                    .runs
                    .get(&name)
                    .is_some_and(|e| e.row.is_some() && (e.grew || e.files != entry.files));
                table.runs.insert(name, Entry { grew, ..entry });
            }
            read_any = true;
        }
        // What the budget left waits for the next look; a run that grew keeps its old row.
        for (name, (dir, _), files, written) in to_read {
            table.runs.entry(name).or_insert(Entry {
                dir,
                row: None,
                damage: Vec::new(),
                written,
                grew: false,
                changed: generation,
                files,
                settled: false,
            });
        }
        table.pending = table.runs.values().filter(|e| e.row.is_none()).count();
        if changed {
            table.generation += 1;
        }
        table.rows_due = Some(Instant::now() + started.elapsed() * ROW_SHARE);
    }

    /// The directory of run `name`: from the table once it was read, else from a listing alone,
    /// so the first chart does not wait for the first table's every row.
    pub fn dir_of(&self, name: &str) -> Option<PathBuf> {
        let table = lock(&self.table);
        if table.listed_at.is_some() {
            return table.runs.get(name).map(|e| e.dir.clone());
        }
        drop(table);
        let (root, runs) = resolve_inputs(&self.inputs, &mut tally_read::Quiet).ok()?;
        runs.into_iter()
            .map(|(dir, _)| dir)
            .find(|dir| run_name(&root, dir) == name)
    }

    /// The held series of run `name` (read now if not held, read on if its last look is older
    /// than [`LOOK_EVERY`] or its last read was stopped); `None` when the table has no such
    /// run. A run is read once however many requests ask for it at once: the first holds it
    /// while it reads, the others wait. `wanted` is asked every few thousand events: a read no
    /// one waits for any more (the page went away) stops, keeps what it read and says
    /// [`Error::NotWanted`]; the next request reads on from there.
    pub fn live(
        &self,
        name: &str,
        wanted: &dyn Fn() -> bool,
    ) -> Result<Option<Arc<Mutex<LiveRun>>>, Error> {
        let Some(dir) = self.dir_of(name) else {
            return Ok(None);
        };
        let mut held = lock(&self.held);
        let now = Instant::now();
        let (run, due, new) = match held.get_mut(name) {
            Some(h) => {
                h.used_at = now;
                let due = h.looked_at.elapsed() >= LOOK_EVERY;
                if due {
                    h.looked_at = now;
                }
                (h.run.clone(), due, false)
            }
            None => {
                let mut run = LiveRun::unread_own(&dir);
                run.hold_points_up_to(self.run_bytes);
                let run = Arc::new(Mutex::new(run));
                let held_run = Held {
                    run: run.clone(),
                    looked_at: now,
                    used_at: now,
                };
                held.insert(name.to_owned(), held_run);
                self.opened.fetch_add(1, Ordering::Relaxed);
                (run, true, true)
            }
        };
        let mut reading = if new {
            // Taken before the table is let go, so a request arriving meanwhile waits for this
            // read instead of starting its own.
            let reading = lock(&run);
            drop(held);
            reading
        } else {
            // Another request may be reading it: wait for that without holding the table.
            drop(held);
            lock(&run)
        };
        if due || !reading.caught_up() {
            match reading.refresh_while(wanted) {
                Ok(Some(_)) => {}
                Ok(None) => return Err(Error::NotWanted(name.to_owned())),
                Err(e) => {
                    // Not held half read: the next request reads it again, and says why it cannot.
                    drop(reading);
                    lock(&self.held).remove(name);
                    return Err(e.into());
                }
            }
        }
        drop(reading);
        let_go_past_budget(&mut lock(&self.held), name);
        Ok(Some(run))
    }

    /// How many times a run's series were read from their start (a test's view of the board's
    /// work).
    pub fn runs_opened(&self) -> u64 {
        self.opened.load(Ordering::Relaxed)
    }

    /// Run `name`'s text, images and histograms (read now if not held, read on if its last
    /// look is older than [`LOOK_EVERY`]); `None` when there is no such run.
    pub fn summaries(&self, name: &str) -> Result<Option<Arc<Mutex<RunSummaries>>>, Error> {
        let Some(dir) = self.dir_of(name) else {
            return Ok(None);
        };
        let mut all = lock(&self.summaries);
        if let Some((run, looked_at)) = all.get_mut(name) {
            let run = run.clone();
            if looked_at.elapsed() >= LOOK_EVERY {
                *looked_at = Instant::now();
                drop(all);
                lock(&run).refresh()?;
            }
            return Ok(Some(run));
        }
        drop(all);
        let run = Arc::new(Mutex::new(RunSummaries::open(&dir)?));
        lock(&self.summaries).insert(name.to_owned(), (run.clone(), Instant::now()));
        Ok(Some(run))
    }
}

/// Lets go of the runs used longest ago until the held points fit [`HELD_BYTES`] (never
/// `keep`, the run just asked for).
fn let_go_past_budget(held: &mut HashMap<String, Held>, keep: &str) {
    loop {
        // A run being read counts as nothing yet: waiting for its read would stall every request.
        let total: usize = held
            .values()
            .filter_map(|h| h.run.try_lock().ok().map(|r| r.bytes()))
            .sum();
        if total <= HELD_BYTES {
            return;
        }
        let oldest = held
            .iter()
            .filter(|(name, _)| name.as_str() != keep)
            .min_by_key(|(_, h)| h.used_at)
            .map(|(name, _)| name.clone());
        match oldest {
            Some(name) => {
                held.remove(&name);
            }
            None => return,
        }
    }
}

/// Whether the row of a run unchanged since it was read may now hold a stall it did not: the
/// run is still being written, as `tally health` judges it, and its row has no stall at its last
/// step (docs/contract/health.md "In the board"). A run found ended, or stalled, stays so until
/// its files change (a writer cannot come back without writing), so it is not asked again.
fn may_stall(e: &mut Entry) -> bool {
    let Some(Ok(row)) = &e.row else {
        return false;
    };
    if e.settled {
        return false;
    }
    let stalled =
        row.health.iter().flatten().any(|f| {
            f.rule == tally::health::RuleKind::Stall && Some(f.last_step) == row.last_step
        });
    let ended = row.status.as_deref().is_some_and(|s| s != "running");
    e.settled = stalled || ended || !tally_read::health::is_live(&e.dir);
    !e.settled
}

/// Reads the rows of `runs` (each with its name, files, signature and newest write).
fn read_rows(
    root: &Path,
    runs: Vec<(String, RunDir, Signature, Option<SystemTime>)>,
    generation: u64,
) -> Vec<(String, Entry)> {
    let dirs: Vec<RunDir> = runs.iter().map(|(_, run, _, _)| run.clone()).collect();
    // A damaged run shows what precedes the damage, the damage named (board.md "The runs table").
    let opts = ReadOptions {
        strict: false,
        skip_unreadable: true,
        readable_part: true,
    };
    let every_tag = ["*".to_owned()];
    let (mut rows, damage, mut skipped) =
        match runs_table_of(root.to_owned(), dirs, &every_tag, opts) {
            Ok(t) => (t.rows, t.damage, t.skipped),
            Err(e) => {
                let message = e.to_string();
                let all = runs
                    .iter()
                    .map(|(_, (d, _), _, _)| (d.clone(), message.clone()));
                (Vec::new(), Vec::new(), all.collect())
            }
        };
    let mut out = Vec::with_capacity(runs.len());
    for (name, (dir, _), files, written) in runs {
        let row = Some(match rows.iter().position(|r| r.dir == dir) {
            Some(i) => Ok(rows.swap_remove(i)),
            None => match skipped.iter().position(|(d, _)| *d == dir) {
                Some(i) => Err(skipped.swap_remove(i).1),
                // A run whose files hold no scalar yet: a row all the same.
                None => {
                    RunRow::without_scalars(name.clone(), dir.clone()).map_err(|e| e.to_string())
                }
            },
        });
        let damage = damage
            .iter()
            .filter(|d| d.path().and_then(Path::parent) == Some(dir.as_path()))
            .cloned()
            .collect();
        let row = row.map(|row| {
            row.map(|mut r| {
                r.name = name.clone();
                r
            })
        });
        out.push((
            name,
            Entry {
                dir,
                row,
                damage,
                written,
                grew: false,
                changed: generation,
                files,
                settled: false,
            },
        ));
    }
    out
}

/// Each file's length, and the newest modification time among them.
fn signature(files: &[PathBuf]) -> (Signature, Option<SystemTime>) {
    let mut written = None;
    let signature = files
        .iter()
        .map(|f| {
            let meta = std::fs::metadata(f).ok();
            let modified = meta.as_ref().and_then(|m| m.modified().ok());
            written = written.max(modified);
            (f.clone(), meta.map_or(0, |m| m.len()))
        })
        .collect();
    (signature, written)
}

/// A lock, taken even if a thread panicked holding it (the data is re-read, never half
/// written by the board).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
