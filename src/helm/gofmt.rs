//! Go's `fmt` and `strconv` text forms that decide what a chart renders: `%v` of a `float64` (Helm's values are
//! floats, so `replicas: 1000000` prints `1e+06`), `encoding/json`'s numbers and `strconv.Quote`. Plain text in,
//! plain text out: `printf` over template values is `funcs::printf`.

/// `fmt.Sprint(x)` of a `float64`: the shortest digits that read back as `x`, in `%e` form when the exponent is
/// below -4 or at least 6 (strconv's `'g'` with the shortest precision).
pub(super) fn float_v(x: f64) -> String {
    if let Some(special) = non_finite(x) {
        return special;
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    let (negative, digits, exp) = shortest(x);
    let sign = if negative { "-" } else { "" };
    if !(-4..6).contains(&exp) {
        return format!("{sign}{}", exponent_form(&digits, exp));
    }
    format!("{sign}{}", fixed_form(&digits, exp))
}

/// `encoding/json`'s number for a `float64`: integers without a fraction, `%e` only for very large or small.
pub(super) fn json_number(x: f64) -> serde_json::Value {
    if x.fract() == 0.0 && x.abs() < 1e21 {
        if x.abs() < 9.0e15 {
            return serde_json::Value::from(x as i64);
        }
        if let Ok(n) = format!("{x:.0}").parse::<serde_json::Number>() {
            return serde_json::Value::Number(n);
        }
    }
    serde_json::Number::from_f64(x).map(serde_json::Value::Number).unwrap_or(serde_json::Value::Null)
}

/// The text `encoding/json` writes for a `float64` (`1e+21`, `0.000001`, `2`).
pub(super) fn json_float_text(x: f64) -> String {
    if let Some(special) = non_finite(x) {
        return special;
    }
    let abs = x.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let (negative, digits, exp) = shortest(x);
        let text = exponent_form(&digits, exp);
        // encoding/json trims the exponent's leading zero: 1e-07 → 1e-7.
        let text = text.replace("e-0", "e-").replace("e+0", "e+");
        return format!("{}{text}", if negative { "-" } else { "" });
    }
    if x == 0.0 {
        return "0".into();
    }
    let (negative, digits, exp) = shortest(x);
    format!("{}{}", if negative { "-" } else { "" }, fixed_form(&digits, exp))
}

fn non_finite(x: f64) -> Option<String> {
    if x.is_nan() {
        Some("NaN".into())
    } else if x.is_infinite() {
        Some(if x > 0.0 { "+Inf".into() } else { "-Inf".into() })
    } else {
        None
    }
}

/// Sign, shortest round-trip digits and decimal exponent of a finite, non-zero float (`1234.5` → `12345`, 3).
fn shortest(x: f64) -> (bool, String, i32) {
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    (x < 0.0, digits.to_string(), exp.parse().unwrap_or(0))
}

fn exponent_form(digits: &str, exp: i32) -> String {
    let (first, rest) = digits.split_at(1);
    let point = if rest.is_empty() { String::new() } else { format!(".{rest}") };
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{first}{point}e{sign}{:02}", exp.abs())
}

fn fixed_form(digits: &str, exp: i32) -> String {
    if exp < 0 {
        return format!("0.{}{digits}", "0".repeat((-exp - 1) as usize));
    }
    let whole = exp as usize + 1;
    if digits.len() <= whole {
        format!("{digits}{}", "0".repeat(whole - digits.len()))
    } else {
        format!("{}.{}", &digits[..whole], &digits[whole..])
    }
}

/// `strconv.Quote`: a double-quoted Go string literal.
pub(super) fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        if let Some(escaped) = short_escape(c) {
            out.push_str(escaped);
            continue;
        }
        match c {
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if c.is_control() => {
                if (c as u32) <= 0xffff {
                    out.push_str(&format!("\\u{:04x}", c as u32))
                } else {
                    out.push_str(&format!("\\U{:08x}", c as u32))
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The escapes Go's `strconv.Quote` and `encoding/json` share: the quote, the backslash, and newline, return and
/// tab by letter.
pub(super) fn short_escape(c: char) -> Option<&'static str> {
    Some(match c {
        '"' => "\\\"",
        '\\' => "\\\\",
        '\n' => "\\n",
        '\r' => "\\r",
        '\t' => "\\t",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_go_prints_them() {
        for (x, go) in [
            (2.0, "2"),
            (65532.0, "65532"),
            (100000.0, "100000"),
            (1000000.0, "1e+06"),
            (1234567.0, "1.234567e+06"),
            (0.5, "0.5"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-3.25, "-3.25"),
            (1e21, "1e+21"),
        ] {
            assert_eq!(float_v(x), go, "{x}");
        }
    }

    #[test]
    fn json_numbers_are_go_encoding_json_numbers() {
        assert_eq!(json_float_text(1000000.0), "1000000");
        assert_eq!(json_float_text(1e21), "1e+21");
        assert_eq!(json_float_text(0.0000001), "1e-7");
        assert_eq!(json_float_text(2.5), "2.5");
        assert_eq!(json_number(2.0).to_string(), "2");
    }
}
