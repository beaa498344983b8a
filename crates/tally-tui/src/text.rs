//! Text helpers shared by the panel and the plain lines: Rich-style markup removed from status
//! texts, and everything but printable ASCII replaced for plain output
//! (`docs/contract/panel.md`, "Plain output").

/// Remove Rich-style markup (`[red]`, `[bold yellow]`, `[/]`) from a status text.
pub fn strip_markup(text: &str) -> String {
    const WORDS: [&str; 12] = [
        "red",
        "yellow",
        "green",
        "cyan",
        "blue",
        "magenta",
        "white",
        "bold",
        "dim",
        "italic",
        "bright_blue",
        "on",
    ];
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find(']') {
            Some(close) => {
                let inner = after[..close].trim_start_matches('/');
                let is_tag =
                    inner.is_empty() || inner.split_whitespace().all(|w| WORDS.contains(&w));
                if !is_tag {
                    out.push('[');
                    out.push_str(&after[..=close]);
                }
                rest = &after[close + 1..];
            }
            None => {
                out.push_str(&rest[open..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// Replace anything that is not printable ASCII (an ESC byte above all) by `?`.
pub fn ascii(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c == ' ' || c.is_ascii_graphic() {
                c
            } else {
                '?'
            }
        })
        .collect()
}
