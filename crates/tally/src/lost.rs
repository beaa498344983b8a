//! Which logged steps never reached the event file: runs of lost iterations, so `close` can
//! name them (docs/contract/run-artifacts.md "Storage faults").

/// Most runs of lost iterations named; later losses are only counted.
pub const LOST_RUNS_NAMED: usize = 32;

/// A run of lost steps with nothing persisted between them: first and last iteration, count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LostRun {
    /// The first lost iteration.
    pub first: u64,
    /// The last lost iteration.
    pub last: u64,
    /// How many steps the run holds.
    pub count: u64,
}

/// The lost steps of one sink, in bounded memory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LostSteps {
    runs: Vec<LostRun>,
    /// Steps lost past [`LOST_RUNS_NAMED`] runs.
    unnamed: u64,
    /// Persisted steps when the last run grew: a run grows only while nothing is persisted.
    persisted_at: u64,
}

impl LostSteps {
    /// Count `iteration` lost, `persisted` steps being in the file now.
    pub fn add(&mut self, iteration: u64, persisted: u64) {
        self.add_run(iteration, iteration, 1, persisted);
    }

    /// Count `count` steps from `first` to `last` lost at once.
    pub fn add_run(&mut self, first: u64, last: u64, count: u64, persisted: u64) {
        if count == 0 {
            return;
        }
        let grows = persisted == self.persisted_at;
        self.persisted_at = persisted;
        let full = self.runs.len() >= LOST_RUNS_NAMED;
        match self.runs.last_mut() {
            Some(run) if grows && first > run.last => {
                run.last = last;
                run.count += count;
            }
            _ if full => self.unnamed += count,
            _ => self.runs.push(LostRun { first, last, count }),
        }
    }

    /// Every lost step.
    pub fn total(&self) -> u64 {
        self.runs.iter().map(|r| r.count).sum::<u64>() + self.unnamed
    }

    /// The first lost iteration.
    pub fn first(&self) -> Option<u64> {
        self.runs.iter().map(|r| r.first).min()
    }

    /// The lost iterations in words, in order: `iterations 51–200`, `iterations 3, 7–9`,
    /// with `and N more` past the runs named.
    pub fn describe(&self) -> String {
        let mut runs = self.runs.clone();
        runs.sort_by_key(|r| r.first);
        // Runs from different moments that touch (a backlog lost at close just before the
        // steps lost past its cap) read as one.
        let mut merged: Vec<LostRun> = Vec::new();
        for r in runs {
            match merged.last_mut() {
                Some(m) if r.first == m.last + 1 => {
                    m.last = r.last;
                    m.count += r.count;
                }
                _ => merged.push(r),
            }
        }
        let named: Vec<String> = merged
            .iter()
            .map(|r| match r.first == r.last {
                true => r.first.to_string(),
                false => format!("{}–{}", r.first, r.last),
            })
            .collect();
        let word = match self.total() {
            1 => "iteration",
            _ => "iterations",
        };
        let mut text = format!("{word} {}", named.join(", "));
        if self.unnamed > 0 {
            text += &format!(" and {} more", self.unnamed);
        }
        text
    }
}
