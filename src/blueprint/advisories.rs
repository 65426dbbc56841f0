//! Advisories: settings that are valid, and the defaults of a quick sandbox, but that a production stack should
//! not keep. Unlike validation warnings they do not make `kbp validate` complain (the shipped blueprints use
//! them on purpose); `kbp plan` and `kbp apply` print them, and the plan document carries them.

use super::Blueprint;

/// What to reconsider in `bp`, one text per advisory: the finding, then `\n  hint: ` and what to do.
pub fn advisories(bp: &Blueprint) -> Vec<String> {
    let mut out = Vec::new();
    let c = &bp.cluster;
    if c.endpoint_public_access && c.public_access_cidrs.iter().any(|cidr| is_everywhere(cidr)) {
        out.push(format!(
            "the Kubernetes API of cluster `{}` is reachable from the whole internet: \
             `cluster.endpoint_public_access` is on and `cluster.public_access_cidrs` includes 0.0.0.0/0\n  \
             hint: set `cluster.public_access_cidrs` to your own networks (including where kbp runs), or turn \
             off `cluster.endpoint_public_access` and reach the API from inside the VPC",
            c.name
        ));
    }
    out
}

/// A /0 network, however its address is written.
fn is_everywhere(cidr: &str) -> bool {
    cidr.parse::<ipnet::Ipv4Net>().is_ok_and(|n| n.prefix_len() == 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blueprint::load_str;

    fn with(sets: &[&str]) -> Vec<String> {
        let text = "[cluster]\nname = \"t\"\nregion = \"us-west-2\"\n";
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        advisories(&load_str("t.toml", text, &sets).expect("the test blueprint loads"))
    }

    #[test]
    fn a_public_endpoint_open_to_everyone_is_advised_against() {
        let found = with(&[]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("reachable from the whole internet"), "{}", found[0]);
        assert!(found[0].contains("cluster `t`"), "{}", found[0]);
        assert!(found[0].contains("\n  hint: set `cluster.public_access_cidrs`"), "{}", found[0]);
        assert_eq!(with(&["cluster.public_access_cidrs=[\"203.0.113.0/24\", \"0.0.0.0/0\"]"]).len(), 1);
    }

    #[test]
    fn restricted_networks_or_a_private_endpoint_are_not() {
        assert!(with(&["cluster.public_access_cidrs=[\"203.0.113.0/24\"]"]).is_empty());
        assert!(with(&["cluster.endpoint_public_access=false"]).is_empty());
    }
}
