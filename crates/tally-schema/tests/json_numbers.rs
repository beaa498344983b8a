//! Artefacts keep the user's configuration as JSON (`run_config.json`'s `config`), so a number
//! must read back as the same float after tally writes it and reads it again
//! (docs/contract/untrusted-input.md "How it is checked": found by the `run_config` fuzz target).

use serde_json::Value;

fn write_then_read(text: &str) -> (Value, Value) {
    let first: Value = serde_json::from_str(text).unwrap();
    let again: Value = serde_json::from_str(&serde_json::to_string(&first).unwrap()).unwrap();
    (first, again)
}

#[test]
fn a_long_decimal_reads_back_as_the_same_float() {
    // 124 significant digits: the shortest float that prints back must be the nearest one.
    let digits = format!("4{}", "5".repeat(123));
    let (first, again) = write_then_read(&format!(r#"{{"lr": {digits}}}"#));
    assert_eq!(first, again);
    let parsed: f64 = digits.parse().unwrap();
    assert_eq!(
        first["lr"].as_f64(),
        Some(parsed),
        "serde_json reads the nearest float"
    );
}

#[test]
fn the_run_config_that_broke_the_round_trip_now_survives_it() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fuzz/regressions/run_config/long-decimal"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let config: tally_schema::artifacts::RunConfig = serde_json::from_str(&text).unwrap();
    let again: tally_schema::artifacts::RunConfig =
        serde_json::from_str(&serde_json::to_string(&config).unwrap()).unwrap();
    assert_eq!(again, config);
}
