//! Render many frames of the SAC fixture at 140×50 (for profiling the render path).

// This example uses only some of the shared fixtures.
#[allow(dead_code)]
#[path = "../tests/support/fixtures.rs"]
mod fixtures;

use fixtures::{sac_state, snapshot_at_end};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;
use tally_tui::{Glyphs, PanelState};

fn main() {
    let (snap, now) = snapshot_at_end(&sac_state());
    let view = PanelState::new(snap, now, Glyphs::UNICODE, true);
    let area = Rect::new(0, 0, 140, 50);
    let mut buf = Buffer::empty(area);
    let n: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(5000);
    let t = std::time::Instant::now();
    for _ in 0..n {
        buf.reset();
        (&view).render(area, &mut buf);
    }
    println!("{:?} per frame", t.elapsed() / n);
}
