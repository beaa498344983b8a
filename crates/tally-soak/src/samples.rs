//! The samples a soak keeps: every sample feeds the peaks, but the artifact holds a bounded,
//! evenly thinned series (the first and the last always), so an overnight soak stays an
//! artifact `tally validate` reads (`docs/contract/manifest-and-soak.md` "The soak monitor").

use tally_schema::artifacts::SoakSample;

/// What the kept samples may cost: one unit per sample and one per process record in it
/// (a process record is about half a kilobyte of indented JSON, so ~8 MiB at most).
pub const MAX_UNITS: usize = 16_384;

/// Peaks over every sample taken.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Peaks {
    /// Largest process-tree size.
    pub process_count: u64,
    /// Largest resident set of one process.
    pub process_rss_kib: u64,
    /// Largest GPU memory of one compute process.
    pub gpu_used_memory_mib: u64,
    /// Largest eventfd count of the tree in one sample.
    pub eventfd_count: u64,
    /// Largest `/dev/shm` descriptor count of the tree in one sample.
    pub shared_memory_fd_count: u64,
    /// Largest progress size.
    pub progress_bytes: u64,
}

impl Peaks {
    fn update(&mut self, s: &SoakSample) {
        let up = |slot: &mut u64, v: u64| *slot = (*slot).max(v);
        up(&mut self.process_count, s.process.len() as u64);
        up(
            &mut self.process_rss_kib,
            s.process.iter().map(|p| p.rss_kib).max().unwrap_or(0),
        );
        up(
            &mut self.gpu_used_memory_mib,
            s.gpu.iter().map(|g| g.used_memory_mib).max().unwrap_or(0),
        );
        up(
            &mut self.eventfd_count,
            s.process.iter().map(|p| p.fd_classes.eventfd).sum(),
        );
        up(
            &mut self.shared_memory_fd_count,
            s.process.iter().map(|p| p.fd_classes.shared_memory).sum(),
        );
        up(&mut self.progress_bytes, s.progress.bytes_total);
    }
}

fn cost(s: &SoakSample) -> usize {
    1 + s.process.len()
}

/// The samples of one soak.
#[derive(Debug)]
pub struct SampleLog {
    max_units: usize,
    /// Kept samples with their number (from 0).
    kept: Vec<(u64, SoakSample)>,
    units: usize,
    /// Every `stride`-th sample is kept.
    stride: u64,
    taken: u64,
    /// The newest sample when it is off the stride (kept at the end).
    last: Option<SoakSample>,
    peaks: Peaks,
}

impl SampleLog {
    /// A log whose kept samples cost at most `max_units` (but always the first and last).
    pub fn new(max_units: usize) -> SampleLog {
        SampleLog {
            max_units,
            kept: Vec::new(),
            units: 0,
            stride: 1,
            taken: 0,
            last: None,
            peaks: Peaks::default(),
        }
    }

    /// Add the next sample.
    pub fn push(&mut self, s: SoakSample) {
        self.peaks.update(&s);
        let n = self.taken;
        self.taken += 1;
        if !n.is_multiple_of(self.stride) {
            self.last = Some(s);
            return;
        }
        self.last = None;
        self.units += cost(&s);
        self.kept.push((n, s));
        // Double the stride until the kept samples fit; sample 0 is always on it.
        while self.units > self.max_units && self.kept.len() > 1 {
            self.stride *= 2;
            let stride = self.stride;
            self.kept.retain(|(i, _)| i % stride == 0);
            self.units = self.kept.iter().map(|(_, s)| cost(s)).sum();
        }
    }

    /// Samples taken.
    pub fn taken(&self) -> u64 {
        self.taken
    }

    /// Every how many samples one is kept.
    pub fn stride(&self) -> u64 {
        self.stride
    }

    /// Peaks over every sample taken.
    pub fn peaks(&self) -> Peaks {
        self.peaks
    }

    /// The kept samples in order, the newest one included.
    pub fn into_samples(self) -> Vec<SoakSample> {
        let mut out: Vec<SoakSample> = self.kept.into_iter().map(|(_, s)| s).collect();
        out.extend(self.last);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Map;
    use tally_schema::artifacts::SoakProgressSample;

    fn sample(i: u64) -> SoakSample {
        SoakSample {
            elapsed_s: i as f64,
            process: Vec::new(),
            gpu: Vec::new(),
            progress: SoakProgressSample {
                count: 1,
                bytes_total: if i == 5 { 1000 } else { i },
                max_mtime: None,
                extra: Map::new(),
            },
            extra: Map::new(),
        }
    }

    fn elapsed(log: SampleLog) -> Vec<u64> {
        log.into_samples()
            .iter()
            .map(|s| s.elapsed_s as u64)
            .collect()
    }

    #[test]
    fn everything_is_kept_under_the_budget() {
        let mut log = SampleLog::new(100);
        (0..10).for_each(|i| log.push(sample(i)));
        assert_eq!((log.taken(), log.stride()), (10, 1));
        assert_eq!(elapsed(log), (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn over_the_budget_the_series_thins_evenly_keeping_first_last_and_peaks() {
        let mut log = SampleLog::new(4);
        (0..11).for_each(|i| log.push(sample(i)));
        assert_eq!((log.taken(), log.stride()), (11, 4));
        // The peak of a dropped sample survives in the peaks.
        assert_eq!(log.peaks().progress_bytes, 1000);
        assert_eq!(elapsed(log), vec![0, 4, 8, 10]);
        let mut log = SampleLog::new(4);
        (0..9).for_each(|i| log.push(sample(i)));
        assert_eq!(elapsed(log), vec![0, 4, 8]);
    }
}
