//! The page, embedded in the binary: nothing is fetched from elsewhere at run time, so the
//! board works on an air-gapped cluster (`docs/contract/board.md` "One process, no network").
//!
//! The page is `index.html`, `board.css` and plain scripts, one concept each, that index.html
//! loads in order with `<script>` tags (no modules, no bundler): each script names only what
//! it or an earlier one defines (`tests/page_scripts.rs`), from `state.js` (the page's state
//! and the one API call) up to `board.js` (the polling, the controls, the start). Each is
//! served and gzipped on its own, like every asset (`http`).
//!
//! The charts are drawn by plotly.js (MIT licence), which the `plotly` crate carries (its
//! `plotly_embed_js` feature): [`plotly::Plot::offline_js_sources`] gives it inside a
//! `<script>` tag, beside MathJax, which the page does not use but the crate embeds in that
//! same function (no other item of the crate gives plotly.js alone). The first request for
//! `/plotly.min.js` cuts plotly.js out of that text, kept for the process's life.

use std::sync::LazyLock;

/// An embedded file's path, content type and bytes.
pub struct Asset {
    /// The path the page asks for.
    pub path: &'static str,
    /// Its `Content-Type`.
    pub content_type: &'static str,
    /// Its bytes.
    pub body: &'static [u8],
}

const JS: &str = "text/javascript; charset=utf-8";

/// One of the page's scripts, served at `/NAME`.
macro_rules! script {
    ($name:literal) => {
        Asset {
            path: concat!("/", $name),
            content_type: JS,
            body: include_bytes!(concat!("../assets/", $name)),
        }
    };
}

/// Every file the page is made of but plotly.js ([`PLOTLY`]); the scripts in the order
/// index.html loads them.
pub const ASSETS: &[Asset] = &[
    Asset {
        path: "/",
        content_type: "text/html; charset=utf-8",
        body: include_bytes!("../assets/index.html"),
    },
    Asset {
        path: "/board.css",
        content_type: "text/css; charset=utf-8",
        body: include_bytes!("../assets/board.css"),
    },
    script!("state.js"),
    script!("format.js"),
    script!("dom.js"),
    script!("url.js"),
    script!("theme.js"),
    script!("filter.js"),
    script!("series.js"),
    script!("plot.js"),
    script!("groups.js"),
    script!("draw.js"),
    script!("cursor.js"),
    script!("load.js"),
    script!("charts.js"),
    script!("markdown.js"),
    script!("media.js"),
    script!("run.js"),
    script!("table.js"),
    script!("board.js"),
];

/// plotly.js, cut out of the `plotly` crate's embedded sources at its first request (gzipped,
/// like every asset, once by `http`).
pub static PLOTLY: LazyLock<Asset> = LazyLock::new(|| Asset {
    path: PLOTLY_PATH,
    content_type: JS,
    body: Box::leak(plotly_js().into_bytes().into_boxed_slice()),
});

/// plotly.min.js: the first `<script>` of [`plotly::Plot::offline_js_sources`] (the second is
/// MathJax).
fn plotly_js() -> String {
    let sources = plotly::Plot::offline_js_sources();
    let open = "<script type=\"text/javascript\">";
    let start = sources.find(open).map_or(0, |i| i + open.len());
    let end = sources[start..]
        .find("</script>")
        .map_or(sources.len(), |i| start + i);
    sources[start..end].to_owned()
}

/// The embedded file at `path`, if there is one (no file system is looked at).
pub fn asset(path: &str) -> Option<&'static Asset> {
    let path = if path == "/index.html" { "/" } else { path };
    if path == PLOTLY_PATH {
        return Some(&PLOTLY);
    }
    ASSETS.iter().find(|a| a.path == path)
}

const PLOTLY_PATH: &str = "/plotly.min.js";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plotly_is_served_whole_and_alone() {
        let a = asset("/plotly.min.js").expect("served");
        let text = std::str::from_utf8(a.body).expect("utf-8");
        assert!(text.contains("plotly.js v3"), "{}", &text[..200]);
        assert!(!text.contains("</script>") && !text.contains("MathJax = "));
        assert!(text.trim_end().ends_with(')') || text.trim_end().ends_with(';'));
    }
}
