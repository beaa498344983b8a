//! The dataset's export state, `DIR/_tally/state.json`: per run, the directory it was read
//! from, the tag rule its rows were exported under, each event file's reading position with a
//! fingerprint of its head, and the runs-table figures so far; what an export compares the
//! files with to add only what is new (`docs/contract/consumers.md` "A Parquet dataset").

use crate::error::Error;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The state file's format version.
const VERSION: u32 = 1;

/// Bytes at the head of an event file its fingerprint covers: its first records (a writer's
/// `file_version` event, dated), so a file written anew under the same name is told apart.
const HEAD_BYTES: u64 = 4096;

/// Every run exported into the dataset, by name.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct State {
    version: u32,
    pub(super) runs: BTreeMap<String, RunState>,
}

/// What the tag rule of an export was: rows exported under another rule are not the rows it
/// would export.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct RuleKey {
    /// `--tags`.
    pub(super) tags: Vec<String>,
    /// The legacy migration's profile (`--migrate-legacy`), if any.
    pub(super) migrate: Option<String>,
}

/// One run's export so far.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct RunState {
    /// The run's directory (canonical).
    pub(super) dir: PathBuf,
    pub(super) rule: RuleKey,
    /// Its event files in run order, each read up to a record boundary.
    pub(super) files: Vec<FileState>,
    /// Rows in its scalars partition.
    pub(super) rows: u64,
    /// The runs table's figures, over every scalar read (whatever the tag rule kept).
    pub(super) figures: Figures,
    /// `run_summary.json`'s status, and the configuration flattened, at the last export.
    pub(super) status: Option<String>,
    pub(super) config: Vec<(String, Value)>,
}

/// The runs table's figures of a run (`crate::runs::RunRow`), gathered as its scalars are read.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(super) struct Figures {
    pub(super) points: u64,
    pub(super) first_wall: Option<f64>,
    pub(super) last_wall: Option<f64>,
    pub(super) last_step: Option<i64>,
}

impl Figures {
    pub(super) fn add(&mut self, step: i64, wall: f64) {
        self.points += 1;
        self.first_wall = Some(self.first_wall.map_or(wall, |w| w.min(wall)));
        self.last_wall = Some(self.last_wall.map_or(wall, |w| w.max(wall)));
        self.last_step = Some(self.last_step.map_or(step, |s| s.max(step)));
    }
}

/// One event file of a run, as far as it was read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct FileState {
    pub(super) path: PathBuf,
    /// The byte its reading stopped at: the end of its last complete record.
    pub(super) read_to: u64,
    /// The largest step kept from it (purge markers applied).
    pub(super) max_step: Option<i64>,
    pub(super) head: Head,
}

/// A fingerprint of a file's first `len` bytes (FNV-1a, 64 bits, in hex).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Head {
    pub(super) len: u64,
    pub(super) hash: String,
}

impl Head {
    /// The fingerprint of `path`'s head, as far as `read_to` reaches (at most [`HEAD_BYTES`]).
    pub(super) fn of(path: &Path, read_to: u64) -> Result<Head, Error> {
        Self::of_len(path, read_to.min(HEAD_BYTES))
    }

    /// The fingerprint of `path`'s first `len` bytes (fewer when the file is shorter).
    pub(super) fn of_len(path: &Path, len: u64) -> Result<Head, Error> {
        let io = |source| Error::Io {
            path: path.to_owned(),
            source,
        };
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .map_err(io)?
            .take(len)
            .read_to_end(&mut bytes)
            .map_err(io)?;
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for &b in &bytes {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        Ok(Head {
            len: bytes.len() as u64,
            hash: format!("{h:016x}"),
        })
    }
}

impl State {
    /// The state in `path`; empty when there is none yet (a new dataset).
    pub(super) fn load(path: &Path) -> Result<State, Error> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(State {
                    version: VERSION,
                    runs: BTreeMap::new(),
                })
            }
            Err(source) => {
                return Err(Error::Io {
                    path: path.to_owned(),
                    source,
                })
            }
        };
        let state: State = serde_json::from_str(&text).map_err(|source| Error::Json {
            path: path.to_owned(),
            source,
        })?;
        if state.version != VERSION {
            return Err(Error::Refused(format!(
                "{}: export state version {} (this tally writes version {VERSION}): export \
                 into a new directory",
                path.display(),
                state.version
            )));
        }
        Ok(state)
    }

    /// Writes the state to `path` whole or not at all: a temporary file beside it, renamed.
    pub(super) fn save(&self, path: &Path) -> Result<(), Error> {
        let io = |p: &Path| {
            let p = p.to_owned();
            move |source| Error::Io { path: p, source }
        };
        let tmp = path.with_file_name(".state.json.tmp");
        let text = serde_json::to_string_pretty(self).map_err(|source| Error::Json {
            path: path.to_owned(),
            source,
        })?;
        std::fs::write(&tmp, text).map_err(io(&tmp))?;
        std::fs::rename(&tmp, path).map_err(io(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_round_trips_and_another_version_is_refused_naming_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("state.json");
        let mut state = State::load(&path).unwrap();
        assert!(state.runs.is_empty());
        let file = tmp.path().join("events.out.tfevents.1.h");
        std::fs::write(&file, b"0123456789").unwrap();
        let mut figures = Figures::default();
        figures.add(3, 10.5);
        figures.add(1, f64::NAN);
        state.runs.insert(
            "a/b c".into(),
            RunState {
                dir: tmp.path().to_owned(),
                rule: RuleKey {
                    tags: vec!["x/*".into()],
                    migrate: None,
                },
                files: vec![FileState {
                    path: file.clone(),
                    read_to: 10,
                    max_step: Some(3),
                    head: Head::of(&file, 10).unwrap(),
                }],
                rows: 2,
                figures,
                status: Some("running".into()),
                config: vec![("config.lr".into(), serde_json::json!(0.1))],
            },
        );
        state.save(&path).unwrap();
        let back = State::load(&path).unwrap();
        let run = &back.runs["a/b c"];
        assert_eq!(run.files, state.runs["a/b c"].files);
        assert_eq!((run.figures.points, run.figures.last_step), (2, Some(3)));
        assert_eq!(run.files[0].head.len, 10);
        std::fs::write(&path, r#"{"version": 99, "runs": {}}"#).unwrap();
        let err = State::load(&path).unwrap_err().to_string();
        assert!(err.contains("state.json") && err.contains("99"), "{err}");
    }

    #[test]
    fn a_head_tells_a_rewritten_file_from_a_grown_one() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("f");
        std::fs::write(&file, b"abcdef").unwrap();
        let before = Head::of(&file, 6).unwrap();
        std::fs::write(&file, b"abcdefghij").unwrap();
        assert_eq!(Head::of_len(&file, before.len).unwrap(), before);
        std::fs::write(&file, b"abcxefghij").unwrap();
        assert_ne!(Head::of_len(&file, before.len).unwrap(), before);
    }
}
