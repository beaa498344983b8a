//! Request heads as the board reads them (`tally_board::wire::parse_head`): every byte a
//! client sends before the blank line.

use tally_board::wire::parse_head;

/// Fuzz target `http_head`: the input as a request head.
pub fn http_head(input: &[u8]) {
    match parse_head(input) {
        Ok(request) => {
            // What is accepted is the request line's three words, and headers found by name in
            // any case.
            assert!(request.target.starts_with('/'));
            assert!(!request.method.is_empty());
            let text = std::str::from_utf8(input).expect("an accepted head is UTF-8");
            let line = text.split("\r\n").next().unwrap_or_default();
            assert!(line.starts_with(&format!("{} {} HTTP/1.", request.method, request.target)));
            for header in text.split("\r\n").skip(1) {
                let (name, _) = header.split_once(':').expect("an accepted header has `:`");
                assert!(request.header(name).is_some());
                assert!(request.header(&name.to_ascii_uppercase()).is_some());
            }
        }
        Err(refused) => {
            assert!([400, 413, 505].contains(&refused.status), "{refused:?}");
            assert!(!refused.why.is_empty());
        }
    }
}
