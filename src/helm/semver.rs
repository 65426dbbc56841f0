//! `semverCompare` as Helm evaluates it (Masterminds/semver v3): versions with an optional `v`, missing minor
//! and patch, pre-release and build parts; constraints joined by `,` or spaces (all) and `||` (any), with `=`,
//! `!=`, `>`, `<`, `>=`, `<=`, `~`, `^`, wildcards (`1.2.x`) and ranges (`1.2 - 1.4`). A pre-release version
//! satisfies only constraints that carry a pre-release themselves, which is why charts write `>= 1.21-0`:
//! EKS reports versions such as `v1.33.5-eks-3025e55`.

use std::cmp::Ordering;

use super::value::{Map, Value};

#[derive(Debug, Clone, PartialEq)]
struct Version {
    major: u64,
    minor: u64,
    patch: u64,
    pre: String,
    build: String,
}

fn parse_version(text: &str) -> Result<Version, String> {
    let invalid = || format!("invalid semantic version {text:?}");
    let s = text.trim().strip_prefix('v').unwrap_or(text.trim());
    let (s, build) = s.split_once('+').map(|(a, b)| (a, b.to_string())).unwrap_or((s, String::new()));
    let (core, pre) = s.split_once('-').map(|(a, b)| (a, b.to_string())).unwrap_or((s, String::new()));
    let mut parts = core.split('.');
    let mut next = |required: bool| -> Result<u64, String> {
        match parts.next() {
            Some(p) if !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()) => p.parse().map_err(|_| invalid()),
            None if !required => Ok(0),
            _ => Err(invalid()),
        }
    };
    let version = Version { major: next(true)?, minor: next(false)?, patch: next(false)?, pre, build };
    if parts.next().is_some() {
        return Err(invalid());
    }
    Ok(version)
}

fn compare(a: &Version, b: &Version) -> Ordering {
    (a.major, a.minor, a.patch).cmp(&(b.major, b.minor, b.patch)).then_with(|| compare_pre(&a.pre, &b.pre))
}

fn compare_pre(a: &str, b: &str) -> Ordering {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        _ => {}
    }
    let (mut xs, mut ys) = (a.split('.'), b.split('.'));
    loop {
        match (xs.next(), ys.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => {
                let ordering = match (x.parse::<u64>(), y.parse::<u64>()) {
                    (Ok(x), Ok(y)) => x.cmp(&y),
                    (Ok(_), Err(_)) => Ordering::Less,
                    (Err(_), Ok(_)) => Ordering::Greater,
                    _ => x.cmp(y),
                };
                if ordering != Ordering::Equal {
                    return ordering;
                }
            }
        }
    }
}

/// One comparison: an operator and a version whose missing or wildcard parts are recorded.
struct Constraint {
    op: String,
    version: Version,
    /// How many of major, minor, patch were given as numbers (a wildcard ends them).
    given: usize,
}

fn parse_constraint(text: &str) -> Result<Constraint, String> {
    let text = text.trim();
    let op_len = text.find(|c: char| c.is_ascii_alphanumeric() || c == '*').unwrap_or(text.len());
    let (op, rest) = text.split_at(op_len);
    let rest = rest.trim();
    let op = op.trim().to_string();
    let rest = rest.strip_prefix('v').unwrap_or(rest);
    let (core, tail) = match rest.find(['-', '+']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let mut given = 0;
    let mut numbers = Vec::new();
    for part in core.split('.') {
        if matches!(part, "x" | "X" | "*" | "") {
            break;
        }
        numbers.push(part.parse::<u64>().map_err(|_| format!("improper constraint: {text}"))?);
        given += 1;
    }
    numbers.resize(3, 0);
    let version = parse_version(&format!("{}.{}.{}{tail}", numbers[0], numbers[1], numbers[2]))?;
    Ok(Constraint { op, version, given: given.min(3) })
}

impl Constraint {
    fn check(&self, v: &Version) -> bool {
        if !v.pre.is_empty() && self.version.pre.is_empty() {
            return false;
        }
        let c = &self.version;
        let bump = |level: usize| -> Version {
            let mut next =
                Version { major: c.major, minor: c.minor, patch: c.patch, pre: String::new(), build: String::new() };
            match level {
                0 => (next.major, next.minor, next.patch) = (c.major + 1, 0, 0),
                1 => (next.minor, next.patch) = (c.minor + 1, 0),
                _ => next.patch = c.patch + 1,
            }
            next
        };
        let within = |upper: Version| compare(v, c) != Ordering::Less && compare(v, &upper) == Ordering::Less;
        match self.op.as_str() {
            "" | "=" | "==" if self.given < 3 => self.given == 0 || within(bump(self.given - 1)),
            "" | "=" | "==" => compare(v, c) == Ordering::Equal,
            "!=" if self.given < 3 => !(self.given == 0 || within(bump(self.given - 1))),
            "!=" => compare(v, c) != Ordering::Equal,
            ">" if self.given < 3 && self.given > 0 => compare(v, &bump(self.given - 1)) != Ordering::Less,
            ">" => compare(v, c) == Ordering::Greater,
            ">=" | "=>" => compare(v, c) != Ordering::Less,
            "<" => compare(v, c) == Ordering::Less,
            "<=" | "=<" if self.given < 3 && self.given > 0 => compare(v, &bump(self.given - 1)) == Ordering::Less,
            "<=" | "=<" => compare(v, c) != Ordering::Greater,
            "~" | "~>" => within(bump(if self.given <= 1 { 0 } else { 1 })),
            "^" => {
                let level = if c.major > 0 || self.given <= 1 {
                    0
                } else if c.minor > 0 || self.given == 2 {
                    1
                } else {
                    2
                };
                within(bump(level))
            }
            _ => false,
        }
    }
}

/// Whether `version` satisfies `constraints`.
pub(super) fn satisfies(constraints: &str, version: &str) -> Result<bool, String> {
    let v = parse_version(version)?;
    for alternative in constraints.split("||") {
        let mut all = true;
        for clause in and_clauses(alternative)? {
            if !clause.iter().all(|c| c.check(&v)) {
                all = false;
                break;
            }
        }
        if all {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The comparisons of one `||` alternative; a hyphen range `a - b` is `>= a, <= b`.
fn and_clauses(text: &str) -> Result<Vec<Vec<Constraint>>, String> {
    let mut clauses = Vec::new();
    let tokens: Vec<&str> = text.split([',', ' ']).filter(|t| !t.is_empty()).collect();
    let mut i = 0;
    let mut pending_op = String::new();
    while i < tokens.len() {
        let token = tokens[i];
        if tokens.get(i + 1) == Some(&"-") && i + 2 < tokens.len() {
            clauses.push(vec![
                parse_constraint(&format!(">={token}"))?,
                parse_constraint(&format!("<={}", tokens[i + 2]))?,
            ]);
            i += 3;
            continue;
        }
        // An operator written apart from its version (`>= 1.21-0`).
        if token.chars().all(|c| "<>=!~^".contains(c)) {
            pending_op = token.to_string();
            i += 1;
            continue;
        }
        clauses.push(vec![parse_constraint(&format!("{}{token}", std::mem::take(&mut pending_op)))?]);
        i += 1;
    }
    if clauses.is_empty() {
        return Err(format!("improper constraint: {text}"));
    }
    Ok(clauses)
}

/// sprig's `semver`: a version's parts, as fields a template can read.
pub(super) fn fields(text: &str) -> Result<Value, String> {
    let v = parse_version(text)?;
    let mut map = Map::new();
    map.insert("Major".into(), Value::Int(v.major as i64));
    map.insert("Minor".into(), Value::Int(v.minor as i64));
    map.insert("Patch".into(), Value::Int(v.patch as i64));
    map.insert("Prerelease".into(), Value::str(&v.pre));
    map.insert("Metadata".into(), Value::str(&v.build));
    map.insert("Original".into(), Value::str(text));
    Ok(Value::map(map))
}

#[cfg(test)]
mod tests {
    use super::satisfies;

    #[test]
    fn constraints_follow_masterminds_semver() {
        for (constraint, version, expected) in [
            (">= 1.21-0", "v1.33.0", true),
            (">= 1.21-0", "v1.33.5-eks-3025e55", true),
            (">= 1.21", "v1.33.5-eks-3025e55", false),
            (">= 1.21-0", "v1.20.15", false),
            ("~1.2.3", "1.2.9", true),
            ("~1.2.3", "1.3.0", false),
            ("^1.2.3", "1.9.0", true),
            ("^0.2.3", "0.3.0", false),
            ("1.2.x", "1.2.7", true),
            ("1.2.x", "1.3.0", false),
            ("1.2 - 1.4", "1.4.0", true),
            ("<1.20 || >=1.30", "1.31.0", true),
            (">=1.25, <1.30", "1.31.0", false),
            ("!=1.2.3", "1.2.3", false),
        ] {
            assert_eq!(satisfies(constraint, version).unwrap(), expected, "{constraint} {version}");
        }
    }
}
