//! What the curves view draws, as plain data: each tag's chart with one trace per picked run,
//! reduced by the caller to one [`Column`] per dot column, and each run's newest value and 2 s
//! mean (`docs/contract/panel.md` "Curves in the terminal"). The panel does not read runs: the
//! command that does hands it this.

/// One dot column of a trace: what the points whose x falls in it need drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Column {
    /// The lowest finite value (NaN when the column holds none).
    pub min: f64,
    /// The highest finite value (NaN when the column holds none).
    pub max: f64,
    /// The first finite value in x order, where the line enters the column (NaN when none).
    pub first: f64,
    /// The last finite value in x order, where the line leaves the column (NaN when none).
    pub last: f64,
    /// Whether the column holds a NaN: marked on the chart, never dropped.
    pub nan: bool,
    /// Whether it holds a +inf.
    pub pos_inf: bool,
    /// Whether it holds a -inf.
    pub neg_inf: bool,
}

impl Column {
    /// A column of finite values only, entered at `first` and left at `last`.
    pub fn finite(min: f64, max: f64, first: f64, last: f64) -> Column {
        Column {
            min,
            max,
            first,
            last,
            nan: false,
            pos_inf: false,
            neg_inf: false,
        }
    }

    /// The column of `values` in x order (a reduction for callers holding raw points).
    pub fn of(values: impl IntoIterator<Item = f64>) -> Option<Column> {
        let mut c = Column {
            min: f64::NAN,
            max: f64::NAN,
            first: f64::NAN,
            last: f64::NAN,
            nan: false,
            pos_inf: false,
            neg_inf: false,
        };
        let mut any = false;
        for v in values {
            any = true;
            if v.is_nan() {
                c.nan = true;
            } else if v == f64::INFINITY {
                c.pos_inf = true;
            } else if v == f64::NEG_INFINITY {
                c.neg_inf = true;
            } else {
                if c.first.is_nan() {
                    c.first = v;
                }
                c.last = v;
                c.min = if c.min.is_nan() { v } else { c.min.min(v) };
                c.max = if c.max.is_nan() { v } else { c.max.max(v) };
            }
        }
        any.then_some(c)
    }

    /// Whether the column holds a finite value.
    pub fn has_finite(&self) -> bool {
        self.min.is_finite() && self.max.is_finite()
    }

    /// Whether the column holds a NaN or an infinity.
    pub fn has_nonfinite(&self) -> bool {
        self.nan || self.pos_inf || self.neg_inf
    }
}

/// One run's line in a chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// The run's index in [`CurvesModel::runs`] (its colour).
    pub run: usize,
    /// One entry per dot column, left to right; `None` where the run has no point.
    pub columns: Vec<Option<Column>>,
}

/// One run's figures for a tag, beside its chart.
#[derive(Debug, Clone, PartialEq)]
pub struct RunValue {
    /// The run's index in [`CurvesModel::runs`].
    pub run: usize,
    /// The newest value.
    pub last: f64,
    /// The mean of the points within 2 s of the run's newest wall time (`None`: none).
    pub mean_2s: Option<f64>,
    /// The newest point's step.
    pub step: i64,
}

/// One tag's chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// The tag charted.
    pub tag: String,
    /// The step range the dot columns span, shared by every trace.
    pub steps: (i64, i64),
    /// The picked runs' lines, drawn in this order (a later one's colour wins a shared cell).
    pub traces: Vec<Trace>,
    /// The picked runs' figures.
    pub values: Vec<RunValue>,
}

/// One run in the run list.
#[derive(Debug, Clone, PartialEq)]
pub struct RunLabel {
    /// Its name (its directory relative to the path watched).
    pub name: String,
    /// Why the run cannot be read, when it cannot (its chart lines are then missing).
    pub error: Option<String>,
    /// Its newest health finding as the Health line says it, when a rule fired
    /// (docs/contract/health.md "In tally watch").
    pub health: Option<String>,
}

/// Everything one frame of the curves view shows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CurvesModel {
    /// What is watched (the path given).
    pub title: String,
    /// Every run watched, in the order it was found (its index is its colour).
    pub runs: Vec<RunLabel>,
    /// Every tag matching the filter, in name order (the charts shown are a window of it).
    pub tags: usize,
    /// The index in that list of the first chart below.
    pub first: usize,
    /// The charts to draw, from `first` on.
    pub charts: Vec<Chart>,
    /// Said when there is nothing to chart yet (no run, no tag).
    pub notice: Option<String>,
}
