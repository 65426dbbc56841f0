//! Rules of the `[karpenter]` table and of what the Karpenter CRDs accept but Karpenter itself refuses at run
//! time (as warnings). What the CRDs check is checked by the CRDs themselves, on the rendered objects.

use super::k8s::qualified_name;
use super::{aws::semver, Problem};

/// NodePool `template.metadata.labels` keys: the CRD's rules on them are its CEL rules, checked with the
/// rendered NodePool. Karpenter's runtime validation also refuses a key that is not a qualified name, which the
/// CRD does not check: a warning that says where it would fail.
pub(crate) fn nodepool_label_key(s: &str) -> Result<(), Problem> {
    qualified_name(s).map_err(|p| {
        Problem::new(format!("{}: the API server accepts it, but Karpenter will refuse this NodePool", p.message))
            .hint("a label key is `[prefix/]name`, letters, digits, `-`, `_` and `.`")
            .warning()
    })
}

/// Labels of the controller's node group: any label key except the one kbp adds itself.
pub(crate) fn node_group_label_key(s: &str) -> Result<(), Problem> {
    qualified_name(s)?;
    if s == "karpenter.sh/controller" {
        return Err(Problem::new("`karpenter.sh/controller` is implied: kbp always sets it to \"true\"")
            .hint("remove it; the node group always carries it"));
    }
    Ok(())
}

/// The default root device of an AMI family: Bottlerocket keeps container data on its second volume,
/// Windows AMIs boot from `/dev/sda1`, the Amazon Linux ones from `/dev/xvda`.
pub(crate) fn default_device_name(ami_alias: &str) -> &'static str {
    match ami_alias.split('@').next().unwrap_or("") {
        "bottlerocket" => "/dev/xvdb",
        f if f.starts_with("windows") => "/dev/sda1",
        _ => "/dev/xvda",
    }
}

/// Karpenter release versions kbp can install: `a.b.c`, 1.0.0 or later (the v1 APIs).
pub(crate) fn version(s: &str) -> Result<(), Problem> {
    match semver(s.strip_prefix('v').unwrap_or(s)) {
        Some((major, ..)) if major >= 1 => Ok(()),
        Some(_) => {
            Err(Problem::new(format!("Karpenter {s} predates the v1 APIs kbp writes")).hint("use 1.0.0 or later"))
        }
        None => Err(Problem::new(format!("`{s}` is not a Karpenter version")).hint("write like `1.14.1`")),
    }
}

/// The chart: Helm's `oci://registry/repository` form, or a local chart directory or `.tgz` (air-gapped installs).
pub(crate) fn chart(s: &str) -> Result<(), Problem> {
    let Some(rest) = s.strip_prefix("oci://") else {
        if s.contains("://") {
            return Err(Problem::new(format!("`{s}` is neither an OCI chart reference nor a local path"))
                .hint("write like `oci://public.ecr.aws/karpenter/karpenter`, or a chart directory or .tgz"));
        }
        return path(s);
    };
    match rest.split_once('/') {
        Some((host, repo)) if !host.is_empty() && !repo.is_empty() && !repo.contains([':', '@']) => Ok(()),
        _ => Err(Problem::new(format!("`{s}` names no repository in a registry"))
            .hint("write `oci://<registry>/<repository>`, without a tag: the tag is `karpenter.version`")),
    }
}

/// An API version a cluster serves beyond Kubernetes' own: `group/version` (`monitoring.coreos.com/v1`).
pub(crate) fn api_version(s: &str) -> Result<(), Problem> {
    match s.split_once('/') {
        Some((group, version))
            if group.contains('.')
                && !version.is_empty()
                && !version.contains('/')
                && !s.contains(char::is_whitespace) =>
        {
            Ok(())
        }
        _ => Err(Problem::new(format!("`{s}` is not a group/version")).hint("write like `monitoring.coreos.com/v1`")),
    }
}

/// A path on the machine running kbp.
pub(crate) fn path(s: &str) -> Result<(), Problem> {
    if s.trim().is_empty() {
        return Err(Problem::new("the path is empty").hint("name a directory, or leave the field out"));
    }
    Ok(())
}

/// An image repository: `registry/path`, lowercase, without a tag or digest (kbp adds the version as the tag).
pub(crate) fn image_repository(s: &str) -> Result<(), Problem> {
    let last = s.rsplit('/').next().unwrap_or(s);
    if last.contains(':') || s.contains('@') {
        return Err(Problem::new(format!("`{s}` carries a tag or digest"))
            .hint("give the repository only; the tag is `karpenter.version`"));
    }
    let ok = !s.is_empty()
        && s.split('/').all(|part| {
            !part.is_empty() && part.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-:".contains(c))
        });
    if ok {
        return Ok(());
    }
    Err(Problem::new(format!("`{s}` is not an image repository"))
        .hint("write like `public.ecr.aws/karpenter/controller` (lowercase, `/`-separated)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_keys_that_karpenter_refuses_are_warnings() {
        assert!(nodepool_label_key("team").is_ok() && nodepool_label_key("karpenter.sh/x").is_ok());
        assert!(nodepool_label_key("Bad/x").is_err_and(|p| p.warning));
        assert!(node_group_label_key("karpenter.sh/controller").is_err() && node_group_label_key("role").is_ok());
    }

    #[test]
    fn devices_and_versions() {
        assert_eq!(default_device_name("bottlerocket@latest"), "/dev/xvdb");
        assert_eq!(default_device_name("al2023@latest"), "/dev/xvda");
        assert_eq!(default_device_name("windows2022@latest"), "/dev/sda1");
        assert!(version("1.14.1").is_ok() && version("0.37.0").is_err() && version("1.14").is_err());
    }
}
