//! The runs table's column types, one rule for every front end that types them (`tally.runs`
//! and SQL's `runs` through Arrow, the Parquet dataset's runs files): docs/contract/consumers.md
//! "The runs table", its "Types" bullet.

use serde_json::Value;
use std::collections::HashMap;

/// The figures of a chosen tag, as the flat columns name them (`<tag>:<figure>`).
pub const TAG_FIGURES: [&str; 8] = [
    "count",
    "last",
    "min",
    "max",
    "max_step",
    "final_mean",
    "last_step",
    "nonfinite",
];

/// A column's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// true / false.
    Bool,
    /// A 64-bit integer.
    Int,
    /// A double.
    Float,
    /// Text: strings as they are, any other value as its JSON text ([`text`]).
    Str,
    /// Seconds since the epoch, shown as a UTC timestamp (`start`).
    Timestamp,
}

/// The type a column has whatever its values: the run's own columns and the tag figures.
fn fixed(name: &str) -> Option<Kind> {
    let kind = match name {
        "run" | "dir" | "status" | "health" => Kind::Str,
        "start" => Kind::Timestamp,
        "duration" => Kind::Float,
        "last_step" | "points" | "findings" => Kind::Int,
        _ if name.starts_with("config.") => return None,
        _ => match name.rsplit_once(':')?.1 {
            "count" | "max_step" | "last_step" | "nonfinite" => Kind::Int,
            "last" | "min" | "max" | "final_mean" => Kind::Float,
            _ => return None,
        },
    };
    Some(kind)
}

/// The type of one value (`None` for null).
fn kind_of(v: &Value) -> Option<Kind> {
    match v {
        Value::Null => None,
        Value::Bool(_) => Some(Kind::Bool),
        Value::Number(n) if n.is_i64() => Some(Kind::Int),
        Value::Number(_) => Some(Kind::Float),
        _ => Some(Kind::Str),
    }
}

/// The type holding values of both: integers widen to doubles, any other mix is text.
fn widen(a: Kind, b: Kind) -> Kind {
    match (a, b) {
        _ if a == b => a,
        (Kind::Int, Kind::Float) | (Kind::Float, Kind::Int) => Kind::Float,
        _ => Kind::Str,
    }
}

/// Every column of `rows` (flat rows, [`crate::runs::RunRow::flat`]) in the order first met,
/// each with its type: fixed for the run's own columns and the tag figures, else the type
/// holding all of the column's values (text when all are null).
pub fn column_types(rows: &[Vec<(String, Value)>]) -> Vec<(String, Kind)> {
    let mut columns: Vec<(String, Option<Kind>)> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for row in rows {
        for (key, v) in row {
            let i = *index.entry(key).or_insert_with(|| {
                columns.push((key.clone(), fixed(key)));
                columns.len() - 1
            });
            if fixed(key).is_some() {
                continue;
            }
            if let Some(k) = kind_of(v) {
                let c = &mut columns[i].1;
                *c = Some(c.map_or(k, |c| widen(c, k)));
            }
        }
    }
    columns
        .into_iter()
        .map(|(n, k)| (n, k.unwrap_or(Kind::Str)))
        .collect()
}

/// A [`Kind::Timestamp`] value: seconds since the epoch as whole microseconds.
pub fn micros(seconds: f64) -> i64 {
    (seconds * 1e6).round() as i64
}

/// A value of a [`Kind::Str`] column: a string as it is, any other value as its JSON text.
pub fn text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(pairs: &[(&str, Value)]) -> Vec<(String, Value)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect()
    }

    #[test]
    fn columns_are_the_union_of_keys_each_with_one_type_across_runs() {
        let rows = [
            row(&[
                ("dir", json!("/a")),
                ("start", Value::Null),
                ("config.lr", json!(1)),
                ("config.algo", json!("ppo")),
                ("config.on", json!(true)),
                ("ret:last", Value::Null),
            ]),
            row(&[
                ("dir", json!("/b")),
                ("config.lr", json!(0.5)),
                ("config.algo", json!(3)),
                ("config.none", Value::Null),
                ("config.list", json!([1, 2])),
                ("ret:count", json!(3)),
            ]),
        ];
        let got = column_types(&rows);
        let got: Vec<(&str, Kind)> = got.iter().map(|(n, k)| (n.as_str(), *k)).collect();
        assert_eq!(
            got,
            [
                ("dir", Kind::Str),
                ("start", Kind::Timestamp),
                ("config.lr", Kind::Float),
                ("config.algo", Kind::Str),
                ("config.on", Kind::Bool),
                ("ret:last", Kind::Float),
                ("config.none", Kind::Str),
                ("config.list", Kind::Str),
                ("ret:count", Kind::Int),
            ]
        );
        assert_eq!(text(&json!(3)).as_deref(), Some("3"));
        assert_eq!(text(&json!("ppo")).as_deref(), Some("ppo"));
        assert_eq!(text(&json!([1, 2])).as_deref(), Some("[1,2]"));
        assert_eq!(text(&Value::Null), None);
    }
}
