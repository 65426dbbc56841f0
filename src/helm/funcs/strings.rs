//! sprig's string functions. Their argument order is sprig's, made for pipelines: the string operated on comes
//! last (`trimSuffix "-" .name`, `contains $needle .haystack`). Lengths and offsets count bytes, as Go's do.

use base64::Engine;
use sha2::Digest;

use super::{count, int, string, strval, Result};
use crate::helm::gofmt;
use crate::helm::value::Value;

pub(super) fn call(name: &str, args: &[Value]) -> Result<Option<Value>> {
    let text = |s: String| Ok(Some(Value::str(s)));
    let one = |args: &[Value]| -> Result<String> {
        count(args, 1, 1)?;
        Ok(string(args, 0)?.to_string())
    };
    match name {
        "upper" => text(one(args)?.to_uppercase()),
        "lower" => text(one(args)?.to_lowercase()),
        "title" => text(title(&one(args)?)),
        "untitle" => text(untitle(&one(args)?)),
        "trim" => text(one(args)?.trim().to_string()),
        "nospace" => text(one(args)?.chars().filter(|c| !c.is_whitespace()).collect()),
        "initials" => text(one(args)?.split_whitespace().filter_map(|w| w.chars().next()).collect()),
        "snakecase" => text(words(&one(args)?).join("_").to_lowercase()),
        "kebabcase" => text(words(&one(args)?).join("-").to_lowercase()),
        "camelcase" => text(one(args)?.split('_').map(capitalized).collect()),
        "b64enc" => text(base64::engine::general_purpose::STANDARD.encode(one(args)?)),
        "b64dec" => {
            let decoded = base64::engine::general_purpose::STANDARD.decode(one(args)?).map_err(|e| e.to_string());
            text(match decoded {
                Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                Err(e) => e,
            })
        }
        "sha256sum" => {
            let digest = sha2::Sha256::digest(one(args)?.as_bytes());
            text(digest.iter().map(|b| format!("{b:02x}")).collect())
        }
        "regexQuoteMeta" => text(one(args)?.chars().fold(String::new(), |mut out, c| {
            if r"\.+*?()|[]{}^$".contains(c) {
                out.push('\\');
            }
            out.push(c);
            out
        })),
        "repeat" => {
            count(args, 2, 2)?;
            text(string(args, 1)?.repeat(usize::try_from(int(args, 0)?).unwrap_or(0)))
        }
        "substr" => {
            count(args, 3, 3)?;
            let (start, end, s) = (int(args, 0)?, int(args, 1)?, string(args, 2)?);
            let len = s.len() as i64;
            let part = if start < 0 {
                s.get(..end.clamp(0, len) as usize)
            } else if end < 0 || end > len {
                s.get(start.min(len) as usize..)
            } else {
                s.get(start.min(end) as usize..end as usize)
            };
            text(part.unwrap_or_default().to_string())
        }
        "trunc" => {
            count(args, 2, 2)?;
            let (c, s) = (int(args, 0)?, string(args, 1)?);
            let len = s.len() as i64;
            let cut = if c < 0 && len + c > 0 {
                s.get((len + c) as usize..)
            } else if c >= 0 && len > c {
                s.get(..c as usize)
            } else {
                Some(s)
            };
            text(cut.unwrap_or(s).to_string())
        }
        "trimAll" => {
            count(args, 2, 2)?;
            let cutset: Vec<char> = string(args, 0)?.chars().collect();
            text(string(args, 1)?.trim_matches(|c| cutset.contains(&c)).to_string())
        }
        "trimPrefix" => {
            count(args, 2, 2)?;
            let (prefix, s) = (string(args, 0)?, string(args, 1)?);
            text(s.strip_prefix(prefix).unwrap_or(s).to_string())
        }
        "trimSuffix" => {
            count(args, 2, 2)?;
            let (suffix, s) = (string(args, 0)?, string(args, 1)?);
            text(s.strip_suffix(suffix).unwrap_or(s).to_string())
        }
        "abbrev" => {
            count(args, 2, 2)?;
            let (width, s) = (int(args, 0)?, string(args, 1)?);
            if width < 4 || s.len() as i64 <= width {
                return text(s.to_string());
            }
            text(format!("{}...", s.get(..(width - 3) as usize).unwrap_or(s)))
        }
        "contains" | "hasPrefix" | "hasSuffix" => {
            count(args, 2, 2)?;
            let (needle, s) = (string(args, 0)?, string(args, 1)?);
            Ok(Some(Value::Bool(match name {
                "contains" => s.contains(needle),
                "hasPrefix" => s.starts_with(needle),
                _ => s.ends_with(needle),
            })))
        }
        "quote" => text(
            args.iter()
                .filter(|a| !matches!(a, Value::Nil))
                .map(|a| gofmt::quote(&strval(a)))
                .collect::<Vec<_>>()
                .join(" "),
        ),
        "squote" => text(
            args.iter()
                .filter(|a| !matches!(a, Value::Nil))
                .map(|a| format!("'{}'", strval(a)))
                .collect::<Vec<_>>()
                .join(" "),
        ),
        "cat" => text(args.iter().filter(|a| !matches!(a, Value::Nil)).map(strval).collect::<Vec<_>>().join(" ")),
        "indent" | "nindent" => {
            count(args, 2, 2)?;
            let pad = " ".repeat(usize::try_from(int(args, 0)?).unwrap_or(0));
            let indented = format!("{pad}{}", string(args, 1)?.replace('\n', &format!("\n{pad}")));
            text(if name == "nindent" { format!("\n{indented}") } else { indented })
        }
        "replace" => {
            count(args, 3, 3)?;
            text(string(args, 2)?.replace(string(args, 0)?, string(args, 1)?))
        }
        "plural" => {
            count(args, 3, 3)?;
            text(if int(args, 2)? == 1 { string(args, 0)? } else { string(args, 1)? }.to_string())
        }
        "splitList" => {
            count(args, 2, 2)?;
            let (sep, s) = (string(args, 0)?, string(args, 1)?);
            Ok(Some(Value::list(go_split(s, sep, -1).into_iter().map(Value::str).collect())))
        }
        "split" | "splitn" => {
            let (sep, n, s) = if name == "split" {
                count(args, 2, 2)?;
                (string(args, 0)?, -1, string(args, 1)?)
            } else {
                count(args, 3, 3)?;
                (string(args, 0)?, int(args, 1)?, string(args, 2)?)
            };
            let parts = go_split(s, sep, n);
            Ok(Some(Value::map(parts.into_iter().enumerate().map(|(i, p)| (format!("_{i}"), Value::str(p))).collect())))
        }
        "join" => {
            count(args, 2, 2)?;
            text(strslice(&args[1]).join(string(args, 0)?))
        }
        "sortAlpha" => {
            count(args, 1, 1)?;
            let mut items = strslice(&args[0]);
            items.sort();
            Ok(Some(Value::list(items.into_iter().map(Value::str).collect())))
        }
        "toString" => {
            count(args, 1, 1)?;
            text(strval(&args[0]))
        }
        "toStrings" => {
            count(args, 1, 1)?;
            Ok(Some(Value::list(strslice(&args[0]).into_iter().map(Value::str).collect())))
        }
        "regexMatch" | "mustRegexMatch" => {
            count(args, 2, 2)?;
            Ok(Some(Value::Bool(regex(string(args, 0)?)?.is_match(string(args, 1)?))))
        }
        "regexFind" => {
            count(args, 2, 2)?;
            text(regex(string(args, 0)?)?.find(string(args, 1)?).map(|m| m.as_str().to_string()).unwrap_or_default())
        }
        "regexFindAll" => {
            count(args, 3, 3)?;
            let n = int(args, 2)?;
            let re = regex(string(args, 0)?)?;
            let found = re.find_iter(string(args, 1)?).map(|m| Value::str(m.as_str()));
            let found: Vec<Value> = if n < 0 { found.collect() } else { found.take(n as usize).collect() };
            Ok(Some(Value::list(found)))
        }
        "regexReplaceAll" => {
            count(args, 3, 3)?;
            text(regex(string(args, 0)?)?.replace_all(string(args, 1)?, string(args, 2)?).into_owned())
        }
        "regexReplaceAllLiteral" => {
            count(args, 3, 3)?;
            text(regex(string(args, 0)?)?.replace_all(string(args, 1)?, regex::NoExpand(string(args, 2)?)).into_owned())
        }
        "regexSplit" => {
            count(args, 3, 3)?;
            let n = int(args, 2)?;
            let re = regex(string(args, 0)?)?;
            let s = string(args, 1)?;
            let parts: Vec<Value> = if n < 0 {
                re.split(s).map(Value::str).collect()
            } else {
                re.splitn(s, n as usize).map(Value::str).collect()
            };
            Ok(Some(Value::list(parts)))
        }
        _ => Ok(None),
    }
}

/// sprig's `strslice`: a list's items as strings (nil items dropped), or the one value.
pub(super) fn strslice(value: &Value) -> Vec<String> {
    match value {
        Value::List(items) => items.borrow().iter().filter(|v| !matches!(v, Value::Nil)).map(strval).collect(),
        Value::Nil => Vec::new(),
        other => vec![strval(other)],
    }
}

fn regex(pattern: &str) -> Result<regex::Regex> {
    regex::Regex::new(pattern).map_err(|e| format!("error parsing regexp: {e}"))
}

/// Go's `strings.SplitN` (`n < 0`: all; an empty separator splits after each character).
fn go_split(s: &str, sep: &str, n: i64) -> Vec<String> {
    if n == 0 {
        return Vec::new();
    }
    if sep.is_empty() {
        let chars: Vec<String> = s.chars().map(String::from).collect();
        if n < 0 || chars.len() <= n as usize {
            return chars;
        }
        let mut head: Vec<String> = chars[..n as usize - 1].to_vec();
        head.push(chars[n as usize - 1..].concat());
        return head;
    }
    if n < 0 {
        s.split(sep).map(String::from).collect()
    } else {
        s.splitn(n as usize, sep).map(String::from).collect()
    }
}

/// Go's `strings.Title`: upper-cases each letter that follows a separator (anything but a letter, digit,
/// underscore or mark).
fn title(s: &str) -> String {
    recase_after(s, |c| !(c.is_alphanumeric() || c == '_'), |c, out| out.extend(c.to_uppercase()))
}

/// Sprig's `untitle`: lower-cases each letter that follows white space.
fn untitle(s: &str) -> String {
    recase_after(s, char::is_whitespace, |c, out| out.extend(c.to_lowercase()))
}

/// `s` with `recase` applied to its first character and to each that follows one `ends_word` holds for.
fn recase_after(s: &str, ends_word: impl Fn(char) -> bool, recase: impl Fn(char, &mut String)) -> String {
    let mut out = String::with_capacity(s.len());
    let mut word_start = true;
    for c in s.chars() {
        if word_start {
            recase(c, &mut out);
        } else {
            out.push(c);
        }
        word_start = ends_word(c);
    }
    out
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Words of an identifier for `snakecase`/`kebabcase`: split at separators and before upper-case letters.
fn words(s: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    for c in s.chars() {
        if c == '_' || c == '-' || c.is_whitespace() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            continue;
        }
        if c.is_uppercase() && !current.is_empty() && !current.ends_with(|p: char| p.is_uppercase()) {
            words.push(std::mem::take(&mut current));
        }
        current.push(c);
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn title_upper_cases_after_separators_and_untitle_lower_cases_after_spaces() {
        assert_eq!(title("hello wORLD-foo_bar 9lives"), "Hello WORLD-Foo_bar 9lives");
        assert_eq!(title(""), "");
        assert_eq!(untitle("Hello World-Wide  ÉTÉ"), "hello world-Wide  éTÉ");
    }
}
