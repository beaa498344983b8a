//! The page, embedded in the binary: nothing is fetched from elsewhere at run time, so the
//! board works on an air-gapped cluster (`docs/contract/board.md` "One process, no network").
//!
//! The charts are drawn by plotly.js (MIT licence), which the `plotly` crate carries (its
//! `plotly_embed_js` feature): [`plotly::Plot::offline_js_sources`] gives it inside a
//! `<script>` tag, beside MathJax, which the page does not use. The first request for
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

/// Every file the page is made of but plotly.js ([`PLOTLY`]).
pub const ASSETS: &[Asset] = &[
    Asset {
        path: "/",
        content_type: "text/html; charset=utf-8",
        body: include_bytes!("../assets/index.html"),
    },
    Asset {
        path: "/board.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../assets/board.js"),
    },
    Asset {
        path: "/run.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../assets/run.js"),
    },
    Asset {
        path: "/board.css",
        content_type: "text/css; charset=utf-8",
        body: include_bytes!("../assets/board.css"),
    },
];

/// plotly.js, cut out of the `plotly` crate's embedded sources at its first request (gzipped,
/// like every asset, once by `http`).
pub static PLOTLY: LazyLock<Asset> = LazyLock::new(|| Asset {
    path: PLOTLY_PATH,
    content_type: "text/javascript; charset=utf-8",
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
        let gz = a.gzip.expect("gzipped");
        let mut back = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(gz), &mut back)
            .expect("gunzip");
        assert_eq!(back, a.body);
        assert!(gz.len() * 2 < a.body.len());
    }
}
