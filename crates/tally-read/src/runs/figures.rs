//! One run's row figures, gathered from its scalars in reading order: the one place each figure
//! of the runs table is computed (docs/contract/consumers.md "The runs table").

use super::row::{final_cut, TagStats};

/// Per chosen tag, what the first pass gathers, and the final window's sum from the second.
#[derive(Clone, Default)]
struct Acc {
    count: u64,
    last: f64,
    min: Option<f64>,
    max: Option<f64>,
    max_step: Option<i64>,
    first_step: i64,
    last_step: i64,
    nonfinite: u64,
    /// Order of the tag's first point in the run, for the row's tag order.
    first_row: u64,
    final_sum: f64,
    final_n: u64,
}

/// A run's figures: its own over every point, and each chosen tag's by its slot.
#[derive(Default)]
pub(super) struct Figures {
    pub points: u64,
    pub first_wall: Option<f64>,
    pub last_wall: Option<f64>,
    pub last_step: Option<i64>,
    tags: Vec<Acc>,
    names: Vec<String>,
}

impl Figures {
    /// A slot for the chosen tag `name`, met for the first time.
    pub fn slot(&mut self, name: &str) -> usize {
        self.tags.push(Acc::default());
        self.names.push(name.to_owned());
        self.tags.len() - 1
    }

    /// The slot given to `name`, if it was chosen.
    pub fn slot_of(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// First pass: one point, of the chosen tag in `slot` or of another.
    #[inline]
    pub fn point(&mut self, slot: Option<usize>, step: i64, wall: f64, v: f64) {
        let row = self.points;
        self.points += 1;
        self.first_wall = Some(self.first_wall.map_or(wall, |w| w.min(wall)));
        self.last_wall = Some(self.last_wall.map_or(wall, |w| w.max(wall)));
        self.last_step = Some(self.last_step.map_or(step, |s| s.max(step)));
        let Some(slot) = slot else { return };
        let a = &mut self.tags[slot];
        if a.count == 0 {
            a.first_row = row;
            a.first_step = step;
            a.last_step = step;
        }
        a.count += 1;
        a.last = v;
        a.first_step = a.first_step.min(step);
        a.last_step = a.last_step.max(step);
        if v.is_finite() {
            a.min = Some(a.min.map_or(v, |m| m.min(v)));
            if a.max.is_none_or(|m| v > m) {
                a.max = Some(v);
                a.max_step = Some(step);
            }
        } else {
            a.nonfinite += 1;
        }
    }

    /// Second pass, once every point was seen: a chosen tag's point counts toward its final
    /// mean when its step is in the last [`super::row::FINAL_SHARE`] of the tag's step range and its
    /// value is finite.
    #[inline]
    pub fn final_point(&mut self, slot: usize, step: i64, v: f64) {
        let a = &mut self.tags[slot];
        if step as f64 >= final_cut(a.first_step, a.last_step) && v.is_finite() {
            a.final_sum += v;
            a.final_n += 1;
        }
    }

    /// The final mean of one series given whole, in reading order, by the two passes above: the
    /// runs table's `:final_mean` of a tag with these points (`compare`'s `final` score).
    pub fn final_mean(points: &[(i64, f64)]) -> Option<f64> {
        let mut f = Figures::default();
        let slot = f.slot("");
        for &(step, v) in points {
            f.point(Some(slot), step, 0.0, v);
        }
        for &(step, v) in points {
            f.final_point(slot, step, v);
        }
        f.tag_stats().pop().and_then(|s| s.final_mean)
    }

    /// Whether any chosen tag has a point (the second pass has something to do).
    pub fn any_chosen(&self) -> bool {
        self.tags.iter().any(|a| a.count > 0)
    }

    /// The chosen tags' figures, in the order the run first logged them.
    pub fn tag_stats(&mut self) -> Vec<TagStats> {
        let mut chosen: Vec<(u64, TagStats)> = std::mem::take(&mut self.tags)
            .into_iter()
            .zip(std::mem::take(&mut self.names))
            .filter(|(a, _)| a.count > 0)
            .map(|(a, tag)| {
                let stats = TagStats {
                    tag,
                    count: a.count,
                    last: a.last,
                    min: a.min,
                    max: a.max,
                    max_step: a.max_step,
                    final_mean: (a.final_n > 0).then(|| a.final_sum / a.final_n as f64),
                    last_step: a.last_step,
                    nonfinite: a.nonfinite,
                };
                (a.first_row, stats)
            })
            .collect();
        chosen.sort_by_key(|(first, _)| *first);
        chosen.into_iter().map(|(_, s)| s).collect()
    }
}
