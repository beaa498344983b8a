//! The `rft` profile's panel model: Trinity-RFT step-level keys grouped by category (pure).
//!
//! Trinity-RFT names metrics `{category}/{taskset_name}/{metric_name}/{statistic}`
//! (`docs/contract/rft.md`): the taskset part exists only for `eval/` and `bench/`; statistics
//! are mean, max, min, std, sum, last, or `mean@N` / `std@N` / `best@k` / `worst@k` for
//! evaluation, optionally followed by a detailed statistic (`…/mean@2/mean`). The panel shows
//! one group per category present, in Trinity-RFT's category order ([`RFT_CATEGORIES`]), and
//! one group per taskset for `eval/` and `bench/`.
//!
//! A group pivots its keys into a table (rows = metrics, columns = statistics) when that
//! saves rows: always for `eval/` and `bench/`, and elsewhere when some metric carries two or
//! more statistics (`rollout/accuracy/mean|max|min`). Otherwise each key is a row labelled by
//! the key without its category (`actor/pg_loss` → `pg_loss`).

use std::collections::BTreeMap;
use tally::terminal::PanelSnapshot;
use tally_schema::rft::{is_eval_statistic, RFT_CATEGORIES};
use tally_schema::Unit;

/// The plain statistics of Trinity-RFT keys, in their order (`mean, max, min, std, sum, last`;
/// `docs/contract/rft.md`).
pub const PLAIN_STATISTICS: [&str; 6] = ["mean", "max", "min", "std", "sum", "last"];

/// One column of a group: the statistic it shows. The derived order is the display order:
/// the key's own value, then `mean@N`, `std@N`, `best@k`, `worst@k` (N, k ascending), then
/// the plain statistics in [`PLAIN_STATISTICS`] order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Column {
    /// The value of a key that does not end in a statistic.
    Value,
    /// `mean@N`: the mean over N repeats.
    MeanAt(u64),
    /// `std@N`: the standard deviation over N repeats.
    StdAt(u64),
    /// `best@k`: the (bootstrapped) best of k repeats.
    BestAt(u64),
    /// `worst@k`: the (bootstrapped) worst of k repeats.
    WorstAt(u64),
    /// A plain statistic, by its index in [`PLAIN_STATISTICS`].
    Plain(u8),
}

impl Column {
    /// The column of a statistic segment (`mean@4`, `max`), if it is one.
    pub fn parse(stat: &str) -> Option<Column> {
        if is_eval_statistic(stat) {
            let (name, n) = stat.split_once('@')?;
            let n: u64 = n.parse().ok()?;
            return Some(match name {
                "mean" => Column::MeanAt(n),
                "std" => Column::StdAt(n),
                "best" => Column::BestAt(n),
                _ => Column::WorstAt(n),
            });
        }
        PLAIN_STATISTICS
            .iter()
            .position(|s| *s == stat)
            .map(|i| Column::Plain(i as u8))
    }

    /// The column header (`Value`, `mean@4`, `max`).
    pub fn header(self) -> String {
        match self {
            Column::Value => "Value".into(),
            Column::MeanAt(n) => format!("mean@{n}"),
            Column::StdAt(n) => format!("std@{n}"),
            Column::BestAt(k) => format!("best@{k}"),
            Column::WorstAt(k) => format!("worst@{k}"),
            Column::Plain(i) => PLAIN_STATISTICS[usize::from(i)].into(),
        }
    }

    /// Whether values of this column are counts (`sum`, `last`): shown as whole numbers.
    pub fn is_count(self) -> bool {
        matches!(self, Column::Plain(4) | Column::Plain(5))
    }
}

/// One row of a group: a metric and its value per column (`None` where the key is absent).
#[derive(Debug, Clone, PartialEq)]
pub struct RftRow {
    /// The metric: the key without its category (and taskset and statistic, when pivoted).
    pub label: String,
    /// One cell per column of the group.
    pub cells: Vec<Option<f64>>,
}

/// One group of the panel: a category, or one taskset of `eval/` / `bench/`.
#[derive(Debug, Clone, PartialEq)]
pub struct RftGroup {
    /// The category (an entry of [`RFT_CATEGORIES`]).
    pub category: &'static str,
    /// The taskset (`eval/` and `bench/` only).
    pub taskset: Option<String>,
    /// The unit the category implies (`time/` seconds, `timing_per_token_ms/` ms).
    pub unit: Unit,
    /// The columns, in display order.
    pub columns: Vec<Column>,
    /// The rows, sorted by label.
    pub rows: Vec<RftRow>,
    /// Whether the group is the last one seen rather than in the current window (an eval
    /// or bench taskset between evaluations).
    pub held: bool,
}

impl RftGroup {
    /// The group title: the category, or `category/taskset`.
    pub fn title(&self) -> String {
        match &self.taskset {
            Some(t) => format!("{}/{t}", self.category),
            None => self.category.to_owned(),
        }
    }

    /// Whether this is an evaluation group (`eval/` or `bench/`).
    pub fn is_eval(&self) -> bool {
        self.taskset.is_some()
    }

    /// The value of `label` in `column`, if present.
    pub fn get(&self, label: &str, column: Column) -> Option<f64> {
        let c = self.columns.iter().position(|c| *c == column)?;
        self.rows.iter().find(|r| r.label == label)?.cells[c]
    }

    /// Position in the panel: [`RFT_CATEGORIES`] order of the category, then the taskset name.
    fn order(&self) -> (usize, Option<&str>) {
        (category_index(self.category), self.taskset.as_deref())
    }
}

/// The rft part of the panel model: the groups in display order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RftModel {
    /// One group per category present (one per taskset for `eval/` and `bench/`).
    pub groups: Vec<RftGroup>,
}

fn category_index(category: &str) -> usize {
    RFT_CATEGORIES
        .iter()
        .position(|c| *c == category)
        .unwrap_or(RFT_CATEGORIES.len())
}

/// Where one key goes: (category, taskset, metric, column).
fn place(key: &str) -> Option<(&'static str, Option<&str>, &str, Column)> {
    let (category, rest) = key.split_once('/')?;
    let category = *RFT_CATEGORIES.iter().find(|c| **c == category)?;
    if rest.is_empty() {
        return None;
    }
    if matches!(category, "eval" | "bench") {
        let (taskset, tail) = rest.split_once('/')?;
        let Some((head, last)) = tail.rsplit_once('/') else {
            return Some((category, Some(taskset), tail, Column::Value));
        };
        // Detailed stats (`…/mean@2/mean`): the `mean` detail is the statistic's value; the
        // other details (std, max, min across tasks) stay in TensorBoard / W&B.
        if let Some((metric, stat)) = head.rsplit_once('/') {
            if is_eval_statistic(stat) && matches!(last, "mean" | "std" | "max" | "min") {
                if last != "mean" {
                    return None;
                }
                return Some((category, Some(taskset), metric, Column::parse(stat)?));
            }
        }
        if let Some(column) = Column::parse(last) {
            return Some((category, Some(taskset), head, column));
        }
        return Some((category, Some(taskset), tail, Column::Value));
    }
    match rest.rsplit_once('/') {
        Some((metric, last)) if PLAIN_STATISTICS.contains(&last) => {
            Some((category, None, metric, Column::parse(last)?))
        }
        _ => Some((category, None, rest, Column::Value)),
    }
}

type Cells = BTreeMap<Column, f64>;

impl RftModel {
    /// Group the window means of `snap` (keys outside [`RFT_CATEGORIES`] are ignored).
    pub fn build(snap: &PanelSnapshot) -> RftModel {
        RftModel::from_means(snap.window.means.iter().map(|(t, v)| (t.as_str(), *v)))
    }

    /// Group `(key, value)` pairs.
    pub fn from_means<'a>(means: impl IntoIterator<Item = (&'a str, f64)>) -> RftModel {
        type Key<'k> = (usize, Option<&'k str>);
        let mut by_group: BTreeMap<Key<'a>, (&'static str, BTreeMap<&'a str, Cells>)> =
            BTreeMap::new();
        let mut flat: BTreeMap<Key<'a>, BTreeMap<&'a str, f64>> = BTreeMap::new();
        for (key, v) in means {
            let Some((category, taskset, metric, column)) = place(key) else {
                continue;
            };
            let gk = (category_index(category), taskset);
            by_group
                .entry(gk)
                .or_insert_with(|| (category, BTreeMap::new()))
                .1
                .entry(metric)
                .or_default()
                .insert(column, v);
            // The flat view labels every key by what follows the category.
            if taskset.is_none() {
                flat.entry(gk)
                    .or_default()
                    .insert(&key[category.len() + 1..], v);
            }
        }
        let groups = by_group
            .into_iter()
            .map(|(gk, (category, metrics))| {
                let unit = match category {
                    "time" => Unit::S,
                    "timing_per_token_ms" => Unit::Ms,
                    _ => Unit::Unitless,
                };
                let pivot = gk.1.is_some() || metrics.values().any(|cells| cells.len() > 1);
                let (columns, rows) = if pivot {
                    let mut columns: Vec<Column> =
                        metrics.values().flat_map(|c| c.keys().copied()).collect();
                    columns.sort_unstable();
                    columns.dedup();
                    let rows = metrics
                        .iter()
                        .map(|(label, cells)| RftRow {
                            label: (*label).to_owned(),
                            cells: columns.iter().map(|c| cells.get(c).copied()).collect(),
                        })
                        .collect();
                    (columns, rows)
                } else {
                    let rows = flat
                        .remove(&gk)
                        .unwrap_or_default()
                        .into_iter()
                        .map(|(label, v)| RftRow {
                            label: label.to_owned(),
                            cells: vec![Some(v)],
                        })
                        .collect();
                    (vec![Column::Value], rows)
                };
                RftGroup {
                    category,
                    taskset: gk.1.map(str::to_owned),
                    unit,
                    columns,
                    rows,
                    held: false,
                }
            })
            .collect();
        RftModel { groups }
    }

    /// Keep the `eval/` and `bench/` tasksets of `prev` that this window no longer holds,
    /// marked [`RftGroup::held`]: eval keys arrive only on eval steps, so between two
    /// evaluations the panel shows the last one instead of dropping the table.
    pub fn hold_evals(&mut self, prev: &RftModel) {
        let mut added = false;
        for g in prev.groups.iter().filter(|g| g.is_eval()) {
            if !self.groups.iter().any(|h| h.order() == g.order()) {
                let mut g = g.clone();
                g.held = true;
                self.groups.push(g);
                added = true;
            }
        }
        if added {
            self.groups.sort_by(|a, b| a.order().cmp(&b.order()));
        }
    }

    /// The group of `category` (and `taskset`), if present.
    pub fn group(&self, category: &str, taskset: Option<&str>) -> Option<&RftGroup> {
        self.groups
            .iter()
            .find(|g| g.category == category && g.taskset.as_deref() == taskset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(keys: &[(&str, f64)]) -> RftModel {
        RftModel::from_means(keys.iter().copied())
    }

    #[test]
    fn columns_order_mean_std_best_worst_then_plain_statistics() {
        // Eval statistics are mean@N, std@N, best@k, worst@k; plain ones mean, max, min, std,
        // sum, last (docs/contract/rft.md).
        let mut cols: Vec<Column> = [
            "worst@2", "last", "best@4", "mean@4", "sum", "best@2", "std@4", "worst@4", "max",
        ]
        .iter()
        .map(|s| Column::parse(s).unwrap())
        .collect();
        cols.sort();
        let headers: Vec<String> = cols.iter().map(|c| c.header()).collect();
        assert_eq!(
            headers,
            ["mean@4", "std@4", "best@2", "best@4", "worst@2", "worst@4", "max", "sum", "last"]
        );
        assert_eq!(Column::parse("best@0"), None);
        assert_eq!(Column::parse("median"), None);
    }

    #[test]
    fn rollout_pivots_and_single_statistic_categories_stay_flat() {
        // Keys are rollout/{metric_name}/{statistic} and time/{operation_name}
        // (docs/contract/rft.md).
        let m = model(&[
            ("rollout/accuracy/mean", 0.5),
            ("rollout/accuracy/max", 1.0),
            ("rollout/total_tokens/sum", 900.0),
            ("critic/score/mean", 0.3),
            ("time/update_actor", 1.5),
            ("response_length/mean", 350.0),
            ("Perf/total_fps", 1.0),
        ]);
        let cats: Vec<&str> = m.groups.iter().map(|g| g.category).collect();
        assert_eq!(cats, ["rollout", "time", "critic", "response_length"]);
        let r = m.group("rollout", None).unwrap();
        assert_eq!(
            r.columns,
            [Column::Plain(0), Column::Plain(1), Column::Plain(4)]
        );
        assert_eq!(r.get("accuracy", Column::Plain(1)), Some(1.0));
        assert_eq!(r.get("total_tokens", Column::Plain(0)), None);
        let c = m.group("critic", None).unwrap();
        assert_eq!(c.columns, [Column::Value]);
        assert_eq!(c.rows[0].label, "score/mean");
        assert_eq!(m.group("time", None).unwrap().unit, Unit::S);
        assert_eq!(
            m.group("response_length", None).unwrap().rows[0].label,
            "mean"
        );
    }

    #[test]
    fn eval_groups_per_taskset_and_detailed_stats_use_their_mean() {
        // Keys are eval/{task_name}/{metric_name}/{statistic}; detailed_stats adds
        // …/mean@2/mean|std|max|min (docs/contract/rft.md).
        let m = model(&[
            ("eval/b-set/accuracy/mean@2/mean", 0.83),
            ("eval/b-set/accuracy/mean@2/std", 0.06),
            ("eval/a-set/accuracy/mean@4", 0.5),
            ("bench/a-set/accuracy/best@2", 0.9),
        ]);
        let titles: Vec<String> = m.groups.iter().map(|g| g.title()).collect();
        assert_eq!(titles, ["eval/a-set", "eval/b-set", "bench/a-set"]);
        let b = m.group("eval", Some("b-set")).unwrap();
        assert_eq!(b.columns, [Column::MeanAt(2)]);
        assert_eq!(b.get("accuracy", Column::MeanAt(2)), Some(0.83));
    }

    #[test]
    fn held_evals_fill_in_until_the_next_evaluation() {
        // Eval metrics are computed on evaluation steps only (docs/contract/rft.md).
        let prev = model(&[
            ("eval/g/accuracy/mean@4", 0.5),
            ("rollout/accuracy/mean", 0.1),
        ]);
        let mut now = model(&[("rollout/accuracy/mean", 0.2), ("time/x", 1.0)]);
        now.hold_evals(&prev);
        let titles: Vec<String> = now.groups.iter().map(|g| g.title()).collect();
        assert_eq!(titles, ["rollout", "eval/g", "time"]);
        assert!(now.groups[1].held && !now.groups[0].held);
        let mut fresh = model(&[("eval/g/accuracy/mean@4", 0.7)]);
        fresh.hold_evals(&prev);
        assert_eq!(fresh.groups.len(), 1);
        assert!(!fresh.groups[0].held);
    }
}
