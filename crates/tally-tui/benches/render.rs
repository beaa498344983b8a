//! Criterion bench: one full frame of the panel at 140×50 (target: well under 1 ms, so the
//! 2 Hz panel thread costs the training loop nothing; `docs/contract/panel.md`).
#![allow(missing_docs)] // criterion_group! generates an undocumented pub fn

// This bench uses only some of the shared fixtures.
#[allow(dead_code)]
#[path = "../tests/support/fixtures.rs"]
mod fixtures;

use criterion::{criterion_group, criterion_main, Criterion};
use fixtures::{appo_state, sac_state, snapshot_at_end};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;
use std::hint::black_box;
use tally_tui::{Glyphs, PanelState};

fn frame(c: &mut Criterion) {
    for (name, state) in [("sac", sac_state()), ("appo", appo_state())] {
        let (snap, now) = snapshot_at_end(&state);
        let mut view = PanelState::new(snap.clone(), now, Glyphs::UNICODE, true);
        let area = Rect::new(0, 0, 140, 50);
        let mut buf = Buffer::empty(area);
        c.bench_function(&format!("render_140x50_{name}"), |b| {
            b.iter(|| {
                buf.reset();
                (&view).render(area, &mut buf);
                black_box(&buf);
            })
        });
        c.bench_function(&format!("update_and_render_140x50_{name}"), |b| {
            b.iter(|| {
                view.update(snap.clone(), now);
                buf.reset();
                (&view).render(area, &mut buf);
                black_box(&buf);
            })
        });
        c.bench_function(&format!("snapshot_{name}"), |b| {
            b.iter(|| black_box(state.snapshot()))
        });
    }
}

criterion_group!(benches, frame);
criterion_main!(benches);
