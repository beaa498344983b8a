//! Columnar reads: every scalar of event files as Arrow-ready columns (what `tally.read`
//! returns).
//!
//! A directory's event files are one run, read as `tally extract` reads a run
//! ([`crate::files`]: ordered by first wall time then name, steps continuing across files),
//! runs in parallel. Files are CRC-checked; a truncated final record is the end
//! of data and is reported back (`damage`) for the Python layer to warn about; a corrupt record
//! is an error naming the file and byte offset (`docs/contract/consumers.md` "What readers
//! report").
//! The result is chunks of contiguous columns (`step`, `wall_time`, `value`, and the int32
//! codes of `run` and `tag`; a large run's rows are a chunk as its reading thread built them,
//! never copied into one array) plus the run and tag dictionaries in Arrow's string layout (int32 offsets
//! and UTF-8 bytes): plain vectors a binding hands over as they are (the Python package wraps
//! each in place with `pyarrow.foreign_buffer`), so nothing is copied.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::files::{runs_under, RunDir};
use crate::observer::Observer;
use crate::parallel::each_run;
use crate::scalars::RunScalars;
use tally_schema::legacy::glob_match;
use tally_tfevents::open::special_kind;
use tally_tfevents::{events_in_parallel, Damage, Interner, OnCorruption, WireScalars};

/// Distinct strings in first-seen order, laid out as an Arrow `string` array.
pub struct Dictionary {
    /// Start of each string in `bytes`, then the end of the last: `len() + 1` entries.
    pub offsets: Vec<i32>,
    /// The strings' UTF-8 bytes, back to back.
    pub bytes: Vec<u8>,
}

impl Dictionary {
    fn new() -> Self {
        Dictionary {
            offsets: vec![0],
            bytes: Vec::new(),
        }
    }

    /// How many strings.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Whether there is no string.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The string of `code` (empty for a code out of range).
    pub fn get(&self, code: usize) -> &str {
        let (Some(&a), Some(&b)) = (self.offsets.get(code), self.offsets.get(code + 1)) else {
            return "";
        };
        std::str::from_utf8(&self.bytes[a as usize..b as usize]).unwrap_or("")
    }

    /// Appends `s` and returns its code.
    fn push(&mut self, s: &str, what: &str) -> Result<i32, String> {
        self.bytes.extend_from_slice(s.as_bytes());
        let end = i32::try_from(self.bytes.len())
            .map_err(|_| format!("more than 2 GiB of distinct {what} names"))?;
        self.offsets.push(end);
        Ok((self.len() - 1) as i32)
    }
}

/// Rows of one or more consecutive runs, with codes into the global dictionaries: one Arrow
/// record batch. A large run is its own chunk (or one per thread that read it), moved here
/// without a copy; small runs are gathered into chunks of at least `SMALL_CHUNK` rows.
#[derive(Default)]
pub struct Chunk {
    /// Each row's run code.
    pub run_codes: Vec<i32>,
    /// Each row's tag code.
    pub tag_codes: Vec<i32>,
    /// Each row's step.
    pub step: Vec<i64>,
    /// Each row's wall time.
    pub wall_time: Vec<f64>,
    /// Each row's value.
    pub value: Vec<f64>,
}

impl Chunk {
    /// How many rows.
    pub fn rows(&self) -> usize {
        self.step.len()
    }
}

/// Below this many rows a part is copied into the chunk before it rather than kept as a chunk
/// of its own: a thousand small runs should not be a thousand Arrow chunks.
const SMALL_CHUNK: usize = 64 << 10;

/// Everything read, before it is handed to Python: one row per kept scalar, in chunks.
pub struct Columns {
    /// The directory run names are relative to.
    pub root: PathBuf,
    /// Run names, by code.
    pub runs: Dictionary,
    /// Each run's absolute directory, by code.
    pub run_dirs: Vec<PathBuf>,
    /// Tag names, by code.
    pub tags: Dictionary,
    /// The rows in order, at least one chunk (empty when no row was kept).
    pub chunks: Vec<Chunk>,
    /// What the reader read past: truncated tails, skipped records, steps going back, purges.
    pub damage: Vec<Damage>,
    /// What was not read, each path with why: what the listing skipped ([`resolve_inputs`]),
    /// then the runs not read under [`ReadOptions::skip_unreadable`].
    pub skipped: Vec<(PathBuf, String)>,
}

/// How [`read_all`] takes what it meets (`docs/contract/consumers.md` "A run's event files").
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadOptions {
    /// Refuse a run whose steps go back across its files (else kept and reported).
    pub strict: bool,
    /// Report a run that cannot be read in [`Columns::skipped`] and read the others (else the
    /// first such run's error is the result).
    pub skip_unreadable: bool,
    /// Read the readable part of a damaged run instead of failing it (the board's runs table,
    /// `docs/contract/board.md` "The runs table"): a corrupt record is skipped and a file whose
    /// framing is lost ends at it, each reported as damage ([`RunScalars::readable_part`]).
    pub readable_part: bool,
}

impl Columns {
    /// How many rows in all.
    pub fn rows(&self) -> usize {
        self.chunks.iter().map(Chunk::rows).sum()
    }
}

/// Which tags to keep, and each kept tag's code, by the reader's tag id
/// ([`tally_tfevents::ScalarRef::tag_id`]): each distinct tag is matched against the globs and
/// entered in the dictionary once, then found by indexing.
struct TagCodes<'a> {
    globs: Option<&'a [String]>,
    /// Each id's code in the dictionary, [`UNSEEN`], or [`DROPPED`] when the globs drop it.
    codes: Vec<i32>,
}

/// An id not seen yet.
const UNSEEN: i32 = -1;
/// A tag the globs drop.
const DROPPED: i32 = -2;

impl<'a> TagCodes<'a> {
    fn new(globs: Option<&'a [String]>) -> Self {
        TagCodes {
            globs,
            codes: Vec::new(),
        }
    }

    /// The code of the tag with reader id `id` (named by `tags`), or `None` when dropped.
    #[inline]
    fn code(
        &mut self,
        id: usize,
        tags: &Interner,
        dict: &mut Dictionary,
    ) -> Result<Option<i32>, String> {
        let code = match self.codes.get(id) {
            Some(&code) if code != UNSEEN => code,
            _ => self.first(id, tags, dict)?,
        };
        Ok((code >= 0).then_some(code))
    }

    #[cold]
    fn first(&mut self, id: usize, tags: &Interner, dict: &mut Dictionary) -> Result<i32, String> {
        let tag = tags
            .name(id)
            .ok_or_else(|| format!("the reader gave tag id {id}, which it never named"))?;
        let keep = self
            .globs
            .is_none_or(|globs| globs.iter().any(|g| glob_match(g, tag)));
        let code = if keep {
            dict.push(tag, "tag")?
        } else {
            DROPPED
        };
        if self.codes.len() <= id {
            self.codes.resize(id + 1, UNSEEN);
        }
        self.codes[id] = code;
        Ok(code)
    }

    /// Appends the kept scalars of one event to `part`: the four columns extended together
    /// when every tag of the event is kept (the usual case), else row by row.
    fn add_event(&mut self, event: &WireScalars, part: &mut RunPart) -> Result<(), String> {
        let scalars = event.scalars();
        let start = part.tag_codes.len();
        let mut all_kept = true;
        for &(id, _) in scalars {
            match self.code(id, event.tags(), &mut part.tags)? {
                Some(code) => part.tag_codes.push(code),
                None => {
                    all_kept = false;
                    break;
                }
            }
        }
        if all_kept {
            let n = scalars.len();
            part.step.extend(std::iter::repeat_n(event.step, n));
            part.wall_time
                .extend(std::iter::repeat_n(event.wall_time, n));
            part.value.extend(scalars.iter().map(|&(_, v)| v));
            return Ok(());
        }
        part.tag_codes.truncate(start);
        for &(id, value) in scalars {
            if let Some(code) = self.code(id, event.tags(), &mut part.tags)? {
                part.push(code, event.step, event.wall_time, value);
            }
        }
        Ok(())
    }
}

fn io_message(path: &Path, e: &std::io::Error) -> String {
    format!("{}: {e}", path.display())
}

/// The deepest directory holding every one of `dirs` (all absolute).
fn common_root(dirs: &[PathBuf]) -> PathBuf {
    let mut root = dirs[0].clone();
    for d in &dirs[1..] {
        while !d.starts_with(&root) {
            if !root.pop() {
                break;
            }
        }
    }
    root
}

/// `dir` relative to `root` with `/` separators; `.` for the root itself.
pub fn run_name(root: &Path, dir: &Path) -> String {
    let rel = dir.strip_prefix(root).unwrap_or(dir);
    let parts: Vec<_> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect();
    if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    }
}

/// The runs named by `inputs`, each a directory and its event files in reading order (a file
/// given is read alone; a directory holds one run per directory with event files), no file
/// twice, and the common root their runs are named against. What the listing skips (special
/// files, links leading nowhere, directories it cannot read: [`crate::files`]) is told to
/// `observer`; a path given that is not a regular file or directory is refused.
pub fn resolve_inputs(
    inputs: &[PathBuf],
    observer: &mut dyn Observer,
) -> Result<(PathBuf, Vec<RunDir>), String> {
    if inputs.is_empty() {
        return Err("no path given".to_owned());
    }
    let mut bases = Vec::new();
    let mut runs = Vec::new();
    for input in inputs {
        let path = input.canonicalize().map_err(|e| io_message(input, &e))?;
        if path.is_dir() {
            let found = runs_under(&path, observer).map_err(|e| e.to_string())?;
            if found.is_empty() {
                return Err(format!(
                    "{}: no events.out.tfevents.* file at or below this directory",
                    input.display()
                ));
            }
            runs.extend(found);
            bases.push(path);
        } else {
            let kind = std::fs::metadata(&path).ok().and_then(|m| special_kind(&m));
            if let Some(kind) = kind {
                return Err(format!(
                    "{}: {kind}, not a regular file: not read",
                    input.display()
                ));
            }
            let dir = path.parent().map(Path::to_owned).unwrap_or_default();
            bases.push(dir.clone());
            runs.push((dir, vec![path]));
        }
    }
    let mut seen = HashSet::new();
    for (_, files) in &mut runs {
        files.retain(|f| seen.insert(f.clone()));
    }
    runs.retain(|(_, files)| !files.is_empty());
    Ok((common_root(&bases), runs))
}

/// Fewer bytes than a scalar takes in the event files writers make (tally: about 30 per scalar,
/// ten to an event; torch and tensorboardX: about 58, one to an event), for reserving columns:
/// a file of shorter scalars only makes a column grow once more.
const MIN_BYTES_PER_SCALAR: u64 = 24;

/// One run's kept rows, with tag codes into its own dictionary (runs are read in parallel,
/// then merged in run order).
struct RunPart {
    tags: Dictionary,
    tag_codes: Vec<i32>,
    step: Vec<i64>,
    wall_time: Vec<f64>,
    value: Vec<f64>,
    damage: Vec<Damage>,
}

impl RunPart {
    fn new() -> Self {
        RunPart {
            tags: Dictionary::new(),
            tag_codes: Vec::new(),
            step: Vec::new(),
            wall_time: Vec::new(),
            value: Vec::new(),
            damage: Vec::new(),
        }
    }

    /// Empty, with room for the rows `bytes` of event files likely hold: growing a column by
    /// doubling copies it (the allocator cannot always move it in place) and touches the old
    /// and new pages. Room reserved and never written costs address space, not memory, and is
    /// given back by [`finish`](Self::finish).
    fn for_bytes(bytes: u64) -> Self {
        let mut part = RunPart::new();
        let rows = usize::try_from(bytes / MIN_BYTES_PER_SCALAR).unwrap_or(0);
        // A refused reservation only means growing as needed.
        let _ = part.tag_codes.try_reserve_exact(rows);
        let _ = part.step.try_reserve_exact(rows);
        let _ = part.wall_time.try_reserve_exact(rows);
        let _ = part.value.try_reserve_exact(rows);
        part
    }

    /// Gives back the room reserved and not used.
    fn finish(mut self) -> Self {
        self.tag_codes.shrink_to_fit();
        self.step.shrink_to_fit();
        self.wall_time.shrink_to_fit();
        self.value.shrink_to_fit();
        self
    }

    fn push(&mut self, tag: i32, step: i64, wall_time: f64, value: f64) {
        self.tag_codes.push(tag);
        self.step.push(step);
        self.wall_time.push(wall_time);
        self.value.push(value);
    }
}

/// The corruption policy of `opts`: a corrupt record is skipped when reading the readable part.
pub(crate) fn policy(opts: ReadOptions) -> OnCorruption {
    if opts.readable_part {
        OnCorruption::Skip
    } else {
        OnCorruption::Error
    }
}

fn read_run(
    files: Vec<PathBuf>,
    globs: Option<&[String]>,
    opts: ReadOptions,
) -> Result<RunPart, String> {
    let bytes = files
        .iter()
        .map(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
        .sum();
    let mut part = RunPart::for_bytes(bytes);
    let mut tag_codes = TagCodes::new(globs);
    let mut scalars = RunScalars::new(files, policy(opts))
        .strict(opts.strict)
        .readable_part(opts.readable_part);
    while scalars
        .advance_event()
        .map_err(|e| e.to_string())?
        .is_some()
    {
        if let Some(event) = scalars.event() {
            tag_codes.add_event(event, &mut part)?;
        }
    }
    part.damage = scalars.take_damage();
    Ok(part.finish())
}

/// Below this, one file is read by one thread: starting threads would cost more than they save.
const PARALLEL_FILE_BYTES: u64 = 8 << 20;

/// A run of one large file, read by one thread per core (`scalars_in_parallel`), as parts of
/// the run in file order; `None` when it is small or reading it needs the sequential reader
/// (damage to report, or any doubt about the record boundaries).
fn one_file_in_parallel(
    files: &[PathBuf],
    globs: Option<&[String]>,
    cores: usize,
) -> Option<Vec<Result<RunPart, String>>> {
    let [file] = files else { return None };
    let size = std::fs::metadata(file).ok()?.len();
    if cores < 2 || size < PARALLEL_FILE_BYTES {
        return None;
    }
    let parts = events_in_parallel(
        file,
        cores,
        |range_bytes| {
            (
                TagCodes::new(globs),
                RunPart::for_bytes(range_bytes),
                None::<String>,
            )
        },
        |(codes, part, error), event| {
            if error.is_none() {
                *error = codes.add_event(event, part).err();
            }
        },
    )?;
    Some(
        parts
            .into_iter()
            .map(|(_, part, error)| match error {
                Some(e) => Err(e),
                None => Ok(part.finish()),
            })
            .collect(),
    )
}

/// A run's directory and what reading it gave.
type RunResult = (PathBuf, Result<RunPart, String>);

/// Reads `runs` in parallel ([`crate::parallel::each_run`]), a large single-file run on every
/// core, handing each part to `take` in run order; `take` returning `false` stops the reading.
fn read_runs_parallel(
    runs: Vec<RunDir>,
    globs: Option<&[String]>,
    opts: ReadOptions,
    mut take: impl FnMut(RunResult) -> bool,
) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // The parallel reader of one file fails a corrupt record: the readable part is read whole.
    if let ([(dir, files)], false) = (runs.as_slice(), opts.readable_part) {
        if let Some(parts) = one_file_in_parallel(files, globs, cores) {
            let dir = dir.clone();
            for part in parts {
                if !take((dir.clone(), part)) {
                    return;
                }
            }
            return;
        }
    }
    let whole = each_run(
        runs,
        |_, files| read_run(files, globs, opts),
        |dir, part| take((dir, part)),
    );
    if !whole {
        take((PathBuf::new(), Err("a reading thread failed".to_owned())));
    }
}

/// Reads every kept scalar of `inputs` (in parallel across runs): the core of `tally.read`,
/// which the fuzz targets also drive. The result is the same as reading the runs one after the
/// other: rows and dictionaries in run order, and the first failing run's error (or, under
/// [`ReadOptions::skip_unreadable`], every failing run in [`Columns::skipped`]).
pub fn read_all(
    inputs: &[PathBuf],
    globs: Option<&[String]>,
    opts: ReadOptions,
) -> Result<Columns, String> {
    let mut skipped = Vec::new();
    let (root, runs) = resolve_inputs(inputs, &mut skipped)?;
    let mut c = read_run_dirs(root, runs, globs, opts)?;
    skipped.append(&mut c.skipped);
    c.skipped = skipped;
    Ok(c)
}

/// [`read_all`] of runs already listed (each a directory and its event files in reading order,
/// as [`resolve_inputs`] lists them), named against `root`: a viewer reading again only the
/// runs that changed (`tally board`).
pub fn read_run_dirs(
    root: PathBuf,
    runs: Vec<RunDir>,
    globs: Option<&[String]>,
    opts: ReadOptions,
) -> Result<Columns, String> {
    let mut c = Columns {
        root,
        runs: Dictionary::new(),
        run_dirs: Vec::new(),
        tags: Dictionary::new(),
        chunks: Vec::new(),
        damage: Vec::new(),
        skipped: Vec::new(),
    };
    let mut tag_map: HashMap<Vec<u8>, i32> = HashMap::new();
    let mut run_map: HashMap<PathBuf, i32> = HashMap::new();
    let mut failed = None;
    read_runs_parallel(runs, globs, opts, |(dir, part)| match part {
        Ok(part) => match merge_part(&mut c, &mut tag_map, &mut run_map, dir, part) {
            Ok(()) => true,
            Err(e) => {
                failed = Some(e);
                false
            }
        },
        Err(e) if opts.skip_unreadable => {
            c.skipped.push((dir, e));
            true
        }
        Err(e) => {
            failed = Some(e);
            false
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    if c.chunks.is_empty() {
        c.chunks.push(Chunk::default());
    }
    Ok(c)
}

/// Adds one run's part to `c`: its run and new tags into the dictionaries, its rows (tag codes
/// made global) into the chunks, its damage to the list.
fn merge_part(
    c: &mut Columns,
    global_tags: &mut HashMap<Vec<u8>, i32>,
    run_of_dir: &mut HashMap<PathBuf, i32>,
    dir: PathBuf,
    mut part: RunPart,
) -> Result<(), String> {
    let damage = std::mem::take(&mut part.damage);
    // A run enters the dictionary with its first kept row, so a run the tag globs empty
    // leaves no unused category behind.
    if !part.step.is_empty() {
        let run_code = match run_of_dir.get(&dir) {
            Some(&code) => code,
            None => {
                let code = c.runs.push(&run_name(&c.root, &dir), "run")?;
                c.run_dirs.push(dir.clone());
                run_of_dir.insert(dir, code);
                code
            }
        };
        let mut remap = Vec::with_capacity(part.tags.len());
        for w in part.tags.offsets.windows(2) {
            let name = &part.tags.bytes[w[0] as usize..w[1] as usize];
            let code = match global_tags.get(name) {
                Some(&code) => code,
                None => {
                    let name = std::str::from_utf8(name).map_err(|e| e.to_string())?;
                    let code = c.tags.push(name, "tag")?;
                    global_tags.insert(name.as_bytes().to_vec(), code);
                    code
                }
            };
            remap.push(code);
        }
        // The usual case (one run, or runs meeting their tags in the same order) needs no pass.
        let identity = remap.iter().enumerate().all(|(i, &c)| c as usize == i);
        if !identity {
            for code in &mut part.tag_codes {
                *code = remap[*code as usize];
            }
        }
        add_part(&mut c.chunks, part, run_code);
    }
    c.damage.extend(damage);
    Ok(())
}

/// Adds a run's rows (tag codes already global) to the chunks: moved in as a chunk of its own,
/// or copied onto the last chunk when both are small.
fn add_part(chunks: &mut Vec<Chunk>, part: RunPart, run_code: i32) {
    let rows = part.step.len();
    if let Some(last) = chunks.last_mut() {
        if rows < SMALL_CHUNK && last.rows() < SMALL_CHUNK {
            last.run_codes.resize(last.rows() + rows, run_code);
            last.tag_codes.extend_from_slice(&part.tag_codes);
            last.step.extend_from_slice(&part.step);
            last.wall_time.extend_from_slice(&part.wall_time);
            last.value.extend_from_slice(&part.value);
            return;
        }
    }
    chunks.push(Chunk {
        run_codes: vec![run_code; rows],
        tag_codes: part.tag_codes,
        step: part.step,
        wall_time: part.wall_time,
        value: part.value,
    });
}
