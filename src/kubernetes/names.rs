//! The API machinery's rules for names (`k8s.io/apimachinery/pkg/util/validation`): DNS-1123 labels and
//! subdomains, DNS-1035 labels, qualified names (label and annotation keys) and label values, and [`NameRule`],
//! which of them an object's `metadata.name` follows.
//!
//! The one implementation of these rules in kbp: the manifest checks (`meta`, `builtin`) and the blueprint's
//! value rules (`blueprint::rules::k8s`) both call it, each wording its own message. Written here because the
//! Rust Kubernetes crates (k8s-openapi, kube) carry the types but none of the API machinery's validation.

/// Longest DNS-1123 label, qualified-name name part and label value.
pub(crate) const MAX_LABEL_LENGTH: usize = 63;
/// Longest DNS-1123 subdomain, and so the prefix of a qualified name.
pub(crate) const MAX_SUBDOMAIN_LENGTH: usize = 253;

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, the shape of one DNS-1123 label, without the length limit.
pub(crate) fn is_dns_label_shape(s: &str) -> bool {
    label_shape(s, false)
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*`, without a length limit.
pub(crate) fn is_dns_subdomain_shape(s: &str) -> bool {
    s.split('.').all(is_dns_label_shape)
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`: the name part of label keys, and label values (when non-empty).
pub(crate) fn is_label_name_shape(s: &str) -> bool {
    let ok = |c: char| c.is_ascii_alphanumeric();
    !s.is_empty() && s.starts_with(ok) && s.ends_with(ok) && s.chars().all(|c| ok(c) || matches!(c, '-' | '_' | '.'))
}

/// A DNS-1123 label: the shape, at most 63 characters.
pub(crate) fn is_dns_label(s: &str) -> bool {
    s.len() <= MAX_LABEL_LENGTH && is_dns_label_shape(s)
}

/// A DNS-1123 subdomain: the shape, at most 253 characters.
pub(crate) fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= MAX_SUBDOMAIN_LENGTH && is_dns_subdomain_shape(s)
}

/// A DNS-1035 label: a DNS-1123 label that starts with a letter.
fn is_dns1035_label(s: &str) -> bool {
    s.len() <= MAX_LABEL_LENGTH && label_shape(s, true)
}

fn label_shape(s: &str, letter_first: bool) -> bool {
    let bytes = s.as_bytes();
    let (Some(first), Some(last)) = (bytes.first(), bytes.last()) else { return false };
    let first_ok =
        if letter_first { first.is_ascii_lowercase() } else { first.is_ascii_lowercase() || first.is_ascii_digit() };
    first_ok
        && (last.is_ascii_lowercase() || last.is_ascii_digit())
        && bytes.iter().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
}

/// A label value: empty, or at most 63 characters of the label name shape.
pub(crate) fn is_label_value(s: &str) -> bool {
    s.is_empty() || (s.len() <= MAX_LABEL_LENGTH && is_label_name_shape(s))
}

/// Which part of a qualified name (`[prefix/]name`) breaks its rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum QualifiedNameError<'a> {
    /// The prefix before the first `/` is not a DNS-1123 subdomain.
    Prefix(&'a str),
    /// The part after it (or the whole key, without one) is not a label name of at most 63 characters.
    Name,
}

/// Checks a qualified name, as label and annotation keys must be: `[prefix/]name`, the prefix a DNS-1123
/// subdomain, the name at most 63 characters of the label name shape.
pub(crate) fn check_qualified_name(key: &str) -> Result<(), QualifiedNameError<'_>> {
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if let Some(prefix) = prefix.filter(|p| !is_dns_subdomain(p)) {
        return Err(QualifiedNameError::Prefix(prefix));
    }
    if name.len() > MAX_LABEL_LENGTH || !is_label_name_shape(name) {
        return Err(QualifiedNameError::Name);
    }
    Ok(())
}

/// The rules object names follow; which one applies depends on the kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NameRule {
    /// DNS-1123 subdomain: lowercase alphanumerics, '-' and '.', at most 253 characters (most kinds).
    Subdomain,
    /// DNS-1123 label: lowercase alphanumerics and '-', at most 63 characters (Namespace).
    Label,
    /// DNS-1035 label: a DNS-1123 label that starts with a letter (Service).
    Dns1035Label,
    /// Any path segment: not "." or "..", no '/' or '%' (RBAC objects, e.g. `system:controller`).
    PathSegment,
}

impl NameRule {
    /// Why `name` breaks the rule, if it does.
    pub(crate) fn check(self, name: &str) -> Option<String> {
        let (ok, rule) = match self {
            NameRule::Subdomain => (
                is_dns_subdomain(name),
                "a DNS-1123 subdomain (lowercase letters, digits, '-' and '.', starting and ending alphanumeric, \
                 at most 253 characters)",
            ),
            NameRule::Label => (
                is_dns_label(name),
                "a DNS-1123 label (lowercase letters, digits and '-', starting and ending alphanumeric, \
                 at most 63 characters)",
            ),
            NameRule::Dns1035Label => (
                is_dns1035_label(name),
                "a DNS-1035 label (lowercase letters, digits and '-', starting with a letter, ending alphanumeric, \
                 at most 63 characters)",
            ),
            NameRule::PathSegment => (
                !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '%']),
                "a path segment (not \".\" or \"..\", without '/' or '%')",
            ),
        };
        (!ok).then(|| format!("invalid name \"{name}\": must be {rule}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        assert!(is_dns_label_shape("a-1"));
        assert!(!is_dns_label_shape("-a") && !is_dns_label_shape("A") && !is_dns_label_shape(""));
        assert!(is_dns_subdomain_shape("karpenter.k8s.aws"));
        assert!(!is_dns_subdomain_shape("a..b"));
        assert!(is_label_name_shape("Instance_type.x-1"));
        assert!(!is_label_name_shape("x-") && !is_label_name_shape("a/b"));
    }
}
