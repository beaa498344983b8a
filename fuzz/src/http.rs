//! Request targets as the board decodes them (`tally_board::query::Target::parse`): the
//! request line's target of every input. The head itself is hyper's to read (ARCHITECTURE.md
//! "The board's server"), so what stays ours is the target's percent-decoding.

use tally_board::query::Target;

/// Fuzz target `http_head`: the input as a request head, its target decoded.
pub fn http_head(input: &[u8]) {
    let text = String::from_utf8_lossy(input);
    let line = text.split(['\r', '\n']).next().unwrap_or_default();
    let raw = line.split(' ').nth(1).unwrap_or(line);
    let target = Target::parse(raw);
    // Decoding never lengthens: each escape or `+` gives at most what it was written as
    // (a byte that is not UTF-8 becomes U+FFFD, three bytes for the escape's three).
    let decoded: usize =
        target.path.len() + target.params.iter().map(|(k, v)| k.len() + v.len()).sum::<usize>();
    assert!(decoded <= raw.len(), "{raw:?} decoded longer");
    // Without escapes or `+`, the path is the target's as written.
    if !raw.contains(['%', '+']) {
        let path = raw.split_once('?').map_or(raw, |(p, _)| p);
        assert_eq!(target.path, path);
    }
}
