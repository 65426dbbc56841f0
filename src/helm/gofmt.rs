//! Go's `fmt` and `strconv` text forms that decide what a chart renders: `%v` of a `float64` (Helm's values are
//! floats, so `replicas: 1000000` prints `1e+06`), `encoding/json`'s numbers, `strconv.Quote`, and `printf`.

use super::value::Value;

/// `fmt.Sprint(x)` of a `float64`: the shortest digits that read back as `x`, in `%e` form when the exponent is
/// below -4 or at least 6 (strconv's `'g'` with the shortest precision).
pub fn float_v(x: f64) -> String {
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
pub fn json_number(x: f64) -> serde_json::Value {
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
pub fn json_float_text(x: f64) -> String {
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
pub fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
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

/// `fmt.Sprintf` for the verbs charts use (`%s %v %d %q %t %f %g %e %x %X %o %b %c %%`, with flags, width and
/// precision). Mismatched verbs and argument counts print as Go prints them (`%!d(string=x)`, `%!s(MISSING)`).
pub fn sprintf(format: &str, args: &[Value]) -> String {
    let mut out = String::new();
    let mut args_used = 0;
    let chars: Vec<char> = format.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c != '%' {
            out.push(c);
            i += 1;
            continue;
        }
        i += 1;
        let mut spec = Spec::default();
        while i < chars.len() {
            match chars[i] {
                '-' => spec.minus = true,
                '+' => spec.plus = true,
                '#' => spec.sharp = true,
                '0' => spec.zero = true,
                ' ' => spec.space = true,
                _ => break,
            }
            i += 1;
        }
        spec.width = number(&chars, &mut i);
        if i < chars.len() && chars[i] == '.' {
            i += 1;
            spec.precision = Some(number(&chars, &mut i).unwrap_or(0));
        }
        let Some(&verb) = chars.get(i) else {
            out.push_str("%!(NOVERB)");
            break;
        };
        i += 1;
        if verb == '%' {
            out.push('%');
            continue;
        }
        let Some(arg) = args.get(args_used) else {
            out.push_str(&format!("%!{verb}(MISSING)"));
            continue;
        };
        args_used += 1;
        out.push_str(&spec.pad(format_one(verb, &spec, arg)));
    }
    if args_used < args.len() {
        out.push_str("%!(EXTRA ");
        let extra: Vec<String> = args[args_used..].iter().map(|a| format!("{}={}", a.type_name(), a)).collect();
        out.push_str(&extra.join(", "));
        out.push(')');
    }
    out
}

#[derive(Default)]
struct Spec {
    minus: bool,
    plus: bool,
    sharp: bool,
    zero: bool,
    space: bool,
    width: Option<usize>,
    precision: Option<usize>,
}

impl Spec {
    fn pad(&self, text: String) -> String {
        let Some(width) = self.width else { return text };
        let len = text.chars().count();
        if len >= width {
            return text;
        }
        let fill = width - len;
        if self.minus {
            format!("{text}{}", " ".repeat(fill))
        } else if self.zero {
            match text.strip_prefix('-') {
                Some(rest) => format!("-{}{rest}", "0".repeat(fill)),
                None => format!("{}{text}", "0".repeat(fill)),
            }
        } else {
            format!("{}{text}", " ".repeat(fill))
        }
    }
}

fn number(chars: &[char], i: &mut usize) -> Option<usize> {
    let start = *i;
    while *i < chars.len() && chars[*i].is_ascii_digit() {
        *i += 1;
    }
    chars[start..*i].iter().collect::<String>().parse().ok()
}

fn bad(verb: char, arg: &Value) -> String {
    match arg {
        Value::Nil => format!("%!{verb}(<nil>)"),
        other => format!("%!{verb}({}={other})", other.type_name()),
    }
}

fn format_one(verb: char, spec: &Spec, arg: &Value) -> String {
    match (verb, arg) {
        ('v', Value::Str(s)) if spec.sharp => quote(s),
        ('v', other) => {
            let text = other.to_string();
            match (other, spec.plus) {
                (Value::Int(_) | Value::Float(_), true) if !text.starts_with('-') => format!("+{text}"),
                _ => text,
            }
        }
        ('s', Value::Str(s)) => match spec.precision {
            Some(p) => s.chars().take(p).collect(),
            None => s.to_string(),
        },
        ('s', Value::List(items)) => {
            let parts: Vec<String> = items.borrow().iter().map(|v| format_one('s', spec, v)).collect();
            format!("[{}]", parts.join(" "))
        }
        ('s', Value::Map(m)) => {
            let parts: Vec<String> =
                m.borrow().iter().map(|(k, v)| format!("{k}:{}", format_one('s', spec, v))).collect();
            format!("map[{}]", parts.join(" "))
        }
        ('q', Value::Str(s)) => quote(s),
        ('q', Value::Int(n)) => char::from_u32(*n as u32).map(|c| format!("'{c}'")).unwrap_or_else(|| bad(verb, arg)),
        ('t', Value::Bool(b)) => b.to_string(),
        ('d', Value::Int(n)) => signed(spec, n.to_string()),
        ('c', Value::Int(n)) => char::from_u32(*n as u32).map(String::from).unwrap_or_else(|| bad(verb, arg)),
        ('x', Value::Int(n)) => signed(spec, prefixed(spec, "0x", format!("{:x}", n))),
        ('X', Value::Int(n)) => signed(spec, prefixed(spec, "0X", format!("{:X}", n))),
        ('o', Value::Int(n)) => signed(spec, prefixed(spec, "0", format!("{:o}", n))),
        ('b', Value::Int(n)) => signed(spec, format!("{:b}", n)),
        ('x', Value::Str(s)) => s.bytes().map(|b| format!("{b:02x}")).collect(),
        ('X', Value::Str(s)) => s.bytes().map(|b| format!("{b:02X}")).collect(),
        ('f' | 'F', Value::Float(x)) => signed(spec, format!("{:.*}", spec.precision.unwrap_or(6), x)),
        ('e', Value::Float(x)) => signed(spec, go_exponent(*x, spec.precision.unwrap_or(6))),
        ('g', Value::Float(x)) => signed(spec, float_v(*x)),
        _ => bad(verb, arg),
    }
}

fn signed(spec: &Spec, text: String) -> String {
    if text.starts_with('-') {
        text
    } else if spec.plus {
        format!("+{text}")
    } else if spec.space {
        format!(" {text}")
    } else {
        text
    }
}

fn prefixed(spec: &Spec, prefix: &str, digits: String) -> String {
    if spec.sharp {
        format!("{prefix}{digits}")
    } else {
        digits
    }
}

fn go_exponent(x: f64, precision: usize) -> String {
    let text = format!("{:.*e}", precision, x);
    match text.split_once('e') {
        Some((mantissa, exp)) => {
            let exp: i32 = exp.parse().unwrap_or(0);
            format!("{mantissa}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
        }
        None => text,
    }
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

    #[test]
    fn printf_follows_go() {
        let s = Value::str;
        assert_eq!(sprintf("%s-%s", &[s("a"), s("b")]), "a-b");
        assert_eq!(sprintf("%d", &[Value::Int(5)]), "5");
        assert_eq!(sprintf("%d", &[Value::Float(5.0)]), "%!d(float64=5)");
        assert_eq!(sprintf("%s", &[Value::Float(2.0)]), "%!s(float64=2)");
        assert_eq!(sprintf("%v", &[Value::Float(1e6)]), "1e+06");
        assert_eq!(sprintf("%q", &[s("a\"b\n")]), "\"a\\\"b\\n\"");
        assert_eq!(sprintf("%s %s", &[s("a")]), "a %!s(MISSING)");
        assert_eq!(sprintf("%s", &[s("a"), Value::Int(1)]), "a%!(EXTRA int=1)");
        assert_eq!(sprintf("%05d|%-4s|%.2f", &[Value::Int(42), s("ab"), Value::Float(1.23456)]), "00042|ab  |1.23");
        assert_eq!(sprintf("%v", &[Value::Nil]), "<nil>");
    }
}
