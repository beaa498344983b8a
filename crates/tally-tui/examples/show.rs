//! Print the fixture panels as text at a few widths (a development aid).

use tally_tui::fixtures::{appo_state, sac_state, snapshot_at_end};
use tally_tui::{buffer_text, render_to_buffer, Glyphs, PanelState};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let width: u16 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(140);
    let height: Option<u16> = args.get(2).and_then(|a| a.parse().ok());
    for state in [sac_state(), appo_state()] {
        let (snap, now) = snapshot_at_end(&state);
        let view = PanelState::new(snap, now, Glyphs::UNICODE, false);
        print!("{}", buffer_text(&render_to_buffer(&view, width, height)));
    }
}
