#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| tally_fuzz::http_head(data));
