//! Where a chart lives: [`ChartRef`] (`oci://host[:port]/path/to/chart`, as `helm pull` takes it), whether its
//! registry is spoken to over plain HTTP, and the OCI tag a chart version is pushed under.

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use super::OciError;

/// A Helm chart in an OCI registry: `oci://host[:port]/path/to/chart`, the form `helm pull` takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChartRef {
    /// `host` or `host:port` (`[v6 address]:port` for IPv6).
    pub registry: String,
    /// The repository path inside the registry, without a tag.
    pub repository: String,
}

impl FromStr for ChartRef {
    type Err = OciError;

    fn from_str(s: &str) -> Result<Self, OciError> {
        let fail = |reason: &str| OciError::Reference { input: s.to_string(), reason: reason.to_string() };
        let rest = s.strip_prefix("oci://").ok_or_else(|| fail("it does not start with oci://"))?;
        let rest = rest.trim_end_matches('/');
        let (registry, repository) = rest.split_once('/').unwrap_or((rest, ""));
        let host_ok = !registry.is_empty()
            && registry.chars().all(|c| c.is_ascii_alphanumeric() || ".-:[]".contains(c))
            && reqwest::Url::parse(&format!("http://{registry}/")).is_ok_and(|u| u.host_str().is_some());
        if !host_ok {
            return Err(fail("it names no registry host"));
        }
        if repository.is_empty() {
            return Err(fail("it names a registry but no repository in it"));
        }
        if repository.contains('@') {
            return Err(fail("it carries a digest"));
        }
        if repository.rsplit('/').next().is_some_and(|last| last.contains(':')) {
            return Err(fail("it carries a tag"));
        }
        // The distribution spec's repository name grammar, loosely: lowercase components joined by `.`, `_`, `-`.
        let component_ok = |part: &str| {
            part.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
                && part.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
                && part.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c))
        };
        if !repository.split('/').all(component_ok) {
            return Err(fail("repository paths are lowercase letters, digits, `.`, `_` and `-`, separated by `/`"));
        }
        Ok(ChartRef { registry: registry.to_string(), repository: repository.to_string() })
    }
}

impl fmt::Display for ChartRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "oci://{}/{}", self.registry, self.repository)
    }
}

impl ChartRef {
    /// Registries are spoken to over HTTPS, except loopback ones (`localhost`, `127.0.0.0/8`, `[::1]`, any
    /// port), which get plain HTTP: the rule docker and containerd apply to local registries by default.
    pub fn plain_http(&self) -> bool {
        let host = match self.registry.strip_prefix('[') {
            Some(v6) => {
                return v6.split(']').next().and_then(|a| a.parse::<Ipv6Addr>().ok()).is_some_and(|a| a.is_loopback())
            }
            None => self.registry.split(':').next().unwrap_or_default(),
        };
        host.eq_ignore_ascii_case("localhost") || host.parse::<Ipv4Addr>().is_ok_and(|a| a.is_loopback())
    }

    /// `scheme://registry/v2/repository`, under which manifests and blobs live.
    pub(super) fn api_base(&self) -> String {
        let scheme = if self.plain_http() { "http" } else { "https" };
        format!("{scheme}://{}/v2/{}", self.registry, self.repository)
    }
}

/// The OCI tag of a chart version: Helm writes semver's `+` as `_`.
pub(super) fn tag_of(version: &str) -> Result<String, OciError> {
    let tag = version.replace('+', "_");
    let ok = tag.len() <= 128
        && tag.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        && tag.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    if ok {
        Ok(tag)
    } else {
        Err(OciError::Version { version: version.to_string() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(s: &str) -> ChartRef {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn chart_references_parse_into_registry_and_repository() {
        let c = chart("oci://public.ecr.aws/karpenter/karpenter");
        assert_eq!((c.registry.as_str(), c.repository.as_str()), ("public.ecr.aws", "karpenter/karpenter"));
        assert_eq!(c.to_string(), "oci://public.ecr.aws/karpenter/karpenter");
        let c = chart("oci://127.0.0.1:5000/charts/kar_pen-ter.x/");
        assert_eq!((c.registry.as_str(), c.repository.as_str()), ("127.0.0.1:5000", "charts/kar_pen-ter.x"));
        assert_eq!(chart("oci://[::1]:5000/karpenter").registry, "[::1]:5000");
    }

    #[test]
    fn chart_references_that_are_not_oci_say_why() {
        for (bad, why) in [
            ("https://public.ecr.aws/karpenter/karpenter", "does not start with oci://"),
            ("public.ecr.aws/karpenter/karpenter", "does not start with oci://"),
            ("oci://public.ecr.aws", "no repository"),
            ("oci://public.ecr.aws/", "no repository"),
            ("oci:///karpenter", "no registry host"),
            ("oci://user@host/karpenter", "no registry host"),
            ("oci://public.ecr.aws/karpenter/karpenter:1.14.1", "carries a tag"),
            ("oci://public.ecr.aws/karpenter/karpenter@sha256:00", "carries a digest"),
            ("oci://public.ecr.aws/Karpenter/karpenter", "lowercase"),
            ("oci://public.ecr.aws/karpenter//karpenter", "lowercase"),
            ("oci://public.ecr.aws/../karpenter", "lowercase"),
        ] {
            let err = bad.parse::<ChartRef>().expect_err(bad).to_string();
            assert!(err.contains(why) && err.contains("hint:"), "{bad}: {err}");
        }
    }

    #[test]
    fn only_loopback_registries_use_plain_http() {
        for local in
            ["localhost", "LocalHost:5000", "127.0.0.1", "127.0.0.1:5000", "127.1.2.3:80", "[::1]", "[::1]:5000"]
        {
            let c = ChartRef { registry: local.to_string(), repository: "k".to_string() };
            assert!(c.plain_http(), "{local}");
            assert!(c.api_base().starts_with("http://"), "{local}");
        }
        for remote in [
            "public.ecr.aws",
            "localhost.example.com",
            "128.0.0.1",
            "10.0.0.1:5000",
            "[::2]:5000",
            "[::ffff:127.0.0.1]",
        ] {
            let c = ChartRef { registry: remote.to_string(), repository: "k".to_string() };
            assert!(!c.plain_http(), "{remote}");
            assert_eq!(c.api_base(), format!("https://{remote}/v2/k"));
        }
    }

    #[test]
    fn versions_become_oci_tags_like_helm_makes_them() {
        assert_eq!(tag_of("1.14.1").unwrap(), "1.14.1");
        assert_eq!(tag_of("1.14.1+build.5").unwrap(), "1.14.1_build.5");
        for bad in ["", "../1.0.0", ".1", "1.0/0", "1 0", &"1".repeat(129)] {
            assert!(matches!(tag_of(bad), Err(OciError::Version { .. })), "{bad}");
        }
    }
}
