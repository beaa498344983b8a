//! Pins `parse_metric_key` and the canonical key (`docs/contract/rft.md` "Aggregation suffixes").

use tally_aggregate::{canonical_key, parse_metric_key, AggType};

#[test]
fn parse_metric_key_matches_trinity() {
    // Only the last colon counts, only the five exact lowercase words are suffixes; each row
    // was checked against trinity-rft 0.6.0.
    let table: [(&str, &str, AggType); 17] = [
        ("reward", "reward", AggType::Mean),
        ("reward:mean", "reward", AggType::Mean),
        ("ns:metric_name:sum", "ns:metric_name", AggType::Sum),
        ("some:unknown_suffix", "some:unknown_suffix", AggType::Mean),
        ("a:MEAN", "a:MEAN", AggType::Mean),
        ("a:Sum", "a:Sum", AggType::Mean),
        ("a: sum", "a: sum", AggType::Mean),
        ("a:sum ", "a:sum ", AggType::Mean),
        ("a:", "a:", AggType::Mean),
        ("a:sum:", "a:sum:", AggType::Mean),
        (":sum", "", AggType::Sum),
        ("a::sum", "a:", AggType::Sum),
        ("x:sum:mean", "x:sum", AggType::Mean),
        ("", "", AggType::Mean),
        (":", ":", AggType::Mean),
        ("m:last", "m", AggType::Last),
        ("p:max", "p", AggType::Max),
    ];
    for (key, name, agg) in table {
        assert_eq!(parse_metric_key(key), (name, agg), "key {key:?}");
    }
    assert_eq!(parse_metric_key("p:min"), ("p", AggType::Min));
}

#[test]
fn canonical_key_merges_mean_and_keeps_other_suffixes() {
    // `a:mean` and `a` merge; `x:sum:mean` shares `x:sum` with `x:sum`.
    let (n, a) = parse_metric_key("a:mean");
    assert_eq!(canonical_key(n, a), "a");
    let (n, a) = parse_metric_key("x:sum:mean");
    assert_eq!(canonical_key(n, a), "x:sum");
    let (n, a) = parse_metric_key("x:sum");
    assert_eq!(canonical_key(n, a), "x:sum");
    assert_eq!(AggType::Last.to_string(), "last");
}
