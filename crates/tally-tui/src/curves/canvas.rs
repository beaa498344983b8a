//! A chart's plot as a grid of dots, each cell 2×4 braille dots (1×3 in ASCII), drawn from
//! one [`Column`] per dot column: every column's whole min..max span is set, so a one-point
//! spike among a million points still reaches its row (`docs/contract/panel.md` "Curves in
//! the terminal").

use super::model::{Column, Trace};

/// Braille dot bits by (x, y) inside a cell (Unicode's 8-dot order).
const BRAILLE: [[u8; 4]; 2] = [[0x01, 0x02, 0x04, 0x40], [0x08, 0x10, 0x20, 0x80]];

/// A non-finite value marked in a cell column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// NaN: at the top.
    Nan,
    /// +inf: at the top.
    PosInf,
    /// -inf: at the bottom.
    NegInf,
}

/// The dots of one plot, with the run each cell was last drawn by.
#[derive(Debug, Clone)]
pub struct Canvas {
    /// Size in cells.
    pub width: usize,
    /// Rows in cells.
    pub height: usize,
    /// Dots per cell across and down: 2×4 (braille) or 1×3 (ASCII).
    pub dx: usize,
    /// Dots per cell down.
    pub dy: usize,
    /// Per cell: its dot bits, and the run whose colour it takes.
    bits: Vec<u8>,
    owner: Vec<Option<usize>>,
    /// Per cell column: the marks at its top and bottom, and the run they belong to.
    top: Vec<Option<(Mark, usize)>>,
    bottom: Vec<Option<(Mark, usize)>>,
}

impl Canvas {
    /// An empty plot of `width` × `height` cells, braille when `unicode`.
    pub fn new(width: usize, height: usize, unicode: bool) -> Canvas {
        let (dx, dy) = if unicode { (2, 4) } else { (1, 3) };
        Canvas {
            width,
            height,
            dx,
            dy,
            bits: vec![0; width * height],
            owner: vec![None; width * height],
            top: vec![None; width],
            bottom: vec![None; width],
        }
    }

    /// Dot columns across the plot.
    pub fn dot_columns(&self) -> usize {
        self.width * self.dx
    }

    fn dot_rows(&self) -> usize {
        self.height * self.dy
    }

    fn set(&mut self, x: usize, y: usize, run: usize) {
        let (cx, cy) = (x / self.dx, y / self.dy);
        if cx >= self.width || cy >= self.height {
            return;
        }
        let bit = if self.dx == 2 {
            BRAILLE[x % 2][y % 4]
        } else {
            1 << (y % 3)
        };
        let i = cy * self.width + cx;
        self.bits[i] |= bit;
        self.owner[i] = Some(run);
    }

    /// Dots `a..=b` (either order) of dot column `x`.
    fn vline(&mut self, x: usize, a: usize, b: usize, run: usize) {
        for y in a.min(b)..=a.max(b) {
            self.set(x, y, run);
        }
    }

    /// Draw `trace` with `lo` at the bottom dot row and `hi` at the top: each column's span,
    /// joined to the previous column's exit (across empty columns by a straight line), and its
    /// NaN and infinities as marks.
    pub fn draw(&mut self, trace: &Trace, lo: f64, hi: f64) {
        let rows = self.dot_rows();
        if rows == 0 {
            return;
        }
        let last_row = (rows - 1) as f64;
        let span = hi - lo;
        let row_of = |v: f64| -> f64 {
            let r = if span > 0.0 {
                (hi - v) / span * last_row
            } else {
                last_row / 2.0
            };
            r.clamp(0.0, last_row)
        };
        let mut prev: Option<(usize, f64)> = None;
        for (x, col) in trace.columns.iter().enumerate() {
            let Some(col) = col else {
                continue;
            };
            if col.has_nonfinite() {
                self.mark(x, col, trace.run);
            }
            if !col.has_finite() {
                continue;
            }
            let entry = row_of(pick(col.first, col.min));
            let (mut top, mut bottom) = (row_of(col.max).round(), row_of(col.min).round());
            if let Some((px, py)) = prev {
                // A straight line over the columns without points, then into this one.
                let mut y_prev = py;
                for k in px + 1..x {
                    let y = py + (entry - py) * (k - px) as f64 / (x - px) as f64;
                    self.vline(k, y_prev.round() as usize, y.round() as usize, trace.run);
                    y_prev = y;
                }
                top = top.min(y_prev.round());
                bottom = bottom.max(y_prev.round());
            }
            self.vline(x, top as usize, bottom as usize, trace.run);
            prev = Some((x, row_of(pick(col.last, col.max))));
        }
    }

    fn mark(&mut self, x: usize, col: &Column, run: usize) {
        let cx = x / self.dx;
        if cx >= self.width {
            return;
        }
        if col.nan {
            self.top[cx] = Some((Mark::Nan, run));
        } else if col.pos_inf && self.top[cx].is_none() {
            self.top[cx] = Some((Mark::PosInf, run));
        }
        if col.neg_inf {
            self.bottom[cx] = Some((Mark::NegInf, run));
        }
    }

    /// Cell (`x`, `y`): its dots as one character (`None` when empty) and its run.
    pub fn cell(&self, x: usize, y: usize) -> Option<(char, usize)> {
        let i = y * self.width + x;
        let bits = self.bits[i];
        if bits == 0 {
            return None;
        }
        let ch = if self.dx == 2 {
            char::from_u32(0x2800 + u32::from(bits)).unwrap_or(' ')
        } else {
            match bits {
                1 => '\'',
                2 => '-',
                4 => '.',
                5 => ':',
                _ => '|',
            }
        };
        Some((ch, self.owner[i].unwrap_or(0)))
    }

    /// The mark at the top (`top`) or bottom of cell column `x`, with its run.
    pub fn mark_at(&self, x: usize, top: bool) -> Option<(Mark, usize)> {
        if top {
            self.top[x]
        } else {
            self.bottom[x]
        }
    }
}

/// `v`, or `or` when `v` is NaN.
fn pick(v: f64, or: f64) -> f64 {
    if v.is_nan() {
        or
    } else {
        v
    }
}
