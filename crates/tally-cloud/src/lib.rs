//! Runs in object storage (docs/contract/object-storage.md): a URL (`s3://`, `gs://`, `az://`,
//! `http(s)://`) stands for the directory of runs below its prefix. [`Mirror`] keeps a local
//! copy of the objects readers read (event files, `run_config.json`, `run_summary.json`) in a
//! cache directory, each poll one LIST of the prefix and one GET per new or changed object (a
//! grown event file: its new tail only); every reader then reads the mirror as a directory.
//! [`resolve()`] is what a front end calls for each path argument, [`Poller`] keeps a mirror
//! polled for `watch` and `board`, and [`store::connect`] builds the client from the
//! environment the user's cloud tools use. Writing: [`Uploader`] puts a run's staging directory
//! to its URL from a thread of its own, [`SegmentedEventFile`] writes the event file as segments.
//! [`counting`] counts the requests a poll makes, for the tests and the benchmark.

pub mod counting;
pub mod error;
pub mod mirror;
pub mod poller;
pub mod resolve;
pub mod segments;
pub mod store;
pub mod upload;

pub use error::{Error, Result};
pub use mirror::{Mirror, Synced};
pub use poller::Poller;
pub use resolve::{resolve, shown, Resolved};
pub use segments::{Roll, SegmentedEventFile};
pub use upload::Uploader;
