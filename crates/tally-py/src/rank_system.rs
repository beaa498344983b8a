//! `tally._tally._RankSampler`: a rank other than 0 samples its own process, machine and GPUs
//! on a thread of its own, and `tally.distributed` packs the newest sample into the ranks'
//! one collective (docs/contract/system-metrics.md "Ranks").

use crate::errors::Failure;
use pyo3::prelude::*;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tally::system::{gpu::Devices, ranks, Deliver, Sample, Sampler};

/// The newest sample not yet packed.
type Newest = Arc<Mutex<Option<Sample>>>;

/// Keeps only the newest sample: the collective carries one per interval.
struct KeepNewest(Newest);

impl Deliver for KeepNewest {
    fn sample(&mut self, sample: Sample) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(sample);
    }

    /// Silent: rank 0 says once why its own run has no GPU tags.
    fn note(&mut self, _text: &str) {}
}

fn now_wall() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// A rank's sampler: every `interval` seconds, this process, this machine (free space under
/// the working directory) and the GPUs `gpus` names (NVML indices or UUIDs).
#[pyclass(module = "tally._tally", name = "_RankSampler")]
pub struct RankSampler {
    newest: Newest,
    sampler: Mutex<Option<Sampler>>,
}

#[pymethods]
impl RankSampler {
    #[new]
    fn new(interval: f64, gpus: Vec<String>) -> PyResult<Self> {
        tally::system::check_interval("system_interval", interval).map_err(Failure::Config)?;
        let newest = Newest::default();
        let dir = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let sampler = Sampler::spawn(
            Duration::from_secs_f64(interval),
            dir,
            Devices::Only(gpus),
            Box::new(now_wall),
            Box::new(KeepNewest(newest.clone())),
        )
        .map_err(|e| Failure::Config(format!("cannot start the system metrics thread: {e}")))?;
        Ok(RankSampler {
            newest,
            sampler: Mutex::new(Some(sampler)),
        })
    }

    /// This rank's block for the collective (`RANK_SYSTEM_SLOTS` floats, NaN where absent),
    /// from the newest sample, each sample packed once.
    fn block(&self) -> Vec<f64> {
        let taken = self.newest.lock().unwrap_or_else(|e| e.into_inner()).take();
        ranks::encode(taken.as_ref().map(|s| s.values.as_slice())).to_vec()
    }

    /// Stop sampling (waits for at most the sample being taken).
    fn close(&self, py: Python<'_>) {
        let taken = self
            .sampler
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(mut s) = taken {
            py.detach(|| s.stop());
        }
    }
}

/// Add the class and the block's size.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<RankSampler>()?;
    m.add("RANK_SYSTEM_SLOTS", ranks::SLOTS)?;
    Ok(())
}
