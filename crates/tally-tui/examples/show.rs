//! Print the fixture panels as text at a few widths (a development aid).

#[path = "../tests/support/fixtures.rs"]
mod fixtures;

use fixtures::{appo_state, onpolicy_state, rft_state, sac_state, snapshot_at_end};
use tally_tui::{buffer_text, render_to_buffer, summary_line, Glyphs, PanelState};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let width: u16 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(140);
    let height: Option<u16> = args.get(2).and_then(|a| a.parse().ok());
    let only = args.get(3).map(String::as_str);
    for (name, state) in [
        ("sac", sac_state()),
        ("appo", appo_state()),
        ("ppo", onpolicy_state()),
        ("rft", rft_state()),
    ] {
        if only.is_some_and(|o| o != name) {
            continue;
        }
        let (snap, now) = snapshot_at_end(&state);
        let view = PanelState::new(snap, now, Glyphs::UNICODE, false);
        print!("{}", buffer_text(&render_to_buffer(&view, width, height)));
        println!("{}", summary_line(&view.model));
    }
}
