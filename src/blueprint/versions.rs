//! Kubernetes versions as EKS treats them: `1.33` and `1.33.5` name minor 33 of major 1; nodes may run older
//! than their control plane, by at most three minor versions from 1.28 on (two before), and never newer
//! (<https://kubernetes.io/releases/version-skew-policy/#kubelet>).

/// `(major, minor)` of a Kubernetes version (`1.33`, `1.33.5`, `v1.33.5-eks-1a2b3c`).
pub fn minor(version: &str) -> Option<(u32, u32)> {
    let (major, rest) = version.trim_start_matches('v').split_once('.')?;
    let minor = rest.split(|c: char| !c.is_ascii_digit()).next()?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// How many minor versions nodes may lag behind a control plane at `control_plane`.
pub fn max_node_skew(control_plane: &str) -> u32 {
    if minor(control_plane).is_some_and(|v| v < (1, 28)) {
        2
    } else {
        3
    }
}

/// How many minor versions `nodes` is behind `control_plane` (negative when newer); None across majors or for
/// what is not a version.
pub fn behind(control_plane: &str, nodes: &str) -> Option<i64> {
    let (p, n) = (minor(control_plane)?, minor(nodes)?);
    (p.0 == n.0).then(|| i64::from(p.1) - i64::from(n.1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_read_and_compare_by_minor() {
        assert_eq!(minor("1.33"), Some((1, 33)));
        assert_eq!(minor("v1.30.14-eks-1a2b3c"), Some((1, 30)));
        assert_eq!(minor("latest"), None);
        assert_eq!(behind("1.34", "1.31"), Some(3));
        assert_eq!(behind("1.33", "1.34"), Some(-1));
        assert_eq!(behind("1.33", "2.0"), None);
        assert_eq!((max_node_skew("1.34"), max_node_skew("1.27")), (3, 2));
    }
}
