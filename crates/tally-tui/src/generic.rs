//! The generic dashboard's model: what `tally watch` shows for a run another tool wrote
//! (tensorboardX, torch, stable-baselines3), which has no schema to lay it out by
//! (`docs/contract/panel.md` "The generic dashboard").
//!
//! Every scalar tag gets a row with its newest value and its 2 s window mean, grouped by its
//! prefix (the part before the first `/`, as TensorBoard groups its charts); progress comes
//! from the step axis. Which rows fit is the view's business: it keeps the most recently
//! updated ones ([`GenericModel::recent`]).

use tally::board::TagBoard;
use tally::window::WindowSnapshot;

/// One tag's row.
#[derive(Debug, Clone, PartialEq)]
pub struct TagRow {
    /// The full tag.
    pub tag: String,
    /// Its group: the part before the first `/` (empty for a tag without one).
    pub group: String,
    /// Its label in the group: the rest of the tag.
    pub label: String,
    /// The newest value.
    pub last: f64,
    /// The mean over the 2 s window, when the window holds the tag.
    pub mean: Option<f64>,
    /// When the newest value arrived.
    pub updated: f64,
}

/// What the generic dashboard shows.
#[derive(Debug, Clone, PartialEq)]
pub struct GenericModel {
    /// The run's name.
    pub name: String,
    /// The largest step seen.
    pub step: Option<i64>,
    /// Steps per second on the step axis.
    pub steps_per_sec: Option<f64>,
    /// When the newest value arrived.
    pub last: Option<f64>,
    /// Every tag, by group then label.
    pub rows: Vec<TagRow>,
}

/// A tag's group and label: split at the first `/`.
pub fn split_tag(tag: &str) -> (&str, &str) {
    tag.split_once('/').unwrap_or(("", tag))
}

impl GenericModel {
    /// The model of `board`, with means from `window`, for the run called `name`.
    pub fn build(board: &TagBoard, window: &WindowSnapshot, name: &str) -> GenericModel {
        // The board is a BTreeMap by tag, so rows come out by group, then label.
        let rows = board
            .tags
            .iter()
            .map(|(tag, latest)| {
                let (group, label) = split_tag(tag);
                TagRow {
                    tag: tag.to_string(),
                    group: group.to_owned(),
                    label: label.to_owned(),
                    last: latest.value,
                    mean: window.get(tag),
                    updated: latest.t,
                }
            })
            .collect();
        let last = board.tags.values().map(|l| l.t).reduce(f64::max);
        GenericModel {
            name: name.to_owned(),
            step: board.step(),
            steps_per_sec: board.steps_per_sec(),
            last,
            rows,
        }
    }

    /// Which rows to show when only `k` fit: the `k` most recently updated (ties by tag), in
    /// display order.
    pub fn recent(&self, k: usize) -> Vec<bool> {
        let mut order: Vec<usize> = (0..self.rows.len()).collect();
        order.sort_by(|&a, &b| {
            let (ra, rb) = (&self.rows[a], &self.rows[b]);
            rb.updated
                .total_cmp(&ra.updated)
                .then_with(|| ra.tag.cmp(&rb.tag))
        });
        let mut keep = vec![false; self.rows.len()];
        for &i in order.iter().take(k) {
            keep[i] = true;
        }
        keep
    }
}
