//! The panel's width tiers and how a row's columns are shared between tables.

/// A width tier of the panel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    /// Fewer than 96 columns: everything stacked, one `Timing` column, short titles.
    Stacked,
    /// 96–119 columns: metrics and rewards side by side; `Learner` / `Collector` timing.
    SideBySide,
    /// 120 columns and more: `Learner (Iter Wall)`, `Collector (own clock)`, `System`.
    Full,
}

impl Tier {
    /// First width of [`Tier::SideBySide`].
    pub const SIDE_BY_SIDE_MIN: u16 = 96;
    /// First width of [`Tier::Full`].
    pub const FULL_MIN: u16 = 120;

    /// The tier of a panel `width` columns wide.
    pub fn for_width(width: u16) -> Tier {
        if width >= Self::FULL_MIN {
            Tier::Full
        } else if width >= Self::SIDE_BY_SIDE_MIN {
            Tier::SideBySide
        } else {
            Tier::Stacked
        }
    }
}

/// Columns between side-by-side tables.
pub(super) const GAP: u16 = 2;
/// Columns between a label and its value.
pub(super) const PAD: u16 = 2;

/// Split `avail` columns between tables of natural widths `nat`: each gets its natural
/// width and an equal share of the rest; when there is not enough room, shares follow the
/// natural widths.
pub(super) fn split(avail: u16, nat: &[u16]) -> Vec<u16> {
    let total: u32 = nat.iter().map(|&n| u32::from(n)).sum();
    if total == 0 {
        return vec![avail / nat.len().max(1) as u16; nat.len()];
    }
    let mut out: Vec<u16> = if total <= u32::from(avail) {
        let extra = (u32::from(avail) - total) / nat.len() as u32;
        nat.iter().map(|&n| n + extra as u16).collect()
    } else {
        nat.iter()
            .map(|&n| (u32::from(n) * u32::from(avail) / total) as u16)
            .collect()
    };
    let used: u16 = out.iter().sum();
    if let Some(last) = out.last_mut() {
        *last += avail.saturating_sub(used);
    }
    out
}
