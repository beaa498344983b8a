//! Number and time formatting shared by the panel and the plain-text summary
//! (`docs/contract/panel.md`).

/// A duration: `<60 s` → `"12s"`; `<1 h` → `"3m05s"`; else `"1h02m03s"` (whole seconds).
pub fn time(secs: f64) -> String {
    let s = if secs.is_finite() && secs > 0.0 {
        secs as u64
    } else {
        0
    };
    if s < 60 {
        format!("{s}s")
    } else if s < 3600 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{}h{:02}m{:02}s", s / 3600, (s % 3600) / 60, s % 60)
    }
}

/// A metric value: 0 → `"0"`; |v| ≥ 1e6 → `"1.23e+06"`; ≥ 100 → one decimal; ≥ 1 → three;
/// ≥ 0.001 → four; smaller → scientific.
pub fn number(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    let a = v.abs();
    if v == 0.0 {
        "0".into()
    } else if a >= 1e6 {
        sci(v)
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.3}")
    } else if a >= 0.001 {
        format!("{v:.4}")
    } else {
        sci(v)
    }
}

/// The reward row's figures: `decimals` fixed decimals, scientific (as [`number`]) from 1e6 up,
/// where fixed notation would print every digit and cut the row.
pub fn reward(v: f64, decimals: usize) -> String {
    if v.is_finite() && v.abs() >= 1e6 {
        sci(v)
    } else {
        format!("{v:.decimals$}")
    }
}

/// Python's `{:.2e}`: two decimals and a signed two-digit exponent (`1.23e+06`).
fn sci(v: f64) -> String {
    let s = format!("{v:.2e}");
    match s.split_once('e') {
        Some((m, e)) => {
            let (sign, digits) = match e.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', e),
            };
            format!("{m}e{sign}{digits:0>2}")
        }
        None => s,
    }
}

/// `{:,.0f}`: rounded to an integer with thousands separators.
pub fn grouped(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    let r = v.round();
    let digits = format!("{}", r.abs() as u128);
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if r < 0.0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A count or gauge: grouped when it is a whole number (a window mean may not be).
pub fn count(v: f64) -> String {
    if v.is_finite() && (v - v.round()).abs() < 1e-9 {
        grouped(v)
    } else {
        number(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_shows_seconds_then_minutes_then_hours() {
        assert_eq!(time(2.4), "2s");
        assert_eq!(time(59.9), "59s");
        assert_eq!(time(65.0), "1m05s");
        assert_eq!(time(3723.0), "1h02m03s");
        assert_eq!(time(-1.0), "0s");
    }

    #[test]
    fn number_precision_follows_the_magnitude_bands() {
        assert_eq!(number(0.0), "0");
        assert_eq!(number(1234567.0), "1.23e+06");
        assert_eq!(number(123.45), "123.5");
        assert_eq!(number(4.56789), "4.568");
        assert_eq!(number(0.01234), "0.0123");
        assert_eq!(number(0.0000123), "1.23e-05");
        assert_eq!(number(-2.5), "-2.500");
    }

    #[test]
    fn reward_keeps_fixed_decimals_below_a_million_then_goes_scientific() {
        assert_eq!(reward(23.4567, 3), "23.457");
        assert_eq!(reward(-999_999.0, 2), "-999999.00");
        assert_eq!(reward(1e300, 3), "1.00e+300");
        assert_eq!(reward(-2.5e7, 2), "-2.50e+07");
        assert_eq!(reward(f64::NAN, 3), "NaN");
    }

    #[test]
    fn grouped_inserts_thousands_separators() {
        assert_eq!(grouped(0.0), "0");
        assert_eq!(grouped(999.4), "999");
        assert_eq!(grouped(1000.0), "1,000");
        assert_eq!(grouped(1234567.0), "1,234,567");
        assert_eq!(grouped(-45678.0), "-45,678");
        assert_eq!(count(8.0), "8");
        assert_eq!(count(1.5), "1.500");
    }
}
