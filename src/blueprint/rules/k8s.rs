//! Kubernetes value rules: object names, label keys and values, taints, resource quantities, and the duration,
//! budget and schedule patterns of the Karpenter NodePool CRD (`karpenter.sh_nodepools.yaml`, v1.14.1).

use super::Problem;
use crate::kubernetes::names::{
    self, check_qualified_name, is_dns_subdomain_shape, is_label_name_shape, QualifiedNameError, MAX_LABEL_LENGTH,
};
use crate::kubernetes::quantity::is_quantity;

/// Any value: for fields the Karpenter CRDs judge after rendering, not kbp's schema.
pub(crate) fn anything(_: &str) -> Result<(), Problem> {
    Ok(())
}

pub(crate) fn dns_label(s: &str) -> Result<(), Problem> {
    if !names::is_dns_label(s) {
        return Err(Problem::new(format!("`{s}` is not a valid DNS-1123 label"))
            .hint("use at most 63 lowercase letters, digits and `-`, starting and ending with a letter or digit"));
    }
    Ok(())
}

/// NodePool and EC2NodeClass names: a DNS-1123 subdomain (metadata.name of a cluster-scoped object), and at most
/// 63 characters because Karpenter also writes the name as a label value (`karpenter.sh/nodepool`,
/// `karpenter.k8s.aws/ec2nodeclass`).
pub(crate) fn object_name(s: &str) -> Result<(), Problem> {
    if s.len() > MAX_LABEL_LENGTH || !is_dns_subdomain_shape(s) {
        return Err(Problem::new(format!("`{s}` is not a valid Kubernetes object name")).hint(
            "use at most 63 lowercase letters, digits, `-` and `.`, starting and ending with a letter or digit",
        ));
    }
    Ok(())
}

/// A qualified name, as label keys and extended resource names must be: `[prefix/]name`, the prefix a DNS
/// subdomain of at most 253 characters, the name at most 63.
pub(crate) fn qualified_name(s: &str) -> Result<(), Problem> {
    match check_qualified_name(s) {
        Ok(()) => Ok(()),
        Err(QualifiedNameError::Prefix(p)) => Err(Problem::new(format!("the prefix `{p}` of `{s}` is not a DNS subdomain"))
            .hint("a prefix is lowercase, like `example.com/`")),
        Err(QualifiedNameError::Name) => Err(Problem::new(format!("`{s}` is not a valid label key"))
            .hint("the name part has at most 63 letters, digits, `-`, `_` and `.`, and starts and ends with a letter or digit")),
    }
}

/// A label value: empty, or at most 63 characters of the label name shape.
pub(crate) fn label_value(s: &str) -> Result<(), Problem> {
    if !names::is_label_value(s) {
        return Err(Problem::new(format!("`{s}` is not a valid label value"))
            .hint("use at most 63 letters, digits, `-`, `_` and `.`, starting and ending with a letter or digit"));
    }
    Ok(())
}

/// The pattern the NodePool CRD puts on `requirements[].key` and `taints[].key` (and, oddly, `taints[].value`):
/// `^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(\/))?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`
pub(crate) fn matches_crd_key_pattern(s: &str) -> bool {
    match s.split_once('/') {
        Some((prefix, name)) => is_dns_subdomain_shape(prefix) && is_label_name_shape(name),
        None => is_label_name_shape(s),
    }
}

/// NodePool CRD `taints[].key` (minLength 1 and the key pattern).
pub(crate) fn taint_key(s: &str) -> Result<(), Problem> {
    if !matches_crd_key_pattern(s) {
        return Err(Problem::new(format!("`{s}` is not a valid taint key"))
            .hint("a taint key looks like a label key: `example.com/name` or `name`"));
    }
    Ok(())
}

/// NodePool CRD `taints[].value` uses the key pattern, so it may contain one `/`; a Node's taint value must
/// also be a label value, which is checked as a warning.
pub(crate) fn taint_value(s: &str) -> Result<(), Problem> {
    if !matches_crd_key_pattern(s) {
        return Err(Problem::new(format!("`{s}` is not a valid taint value")).hint(
            "use letters, digits, `-`, `_` and `.`, starting and ending with a letter or digit; omit `value` for none",
        ));
    }
    // Past 63 characters EKS refuses the node group's taint outright: an error of `providers::contract`'s.
    if s.chars().count() > 63 {
        return Ok(());
    }
    label_value(s).map_err(|p| Problem::new(format!("{}; the Node API will refuse the taint", p.message)).warning())
}

/// One or more `<digits><unit>` groups, units from `units`.
fn is_duration(s: &str, units: &[char]) -> bool {
    let mut rest = s;
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let unit = rest[digits..].chars().next();
        match unit {
            Some(u) if digits > 0 && units.contains(&u) => rest = &rest[digits + 1..],
            _ => return false,
        }
    }
    true
}

/// What to write instead of a duration humantime understands (`1d`, `90 min`), in the given units.
fn duration_hint(s: &str, allow_seconds: bool) -> String {
    let example = "write it in hours, minutes or seconds, like `720h`, `30m` or `45s`";
    let Ok(d) = humantime::parse_duration(s) else {
        return example.into();
    };
    let secs = d.as_secs();
    let written = if secs % 3600 == 0 {
        format!("{}h", secs / 3600)
    } else if secs % 60 == 0 || !allow_seconds {
        format!("{}m", secs.div_ceil(60))
    } else {
        format!("{secs}s")
    };
    format!("write `{written}`")
}

/// NodePool CRD `terminationGracePeriod`: `^([0-9]+(s|m|h))+$`.
pub(crate) fn duration(s: &str) -> Result<(), Problem> {
    if is_duration(s, &['s', 'm', 'h']) {
        return Ok(());
    }
    Err(Problem::new(format!("`{s}` is not a duration")).hint(duration_hint(s, true)))
}

/// NodePool CRD `limits` (and resource amounts): a Kubernetes quantity, the pattern the CRD writes out.
pub(crate) fn quantity(s: &str) -> Result<(), Problem> {
    if is_quantity(s) {
        return Ok(());
    }
    Err(Problem::new(format!("`{s}` is not a Kubernetes quantity"))
        .hint("write a number with an optional suffix, like `1000`, `500m`, `1000Gi` or `1e3`"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blueprint::rules::judge;

    #[test]
    fn names() {
        judge(object_name, &["gpu-pool.v2"], &["GPU", &"a".repeat(64)]);
        judge(dns_label, &["karpenter"], &["kube.system"]);
    }

    #[test]
    fn labels() {
        judge(
            qualified_name,
            &["nvidia.com/gpu", "team"],
            &["Example.com/x", "a/b/c", &format!("x/{}", "a".repeat(64))],
        );
        judge(label_value, &["", "v1.2_x"], &["-x"]);
    }

    #[test]
    fn taints_follow_the_crd_pattern() {
        judge(taint_key, &["nvidia.com/gpu"], &["", "bad key"]);
        judge(taint_value, &["true"], &[""]);
        // Accepted by the CRD, refused later by the Node API: a warning.
        assert!(taint_value("a.b/c").is_err_and(|p| p.warning));
    }

    #[test]
    fn durations() {
        assert!(duration("48h").is_ok());
        assert!(duration("Never").is_err());
    }

    #[test]
    fn quantities() {
        judge(
            quantity,
            &["1000", "1000Gi", "500m", "1.5", ".5", "+1e3", "1E-2", "-1", "2.Ki"],
            &["", "Gi", "1GB", "1.2.3", "e3", "1e", "ten"],
        );
    }
}
