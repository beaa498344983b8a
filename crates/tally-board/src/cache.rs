//! Expensive answers kept until their runs change (`docs/contract/board.md` "The API"):
//! `/api/groups` (every run's configuration and series, seconds on a large logdir) and
//! `/api/run` (a run's health and diagnosis read from its files), each by its request and a
//! fingerprint of the runs it reads, as the catalog's last listing saw them.
//!
//! One request computes an answer; the same request arriving meanwhile waits for it.

use crate::catalog::{lock, Catalog};
use crate::query::Target;
use hyper::body::Bytes;
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The bytes of answers kept, all requests together; past it the one used longest ago goes.
pub const CACHE_BYTES: usize = 64 << 20;

/// A run's view holds health findings that age with the clock (a stall), so it is computed
/// again this long after, its files changed or not.
pub const RUN_VIEW_AGE: Duration = Duration::from_secs(10);

/// A computed answer: status, content type and body.
pub type Computed = (u16, &'static str, Bytes);

/// An answer kept, with its gzip made once when first asked for.
pub struct Kept {
    /// The status (only 200 is kept).
    pub status: u16,
    /// Its `Content-Type`.
    pub content_type: &'static str,
    /// The body.
    pub body: Bytes,
    gzip: OnceLock<Bytes>,
}

impl Kept {
    /// The body gzipped (or as it is when gzip gains nothing).
    pub fn gzipped(&self) -> Bytes {
        self.gzip
            .get_or_init(|| crate::gzip::compress(self.content_type, self.body.clone()))
            .clone()
    }
}

struct Slot {
    fingerprint: u64,
    made: Instant,
    used: Instant,
    answer: Option<Arc<Kept>>,
}

/// The kept answers, by request.
#[derive(Default)]
pub struct Cache {
    slots: Mutex<HashMap<String, Arc<Mutex<Slot>>>>,
}

impl Cache {
    /// The answer to `target`: kept, computed by `compute` and kept, or (`Err`) computed and
    /// not kept (a route not kept, an answer other than 200). The flag says it was kept
    /// already.
    pub fn answer(
        &self,
        catalog: &Catalog,
        target: &Target,
        compute: impl FnOnce() -> Computed,
    ) -> Result<(Arc<Kept>, bool), Computed> {
        let Some((key, fingerprint, max_age)) = key(catalog, target) else {
            return Err(compute());
        };
        let slot = lock(&self.slots)
            .entry(key)
            .or_insert_with(|| {
                Arc::new(Mutex::new(Slot {
                    fingerprint,
                    made: Instant::now(),
                    used: Instant::now(),
                    answer: None,
                }))
            })
            .clone();
        // Held while computing: the same request waits for this one's answer.
        let mut slot = lock(&slot);
        slot.used = Instant::now();
        if let Some(kept) = &slot.answer {
            let fresh = max_age.is_none_or(|age| slot.made.elapsed() < age);
            if slot.fingerprint == fingerprint && fresh {
                return Ok((kept.clone(), true));
            }
        }
        slot.answer = None;
        let (status, content_type, body) = compute();
        if status != 200 {
            return Err((status, content_type, body));
        }
        let kept = Arc::new(Kept {
            status,
            content_type,
            body,
            gzip: OnceLock::new(),
        });
        slot.fingerprint = fingerprint;
        slot.made = Instant::now();
        slot.answer = Some(kept.clone());
        drop(slot);
        self.trim();
        Ok((kept, false))
    }

    /// Lets go of the answers used longest ago until the rest fit [`CACHE_BYTES`] (a slot
    /// being computed is left alone).
    fn trim(&self) {
        let mut slots = lock(&self.slots);
        loop {
            let mut total = 0;
            let mut oldest: Option<(Instant, String)> = None;
            for (key, slot) in slots.iter() {
                let Ok(slot) = slot.try_lock() else { continue };
                let bytes = slot
                    .answer
                    .as_ref()
                    .map_or(0, |k| k.body.len() + k.gzip.get().map_or(0, Bytes::len));
                total += bytes;
                if oldest.as_ref().is_none_or(|(used, _)| slot.used < *used) {
                    oldest = Some((slot.used, key.clone()));
                }
            }
            match oldest {
                Some((_, key)) if total > CACHE_BYTES => {
                    slots.remove(&key);
                }
                _ => return,
            }
        }
    }
}

/// The request's key, its runs' fingerprint and how long its answer may be kept, for a route
/// whose answers are kept.
fn key(catalog: &Catalog, target: &Target) -> Option<(String, u64, Option<Duration>)> {
    if !matches!(target.path.as_str(), "/api/groups" | "/api/run") {
        return None;
    }
    let mut params: Vec<(&String, &String)> = target
        .params
        .iter()
        .filter(|(k, _)| k.as_str() != "token")
        .collect();
    params.sort();
    let key = format!("{}?{params:?}", target.path);
    let mut hash = DefaultHasher::new();
    let table = catalog.table();
    if target.path == "/api/groups" {
        // Every run's configuration and series: a run coming, going or written to changes it.
        table.generation.hash(&mut hash);
        for (name, e) in &table.runs {
            (name, e.written, e.changed).hash(&mut hash);
        }
        return Some((key, hash.finish(), None));
    }
    // One run: its event files, and its summary and configuration files.
    let e = table.runs.get(target.get("run")?)?;
    (e.written, e.changed).hash(&mut hash);
    for file in ["run_summary.json", "run_config.json"] {
        let meta = std::fs::metadata(e.dir.join(file)).ok();
        meta.map(|m| (m.len(), m.modified().ok())).hash(&mut hash);
    }
    Some((key, hash.finish(), Some(RUN_VIEW_AGE)))
}
