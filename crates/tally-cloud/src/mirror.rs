//! A local mirror of a URL's prefix (docs/contract/object-storage.md "The mirror"): each
//! [`Mirror::sync`] lists the prefix once (one request per 1 000 objects) and GETs only the
//! objects readers read that are new or changed: a grown event file its new tail (a ranged GET
//! that also brings the 64 bytes before it, checked against the copy's end), anything else
//! whole, written beside its place and renamed in. Objects gone from the store are removed.
//!
//! Where things are, under the cache directory ([`cache_root`]):
//! `tree/<scheme>/<bucket>/<prefix>/...` the copies (so several URLs of one bucket share a
//! common root, and runs are named as they would be on local disk); `state/<url>.json` the size
//! and ETag each copy was taken at; `locks/<scheme>-<bucket>` held while a poll writes.

use crate::error::{Error, Result};
use crate::store::{connect, Remote};
use futures::StreamExt;
use object_store::path::Path;
use object_store::{GetOptions, GetRange, ObjectMeta, ObjectStore, ObjectStoreExt};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Seek, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// Objects a LIST request returns at most (S3's, GCS's and Azure's page size).
pub const LIST_PAGE: usize = 1000;
/// GETs in flight at once.
pub const CONCURRENT_GETS: usize = 16;
/// Bytes before a grown event file's old end fetched with its tail and compared with the copy:
/// an object rewritten rather than appended to is then fetched whole.
const TAIL_CHECK: u64 = 64;

/// The files a reader reads: event files and the two JSON artefacts
/// (docs/contract/consumers.md "A run's event files"); checkpoints and media are left in the store.
pub fn wanted(name: &str) -> bool {
    tally_tfevents::is_event_file_name(name)
        || name == "run_config.json"
        || name == "run_summary.json"
}

/// The cache directory: `$TALLY_CACHE_DIR`, else `$XDG_CACHE_HOME/tally/remote`, else
/// `~/.cache/tally/remote`, else the temporary directory's `tally-remote`.
pub fn cache_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("TALLY_CACHE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("tally").join("remote");
    }
    if let Some(home) = std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(home)
            .join(".cache")
            .join("tally")
            .join("remote");
    }
    std::env::temp_dir().join("tally-remote")
}

/// What one poll did: its requests, and what changed in the copy.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Synced {
    /// Objects the listing returned (every name, read or not).
    pub listed: usize,
    /// LIST requests: one per [`LIST_PAGE`] objects, at least one.
    pub list_requests: usize,
    /// HEAD requests (a URL naming one object, when the listing below it is empty).
    pub head_requests: usize,
    /// Objects fetched whole (new, rewritten, or a tail whose check failed).
    pub whole: usize,
    /// Grown event files of which only the tail was fetched.
    pub tails: usize,
    /// Copies removed because their object is gone.
    pub removed: usize,
    /// Bytes received.
    pub bytes: u64,
    /// Keys not mirrored, each with why.
    pub skipped: Vec<(String, String)>,
}

impl Synced {
    /// GET requests made.
    pub fn gets(&self) -> usize {
        self.whole + self.tails
    }

    /// Whether the copy changed.
    pub fn changed(&self) -> bool {
        self.whole + self.tails + self.removed > 0
    }
}

/// The size and ETag a copy was taken at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Held {
    size: u64,
    etag: Option<String>,
}

/// What the cache knows of one URL.
#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    url: String,
    /// Keys relative to the prefix (`run/events.out.tfevents...`).
    objects: BTreeMap<String, Held>,
}

/// A URL's local copy (module doc).
#[derive(Debug)]
pub struct Mirror {
    remote: Remote,
    tree: PathBuf,
    state_file: PathBuf,
    lock_file: PathBuf,
    /// The URL names one object (not a prefix): its file name, `tree` its copy.
    single: Option<String>,
    runtime: tokio::runtime::Runtime,
}

/// A path component made safe: `/`, NUL and the names `.`, `..` and `` cannot be one.
fn component(text: &str) -> String {
    let s: String = text
        .chars()
        .map(|c| {
            if c == '/' || c == '\\' || c == '\0' {
                '_'
            } else {
                c
            }
        })
        .collect();
    if s.is_empty() || s == "." || s == ".." {
        "_".into()
    } else {
        s
    }
}

/// FNV-1a of `text`: a stable name for a URL's state file.
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl Mirror {
    /// The mirror of `url` in the cache directory, its client configured from the environment;
    /// nothing is fetched before [`Mirror::sync`].
    pub fn open(url: &str) -> Result<Mirror> {
        let remote = connect(url)?;
        let parsed = url::Url::parse(&remote.url).map_err(|e| Error::Url {
            url: url.to_owned(),
            reason: e.to_string(),
        })?;
        let authority = &parsed[url::Position::BeforeUsername..url::Position::AfterPort];
        Mirror::with_remote(remote, &cache_root(), parsed.scheme(), authority)
    }

    /// The mirror of `remote` under `cache`, the copies under `tree/<scheme>/<bucket>/<prefix>`:
    /// how tests and benchmarks hand in a store of their own.
    pub fn with_remote(
        remote: Remote,
        cache: &std::path::Path,
        scheme: &str,
        bucket: &str,
    ) -> Result<Mirror> {
        let mut tree = cache
            .join("tree")
            .join(component(scheme))
            .join(component(bucket));
        for part in remote.prefix.parts() {
            tree.push(component(part.as_ref()));
        }
        let readable: String = remote
            .url
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .take(80)
            .collect();
        let state_file = cache
            .join("state")
            .join(format!("{readable}-{:016x}.json", fnv(&remote.url)));
        let lock_file =
            cache
                .join("locks")
                .join(format!("{}-{}", component(scheme), component(bucket)));
        // The copy's own directory is made at the first poll: the URL may name one object,
        // whose copy is a file there.
        let parent = tree.parent().unwrap_or(cache).to_owned();
        for dir in [&parent, &cache.join("state"), &cache.join("locks")] {
            std::fs::create_dir_all(dir)
                .map_err(Error::local("create the mirror directory", dir))?;
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(Error::local("start the I/O runtime", cache))?;
        Ok(Mirror {
            remote,
            tree,
            state_file,
            lock_file,
            single: None,
            runtime,
        })
    }

    /// The URL mirrored.
    pub fn url(&self) -> &str {
        &self.remote.url
    }

    /// The local path standing for the URL: the prefix's directory, or the one object's file.
    pub fn local_path(&self) -> PathBuf {
        // For one object, `tree` is the object's own path (its prefix's parts end in its name).
        self.tree.clone()
    }

    /// The state the last poll (of any process) left, or none for another URL's file.
    fn load_state(&self) -> State {
        std::fs::read(&self.state_file)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<State>(&bytes).ok())
            .filter(|s| s.url == self.remote.url)
            .unwrap_or_else(|| State {
                url: self.remote.url.clone(),
                objects: BTreeMap::new(),
            })
    }

    fn save_state(&self, state: &State) -> Result<()> {
        let tmp = self.state_file.with_extension("json.part");
        let text = serde_json::to_vec(state).expect("a state serialises");
        std::fs::write(&tmp, text).map_err(Error::local("write the mirror's state", &tmp))?;
        std::fs::rename(&tmp, &self.state_file)
            .map_err(Error::local("write the mirror's state", &self.state_file))
    }

    /// One poll (module doc): what it asked the store and what changed. A GET that fails
    /// leaves that copy as it was (retried next poll) and is the error, after the others are
    /// applied.
    pub fn sync(&mut self) -> Result<Synced> {
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&self.lock_file)
            .map_err(Error::local("open the mirror's lock", &self.lock_file))?;
        lock.lock()
            .map_err(Error::local("lock the mirror", &self.lock_file))?;
        let mut state = self.load_state();
        let mut done = Synced::default();
        let remote = self.remote.clone();
        let (listing, single) = self.runtime.block_on(list(&remote, &mut done))?;
        self.single = single;
        if self.single.is_none() {
            std::fs::create_dir_all(&self.tree)
                .map_err(Error::local("create the mirror directory", &self.tree))?;
        }
        let base = if self.single.is_some() {
            self.tree
                .parent()
                .map(PathBuf::from)
                .unwrap_or_else(|| self.tree.clone())
        } else {
            self.tree.clone()
        };
        let mut seen = BTreeSet::new();
        let mut jobs = Vec::new();
        for meta in listing {
            let parts: Vec<String> = if self.single.is_some() {
                self.single.iter().cloned().collect()
            } else {
                match meta.location.prefix_match(&remote.prefix) {
                    Some(parts) => parts.map(|p| p.as_ref().to_owned()).collect(),
                    None => continue,
                }
            };
            let Some(name) = parts.last() else { continue };
            if !wanted(name) {
                continue;
            }
            if let Some(bad) = parts.iter().find(|p| component(p) != **p) {
                done.skipped.push((
                    meta.location.to_string(),
                    format!("the name part {bad:?} cannot be a local file name"),
                ));
                continue;
            }
            let rel = parts.join("/");
            let local = parts.iter().fold(base.clone(), |p, part| p.join(part));
            seen.insert(rel.clone());
            let have = std::fs::metadata(&local)
                .ok()
                .filter(|m| m.is_file())
                .map(|m| m.len());
            let fetch = match state.objects.get(&rel) {
                Some(h) if have == Some(h.size) && h.size == meta.size && h.etag == meta.e_tag => {
                    continue
                }
                Some(h)
                    if have == Some(h.size)
                        && h.size > 0
                        && meta.size > h.size
                        && tally_tfevents::is_event_file_name(name) =>
                {
                    Some(h.size)
                }
                _ => None,
            };
            jobs.push(Job {
                rel,
                location: meta.location.clone(),
                local,
                size: meta.size,
                tail_from: fetch,
            });
        }
        let results: Vec<(String, Result<Fetched>)> = self.runtime.block_on(
            futures::stream::iter(jobs)
                .map(|job| {
                    let remote = &remote;
                    async move { (job.rel.clone(), fetch(remote, &job).await) }
                })
                .buffer_unordered(CONCURRENT_GETS)
                .collect(),
        );
        let mut first_error = None;
        for (rel, result) in results {
            match result {
                Ok(f) => {
                    done.whole += f.whole;
                    done.tails += f.tail;
                    done.bytes += f.bytes;
                    state.objects.insert(rel, f.held);
                }
                Err(e) => {
                    state.objects.remove(&rel);
                    first_error.get_or_insert(e);
                }
            }
        }
        let gone: Vec<String> = state
            .objects
            .keys()
            .filter(|k| !seen.contains(*k))
            .cloned()
            .collect();
        for rel in gone {
            state.objects.remove(&rel);
            let local = rel.split('/').fold(base.clone(), |p, part| p.join(part));
            if std::fs::remove_file(&local).is_ok() {
                done.removed += 1;
            }
        }
        self.save_state(&state)?;
        drop(lock);
        match first_error {
            Some(e) => Err(e),
            None => Ok(done),
        }
    }
}

/// One object to fetch: whole, or its tail from `tail_from`.
struct Job {
    rel: String,
    location: Path,
    local: PathBuf,
    size: u64,
    tail_from: Option<u64>,
}

/// What fetching one object did.
struct Fetched {
    held: Held,
    whole: usize,
    tail: usize,
    bytes: u64,
}

/// The prefix's objects (and, for a URL naming one object, that object and its name).
async fn list(remote: &Remote, done: &mut Synced) -> Result<(Vec<ObjectMeta>, Option<String>)> {
    let prefix = (!remote.prefix.as_ref().is_empty()).then_some(&remote.prefix);
    let mut stream = remote.store.list(prefix);
    let mut found = Vec::new();
    while let Some(item) = stream.next().await {
        found.push(item.map_err(|e| Error::store(&remote.url, "listing", &e))?);
    }
    done.listed = found.len();
    done.list_requests = found.len().div_ceil(LIST_PAGE).max(1);
    let Some(name) = remote
        .prefix
        .filename()
        .filter(|n| found.is_empty() && wanted(n))
    else {
        return Ok((found, None));
    };
    done.head_requests += 1;
    match remote.store.head(&remote.prefix).await {
        Ok(meta) => Ok((vec![meta], Some(name.to_owned()))),
        Err(object_store::Error::NotFound { .. }) => Ok((found, None)),
        Err(e) => Err(Error::store(&remote.url, "looking the object up", &e)),
    }
}

/// Temporary names in the mirror, never an event file's or an artefact's.
static PART: AtomicU64 = AtomicU64::new(0);

async fn fetch(remote: &Remote, job: &Job) -> Result<Fetched> {
    if let Some(from) = job.tail_from {
        if let Some(done) = tail(remote, job, from).await? {
            return Ok(done);
        }
        let mut whole = whole(remote, job).await?;
        whole.tail = 1;
        return Ok(whole);
    }
    whole(remote, job).await
}

/// The URL of an object, for messages.
fn object_url(remote: &Remote, location: &Path) -> String {
    let key = location.as_ref();
    let prefix = remote.prefix.as_ref();
    match key.strip_prefix(prefix) {
        Some(rest) if !prefix.is_empty() => format!("{}{rest}", remote.url),
        _ => format!("{}/{}", remote.url, key.rsplit('/').next().unwrap_or(key)),
    }
}

async fn get(
    remote: &Remote,
    job: &Job,
    range: Option<std::ops::Range<u64>>,
) -> Result<object_store::GetResult> {
    let options = GetOptions {
        range: range.map(GetRange::Bounded),
        ..GetOptions::default()
    };
    remote
        .store
        .get_opts(&job.location, options)
        .await
        .map_err(|e| Error::store(&object_url(remote, &job.location), "reading", &e))
}

/// The object whole, written beside its copy and renamed over it.
async fn whole(remote: &Remote, job: &Job) -> Result<Fetched> {
    let got = get(remote, job, None).await?;
    let etag = got.meta.e_tag.clone();
    let dir = job.local.parent().expect("a copy has a directory");
    std::fs::create_dir_all(dir).map_err(Error::local("create the mirror directory", dir))?;
    let tmp = dir.join(format!(
        ".tally-part-{}-{}",
        std::process::id(),
        PART.fetch_add(1, Ordering::Relaxed)
    ));
    let written = async {
        let mut file =
            std::fs::File::create(&tmp).map_err(Error::local("write the mirror", &tmp))?;
        let mut stream = got.into_stream();
        let mut n = 0u64;
        while let Some(chunk) = stream.next().await {
            let chunk = chunk
                .map_err(|e| Error::store(&object_url(remote, &job.location), "reading", &e))?;
            file.write_all(&chunk)
                .map_err(Error::local("write the mirror", &tmp))?;
            n += chunk.len() as u64;
        }
        std::fs::rename(&tmp, &job.local).map_err(Error::local("write the mirror", &job.local))?;
        Ok(n)
    }
    .await;
    let n = written.inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })?;
    Ok(Fetched {
        held: Held { size: n, etag },
        whole: 1,
        tail: 0,
        bytes: n,
    })
}

/// A grown event file's new bytes appended to its copy, when the bytes before them match the
/// copy's end; `None` when they do not (the object was rewritten: fetch it whole). Appended in
/// place, not renamed, so a follower holding the file open (`tally watch`) reads on.
async fn tail(remote: &Remote, job: &Job, from: u64) -> Result<Option<Fetched>> {
    let check = from.min(TAIL_CHECK);
    let got = get(remote, job, Some(from - check..job.size)).await?;
    let etag = got.meta.e_tag.clone();
    let mut ours = vec![0u8; check as usize];
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .open(&job.local)
        .map_err(Error::local("open the mirror's copy", &job.local))?;
    file.seek(std::io::SeekFrom::Start(from - check))
        .and_then(|_| file.read_exact(&mut ours))
        .map_err(Error::local("read the mirror's copy", &job.local))?;
    let mut stream = got.into_stream();
    let mut head = Vec::with_capacity(check as usize);
    let mut received = 0u64;
    let mut appended = 0u64;
    while let Some(chunk) = stream.next().await {
        let chunk =
            chunk.map_err(|e| Error::store(&object_url(remote, &job.location), "reading", &e))?;
        received += chunk.len() as u64;
        let mut rest = &chunk[..];
        if head.len() < check as usize {
            let take = rest.len().min(check as usize - head.len());
            head.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if head.len() == check as usize && head != ours {
                return Ok(None);
            }
        }
        if !rest.is_empty() {
            file.write_all(rest)
                .map_err(Error::local("write the mirror", &job.local))?;
            appended += rest.len() as u64;
        }
    }
    if head.len() < check as usize {
        return Ok(None);
    }
    Ok(Some(Fetched {
        held: Held {
            size: from + appended,
            etag,
        },
        whole: 0,
        tail: 1,
        bytes: received,
    }))
}
