//! The configuration a run's text says: a two-column Markdown table headed `|param|value|`
//! (CleanRL's `hyperparameters`, whoever wrote it), and `key=value` folder names, with values
//! read back as JSON (docs/contract/consumers.md "A run's configuration").

use serde_json::Value;

/// The rows of a two-column Markdown table headed `|param|value|`, each value read by
/// [`cell_value`]; `None` for any other text.
pub fn param_table(text: &str) -> Option<Vec<(String, Value)>> {
    let lines: Vec<&str> = text.trim().lines().map(str::trim).collect();
    let [head, rule, rows @ ..] = lines.as_slice() else {
        return None;
    };
    let head: Vec<String> = head
        .trim_matches('|')
        .split('|')
        .map(|c| c.trim().to_lowercase())
        .collect();
    if head != ["param", "value"] {
        return None;
    }
    if rule.is_empty() || rule.chars().any(|c| !"|-: ".contains(c)) {
        return None;
    }
    let mut out: Vec<(String, Value)> = Vec::new();
    for line in rows {
        let (key, value) = line
            .strip_prefix('|')?
            .trim_end_matches('|')
            .split_once('|')?;
        let key = key.trim().to_owned();
        let value = cell_value(value.trim());
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => out.push((key, value)),
        }
    }
    Some(out)
}

/// A value written as text by Python's `str` (what CleanRL's table and a folder name hold),
/// read back: `True`, `False` and `None` as JSON's, an integer or a finite number as a number,
/// anything else (`nan`, `inf` included) as the text itself.
pub fn cell_value(s: &str) -> Value {
    match s {
        "True" => return Value::Bool(true),
        "False" => return Value::Bool(false),
        "None" => return Value::Null,
        _ => {}
    }
    if let Ok(i) = s.parse::<i64>() {
        return Value::from(i);
    }
    s.parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map_or_else(|| Value::String(s.to_owned()), Value::Number)
}

/// The `key=value` pairs of a folder's name (`lr=0.001`, or Hydra's `lr=0.001,seed=3`): every
/// comma-separated part must be one, with a key of letters, digits, `_`, `-` or `.`; else none.
pub fn path_pairs(segment: &str) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for part in segment.split(',') {
        let Some((key, value)) = part.split_once('=') else {
            return Vec::new();
        };
        let good = |c: char| c.is_ascii_alphanumeric() || "_-.".contains(c);
        if key.is_empty() || !key.chars().all(good) {
            return Vec::new();
        }
        out.push((key.to_owned(), cell_value(value)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_param_value_table_reads_its_rows_and_other_text_reads_nothing() {
        let table = "|param|value|\n|-|-|\n|learning_rate|0.00025|\n|env_id|CartPole-v1|\n\
                     |cuda|True|\n|seed|1|\n|target_kl|None|";
        let rows = param_table(table).unwrap();
        assert_eq!(
            rows,
            vec![
                ("learning_rate".to_owned(), json!(0.00025)),
                ("env_id".to_owned(), json!("CartPole-v1")),
                ("cuda".to_owned(), json!(true)),
                ("seed".to_owned(), json!(1)),
                ("target_kl".to_owned(), Value::Null),
            ]
        );
        assert_eq!(
            param_table("| Param | Value |\n|:--|:--|\n| a | nan |").unwrap()[0].1,
            json!("nan")
        );
        for other in ["lr 0.1", "|k|v|\n|-|-|\n|a|1|", "|param|value|\n|a|1|", ""] {
            assert_eq!(param_table(other), None, "{other:?}");
        }
    }

    #[test]
    fn folder_names_of_key_value_pairs_read_each_and_others_none() {
        assert_eq!(
            path_pairs("lr=0.001"),
            vec![("lr".to_owned(), json!(0.001))]
        );
        assert_eq!(
            path_pairs("lr=0.1,seed=3"),
            vec![("lr".to_owned(), json!(0.1)), ("seed".to_owned(), json!(3))]
        );
        for other in ["run_1", "a=1,b", "=1", "x y=1", "2024-01-01"] {
            assert!(path_pairs(other).is_empty(), "{other:?}");
        }
    }
}
