//! Value rules: checks of one string against the rules of the system that will receive it (Kubernetes API
//! machinery, the Karpenter CRDs, AWS APIs). Each rule is a plain function so the schema can name it next to the
//! field it guards; none of them knows about files, spans or paths. The Kubernetes API machinery's own rules
//! (names, label values, quantities) are implemented once, in `kubernetes::names` and `kubernetes::quantity`;
//! the rules here call them and word the problem for a blueprint.

pub(crate) mod aws;
pub(crate) mod k8s;
pub(crate) mod karpenter;

/// Why a value was refused, and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    pub message: String,
    pub hint: Option<String>,
    /// The receiving API accepts the value but it will not work as meant (Karpenter's runtime validation, EC2
    /// launch); reported without failing the load.
    pub warning: bool,
}

impl Problem {
    pub(crate) fn new(message: impl Into<String>) -> Problem {
        Problem { message: message.into(), hint: None, warning: false }
    }

    pub(crate) fn hint(mut self, hint: impl Into<String>) -> Problem {
        self.hint = Some(hint.into());
        self
    }

    pub(crate) fn warning(mut self) -> Problem {
        self.warning = true;
        self
    }
}

pub(crate) type Check = fn(&str) -> Result<(), Problem>;

/// Asserts that `rule` accepts each of `ok` and refuses each of `bad`, naming the value that it judged wrongly.
#[cfg(test)]
pub(crate) fn judge(rule: Check, ok: &[&str], bad: &[&str]) {
    for v in ok {
        assert!(rule(v).is_ok(), "refused `{v}`: {:?}", rule(v));
    }
    for v in bad {
        assert!(rule(v).is_err(), "accepted `{v}`");
    }
}

/// Names longer than this get no suggestion and are suggested to no one: no name in a blueprint is as long, and a
/// comparison costs the product of the two lengths.
const LONGEST_SUGGESTED: usize = 128;

/// The candidate closest to `word`, when it is close enough to be a likely typo.
pub(crate) fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    if word.len() > LONGEST_SUGGESTED {
        return None;
    }
    let word = word.to_ascii_lowercase();
    candidates
        .into_iter()
        .filter(|c| c.len() <= LONGEST_SUGGESTED)
        .map(|c| (strsim::jaro_winkler(&word, &c.to_ascii_lowercase()), c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// A non-empty run of ASCII digits.
pub(crate) fn is_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_finds_typos_only() {
        assert_eq!(closest("desried_size", ["min_size", "desired_size", "max_size"]), Some("desired_size"));
        assert_eq!(closest("zzz", ["min_size", "desired_size"]), None);
        let long = "desired_size".repeat(20);
        assert_eq!(closest(&long, [long.as_str()]), None);
    }
}
