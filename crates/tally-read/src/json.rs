//! A value as JSON for every front end that answers in JSON (`tally health --json`, the board's
//! API): a number, or the string `"NaN"`, `"Infinity"` or `"-Infinity"`, which JSON has not and
//! JavaScript's `Number()` reads back (`docs/contract/board.md` "The API").

use serde_json::Value;

/// `v` as a JSON number, or its token when it is not finite.
pub fn number(v: f64) -> Value {
    if v.is_nan() {
        Value::from("NaN")
    } else if v.is_infinite() {
        Value::from(if v > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finite_values_are_numbers_and_the_others_tokens() {
        assert_eq!(number(0.5), serde_json::json!(0.5));
        assert_eq!(number(f64::NAN), serde_json::json!("NaN"));
        assert_eq!(number(f64::INFINITY), serde_json::json!("Infinity"));
        assert_eq!(number(f64::NEG_INFINITY), serde_json::json!("-Infinity"));
    }
}
