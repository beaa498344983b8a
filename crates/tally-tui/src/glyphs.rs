//! The panel's symbols, with the ASCII fallback for terminals whose encoding cannot show them.
//!
//! When the terminal's encoding cannot show `"⏱ ▲ ▼ ━"`, the panel uses `time` for `⏱`,
//! `+ - =` for the trend marks, `-+` / `-'` for the detail connectors `─┤` / `─┘`, and drops
//! the rocket (`docs/contract/panel.md`). A Rust process has no output encoding of its own,
//! so the locale (`LC_ALL`, then `LC_CTYPE`, then `LANG`) decides.

/// Every symbol the panel draws outside plain text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Glyphs {
    /// Whether these are the Unicode symbols.
    pub unicode: bool,
    /// Title prefix (`" 🚀"` or nothing).
    pub rocket: &'static str,
    /// Elapsed-time mark in the header.
    pub clock: &'static str,
    /// Reward trend: rising.
    pub up: &'static str,
    /// Reward trend: falling.
    pub down: &'static str,
    /// Reward trend: flat.
    pub flat: &'static str,
    /// Connector after an Env Step detail row that has a sibling below.
    pub tee: &'static str,
    /// Connector after the last Env Step detail row.
    pub corner: &'static str,
    /// Rule under a table header.
    pub rule: &'static str,
    /// Vertical separator between the timing columns (separate clocks).
    pub bar: &'static str,
    /// Ellipsis for a shortened non-core text.
    pub ellipsis: &'static str,
}

impl Glyphs {
    /// The Unicode symbols.
    pub const UNICODE: Glyphs = Glyphs {
        unicode: true,
        rocket: " 🚀",
        clock: "⏱",
        up: "▲",
        down: "▼",
        flat: "━",
        tee: "─┤",
        corner: "─┘",
        rule: "━",
        bar: "│",
        ellipsis: "…",
    };

    /// The ASCII fallback (`docs/contract/panel.md`).
    pub const ASCII: Glyphs = Glyphs {
        unicode: false,
        rocket: "",
        clock: "time",
        up: "+",
        down: "-",
        flat: "=",
        tee: "-+",
        corner: "-'",
        rule: "-",
        bar: "|",
        ellipsis: "~",
    };

    /// Unicode when the locale can show it, ASCII otherwise.
    pub fn detect() -> Glyphs {
        let var = |k: &str| std::env::var(k).ok();
        Glyphs::for_locale(var("LC_ALL"), var("LC_CTYPE"), var("LANG"))
    }

    /// The decision of [`Glyphs::detect`] for given `LC_ALL`, `LC_CTYPE` and `LANG` values.
    ///
    /// The first non-empty variable wins (POSIX precedence). A UTF-8 locale shows Unicode;
    /// any other named locale (`C`, `POSIX`, `en_US.ISO-8859-1`) gets ASCII; no locale at all
    /// is treated as UTF-8, as Python (PEP 538) and modern terminals do.
    pub fn for_locale(
        lc_all: Option<String>,
        lc_ctype: Option<String>,
        lang: Option<String>,
    ) -> Glyphs {
        let chosen = [lc_all, lc_ctype, lang]
            .into_iter()
            .flatten()
            .find(|v| !v.is_empty());
        match chosen {
            None => Glyphs::UNICODE,
            Some(v) => {
                let v = v.to_ascii_lowercase();
                if v.contains("utf-8") || v.contains("utf8") {
                    Glyphs::UNICODE
                } else {
                    Glyphs::ASCII
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> Option<String> {
        Some(v.to_owned())
    }

    #[test]
    fn utf8_locale_shows_unicode_and_c_locale_falls_back_to_ascii() {
        // ASCII fallbacks when the encoding cannot show "⏱ ▲ ▼ ━" (docs/contract/panel.md).
        assert!(Glyphs::for_locale(None, None, s("en_US.UTF-8")).unicode);
        assert!(Glyphs::for_locale(None, None, s("C.utf8")).unicode);
        assert!(!Glyphs::for_locale(s("C"), None, s("en_US.UTF-8")).unicode);
        assert!(!Glyphs::for_locale(None, s("POSIX"), None).unicode);
        assert!(Glyphs::for_locale(s(""), None, s("de_DE.UTF-8")).unicode);
    }

    #[test]
    fn ascii_glyphs_are_ascii() {
        let g = Glyphs::ASCII;
        for s in [
            g.rocket, g.clock, g.up, g.down, g.flat, g.tee, g.corner, g.rule, g.bar, g.ellipsis,
        ] {
            assert!(s.is_ascii(), "{s:?}");
        }
    }
}
