//! The page, embedded in the binary: nothing is fetched from elsewhere at run time, so the
//! board works on an air-gapped cluster (`docs/contract/board.md` "One process, no network").

/// An embedded file's path, content type and bytes.
pub struct Asset {
    /// The path the page asks for.
    pub path: &'static str,
    /// Its `Content-Type`.
    pub content_type: &'static str,
    /// Its bytes.
    pub body: &'static [u8],
}

/// Every file the page is made of.
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

/// The embedded file at `path`, if there is one (no file system is looked at).
pub fn asset(path: &str) -> Option<&'static Asset> {
    let path = if path == "/index.html" { "/" } else { path };
    ASSETS.iter().find(|a| a.path == path)
}
