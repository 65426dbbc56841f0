//! Go's `fmt.Sprintf` over template values, for `printf`: the verbs charts use, with Go's own forms for a
//! mismatched verb or argument count (`%!d(string=x)`, `%!s(MISSING)`).

use crate::helm::gofmt::{float_v, quote};
use crate::helm::value::Value;

/// `fmt.Sprintf` for the verbs charts use (`%s %v %d %q %t %f %g %e %x %X %o %b %c %%`, with flags, width and
/// precision). Mismatched verbs and argument counts print as Go prints them (`%!d(string=x)`, `%!s(MISSING)`).
pub(crate) fn sprintf(format: &str, args: &[Value]) -> String {
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
