//! What a front end does with a path argument (docs/contract/object-storage.md "Every front
//! end"): a local path stays as it is; a URL is mirrored (one poll now) and the mirror's local
//! path read in its place. [`shown`] puts the URL back into a message that names the mirror.

use crate::error::{Error, Result};
use crate::mirror::Mirror;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A path argument made local.
#[derive(Debug)]
pub enum Resolved {
    /// A local path, as given.
    Local(PathBuf),
    /// A URL, its mirror polled once.
    Remote(Box<Mirror>),
}

impl Resolved {
    /// The local path to read.
    pub fn path(&self) -> PathBuf {
        match self {
            Resolved::Local(p) => p.clone(),
            Resolved::Remote(m) => m.local_path(),
        }
    }
}

/// Mirror paths and the URLs they stand for, longest first.
static SHOWN: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

/// `path` made local: a URL (`tally::rundir::url_scheme`) mirrored and polled once, a
/// `file://` URL its path, anything else as it is.
pub fn resolve(path: &Path) -> Result<Resolved> {
    let Some(scheme) = tally::rundir::url_scheme(path) else {
        return Ok(Resolved::Local(path.to_owned()));
    };
    let text = path.to_str().unwrap_or_default();
    if scheme.eq_ignore_ascii_case("file") {
        let url = url::Url::parse(text).map_err(|e| Error::Url {
            url: text.to_owned(),
            reason: e.to_string(),
        })?;
        return url
            .to_file_path()
            .map(Resolved::Local)
            .map_err(|()| Error::Url {
                url: text.to_owned(),
                reason: "not a local file URL".into(),
            });
    }
    let mut mirror = Mirror::open(text)?;
    mirror.sync()?;
    let local = mirror.local_path().display().to_string();
    let mut shown = SHOWN.lock().unwrap_or_else(|p| p.into_inner());
    if !shown.iter().any(|(l, _)| *l == local) {
        shown.push((local, mirror.url().to_owned()));
        shown.sort_by_key(|(l, _)| std::cmp::Reverse(l.len()));
    }
    Ok(Resolved::Remote(Box::new(mirror)))
}

/// `text` with every mirror path [`resolve`] handed out replaced by the URL it stands for, so a
/// reader's message names `s3://bkt/run/...`, not the cache.
pub fn shown(text: &str) -> String {
    let shown = SHOWN.lock().unwrap_or_else(|p| p.into_inner());
    let mut out = text.to_owned();
    for (local, url) in shown.iter() {
        if out.contains(local.as_str()) {
            out = out.replace(local.as_str(), url);
        }
    }
    out
}
