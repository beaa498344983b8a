//! `tally schema`: print the canonical metric schema v1 as a table, JSON, or the generated
//! `docs/metrics.md` markdown.

use std::io::Write;

/// Which rendering of the schema to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rendering {
    /// The aligned table (the default).
    Table,
    /// The registry as JSON.
    Json,
    /// The generated `docs/metrics.md`.
    Markdown,
}

/// Print the schema in `rendering` to `out`.
pub fn run(rendering: Rendering, out: &mut dyn Write) -> std::io::Result<()> {
    let text = match rendering {
        Rendering::Table => tally_schema::render::to_table(),
        Rendering::Json => tally_schema::render::to_json(),
        Rendering::Markdown => tally_schema::render::to_markdown(),
    };
    out.write_all(text.as_bytes())
}
