//! Renderings of the registry: the `tally schema --json` document, a plain table, and docs/metrics.md.

use crate::legacy::{LegacyRow, RetiredName, LEGACY, RETIRED};
use crate::registry::{FamilySpec, MetricSpec, FAMILIES, METRICS};
use crate::METRIC_SCHEMA_VERSION;
use serde::Serialize;
use std::fmt::Write as _;

/// The whole schema as one serialisable document (the `tally schema --json` shape).
#[derive(Debug, Serialize)]
pub struct SchemaDocument {
    /// Always [`METRIC_SCHEMA_VERSION`].
    pub metric_schema_version: u32,
    /// Every closed-registry tag, persisted and terminal-only.
    pub metrics: &'static [MetricSpec],
    /// The open families.
    pub families: &'static [FamilySpec],
    /// Old tag → canonical tag, with unit scale.
    pub legacy: &'static [LegacyRow],
    /// Names retired without a replacement.
    pub retired: &'static [RetiredName],
}

/// The schema document.
pub fn document() -> SchemaDocument {
    SchemaDocument {
        metric_schema_version: METRIC_SCHEMA_VERSION,
        metrics: METRICS,
        families: FAMILIES,
        legacy: LEGACY,
        retired: RETIRED,
    }
}

/// Pretty JSON of [`document`], with a trailing newline.
pub fn to_json() -> String {
    let mut s =
        serde_json::to_string_pretty(&document()).expect("the schema document always serialises");
    s.push('\n');
    s
}

fn profiles_text(p: crate::Profiles) -> String {
    p.iter().map(|p| p.as_str()).collect::<Vec<_>>().join(",")
}

/// An aligned plain-text table of the registry, for a terminal.
pub fn to_table() -> String {
    let header = [
        "tag",
        "unit",
        "owner",
        "role",
        "reduction",
        "profiles",
        "label",
        "short",
        "persisted",
    ];
    let rows: Vec<[String; 9]> = METRICS
        .iter()
        .map(|m| {
            [
                m.tag.to_owned(),
                m.unit.as_str().to_owned(),
                format!("{:?}", m.owner).to_lowercase(),
                m.role.as_str().to_owned(),
                m.reduction.as_str().to_owned(),
                profiles_text(m.profiles),
                m.label.to_owned(),
                m.short_label.to_owned(),
                if m.persisted { "yes" } else { "terminal only" }.to_owned(),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = format!(
        "canonical metric schema v{METRIC_SCHEMA_VERSION}: {} tags\n\n",
        METRICS.len()
    );
    let line = |cells: &[&str]| -> String {
        let mut l = String::new();
        for (i, (c, w)) in cells.iter().zip(widths).enumerate() {
            if i + 1 == cells.len() {
                l.push_str(c);
            } else {
                let _ = write!(l, "{c:<w$}  ");
            }
        }
        l.trim_end().to_owned() + "\n"
    };
    out.push_str(&line(&header));
    for r in &rows {
        out.push_str(&line(&r.iter().map(String::as_str).collect::<Vec<_>>()));
    }
    out.push_str("\nopen families:\n");
    for f in FAMILIES {
        let reserved: Vec<String> = f
            .reserved_terms
            .iter()
            .map(|r| format!("'{}'", r.term))
            .collect();
        let _ = writeln!(
            out,
            "  {}<term>  unit={} owner={:?} reduction={} reserved terms: {}",
            f.prefix,
            f.unit.as_str(),
            f.owner,
            f.reduction.as_str(),
            reserved.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "\nlegacy tags: {} mapped, {} retired patterns (see --json or docs/metrics.md)",
        LEGACY.len(),
        RETIRED.len()
    );
    out
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|")
        .replace('*', "\\*")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The generated `docs/metrics.md`.
pub fn to_markdown() -> String {
    let mut o = String::new();
    o.push_str(
        "<!-- generated from crates/tally-schema by `tally schema --markdown`; do not edit. -->\n",
    );
    let _ = writeln!(o, "# Canonical metric schema v{METRIC_SCHEMA_VERSION}\n");
    o.push_str(
        "Every tag tally persists to TensorBoard / W&B, and every terminal-only derived value the panel \
         shows. Durations enter the logger in seconds; `_ms` tags are stored in milliseconds, and \
         `Perf/learning_time`, `Perf/collection_time` and `Perf/iteration_time` in seconds. \
         `Terminal/*` entries are derived in memory for the panel and are never persisted. \
         `metric_schema_version` (top level of `run_summary.json`) is independent of the runtime \
         manifest's `schema_version` and of the soak artifact's version.\n\n",
    );
    let persisted = METRICS.iter().filter(|m| m.persisted).count();
    let _ = writeln!(
        o,
        "{} persisted tags, {} terminal-only values.\n",
        persisted,
        METRICS.len() - persisted
    );
    let groups = [
        "Train/",
        "Loss/",
        "Policy/",
        "Episode/",
        "Perf/",
        "Terminal/",
    ];
    for g in groups {
        let _ = writeln!(o, "## `{g}*`\n");
        o.push_str("| tag | unit | owner | role | reduction | profiles | label | short | input | meaning |\n");
        o.push_str("|---|---|---|---|---|---|---|---|---|---|\n");
        for m in METRICS.iter().filter(|m| m.tag.starts_with(g)) {
            let _ = writeln!(
                o,
                "| `{}` | {} | {} | {} | {} | {} | {} | {} | `{}` | {} |",
                m.tag,
                m.unit.as_str(),
                format!("{:?}", m.owner).to_lowercase(),
                m.role.as_str(),
                m.reduction.as_str(),
                profiles_text(m.profiles),
                md_escape(m.label),
                md_escape(m.short_label),
                m.input,
                md_escape(m.description),
            );
        }
        o.push('\n');
    }
    o.push_str("## Open families\n\n| family | unit | owner | reduction | reserved terms | meaning |\n|---|---|---|---|---|---|\n");
    for f in FAMILIES {
        let reserved: Vec<String> = f
            .reserved_terms
            .iter()
            .map(|r| match r.replacement {
                Some(rep) => format!("`{}` → `{rep}`", r.term),
                None => format!("`{}` (empty)", r.term),
            })
            .collect();
        let _ = writeln!(
            o,
            "| `{}<term>` | {} | {} | {} | {} | {} |",
            f.prefix,
            f.unit.as_str(),
            format!("{:?}", f.owner).to_lowercase(),
            f.reduction.as_str(),
            reserved.join(", "),
            md_escape(f.description)
        );
    }
    o.push_str("\n## Legacy tags (old runs)\n\nOld event files are never rewritten. Producers reject these names; \
        `tally extract --legacy-unversioned` reads them through this map.\n\n| old | new | scale | profile | note |\n|---|---|---|---|---|\n");
    for r in LEGACY {
        let _ = writeln!(
            o,
            "| `{}` | `{}` | {} | {} | {} |",
            r.old,
            r.new,
            r.scale,
            r.profile.map(|p| p.as_str()).unwrap_or("any"),
            md_escape(r.note)
        );
    }
    o.push_str("\n## Retired without replacement\n\n| name | see | reason |\n|---|---|---|\n");
    for r in RETIRED {
        let _ = writeln!(
            o,
            "| `{}` | {} | {} |",
            r.pattern,
            r.see.map(|s| format!("`{s}`")).unwrap_or_default(),
            md_escape(r.reason)
        );
    }
    o
}
