//! Rules from the Karpenter v1.14.1 CRDs (`karpenter.sh_nodepools.yaml`, `karpenter.k8s.aws_ec2nodeclasses.yaml`):
//! their `x-kubernetes-validations` and patterns, written out by hand. Each function names the CRD field it
//! guards.

use super::k8s::{matches_crd_key_pattern, qualified_name};
use super::{aws::semver, is_digits, Problem};

/// The `karpenter.k8s.aws/*` labels the NodePool CRD lets users set or select on.
const ALLOWED_AWS_LABELS: &[&str] = &[
    "karpenter.k8s.aws/instance-tenancy",
    "karpenter.k8s.aws/capacity-reservation-type",
    "karpenter.k8s.aws/capacity-reservation-id",
    "karpenter.k8s.aws/capacity-reservation-interruptible",
    "karpenter.k8s.aws/ec2nodeclass",
    "karpenter.k8s.aws/instance-encryption-in-transit-supported",
    "karpenter.k8s.aws/nitro-sandbox",
    "karpenter.k8s.aws/instance-category",
    "karpenter.k8s.aws/instance-hypervisor",
    "karpenter.k8s.aws/instance-family",
    "karpenter.k8s.aws/instance-generation",
    "karpenter.k8s.aws/instance-local-nvme",
    "karpenter.k8s.aws/instance-size",
    "karpenter.k8s.aws/instance-cpu",
    "karpenter.k8s.aws/instance-cpu-manufacturer",
    "karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz",
    "karpenter.k8s.aws/instance-memory",
    "karpenter.k8s.aws/instance-ebs-bandwidth",
    "karpenter.k8s.aws/instance-network-bandwidth",
    "karpenter.k8s.aws/instance-gpu-name",
    "karpenter.k8s.aws/instance-gpu-manufacturer",
    "karpenter.k8s.aws/instance-gpu-count",
    "karpenter.k8s.aws/instance-gpu-memory",
    "karpenter.k8s.aws/instance-accelerator-name",
    "karpenter.k8s.aws/instance-accelerator-manufacturer",
    "karpenter.k8s.aws/instance-accelerator-count",
    "karpenter.k8s.aws/instance-capability-flex",
    "karpenter.k8s.aws/placement-group-id",
    "karpenter.k8s.aws/placement-group-partition",
];

/// The four x-kubernetes-validations shared by NodePool `template.metadata.labels` keys and
/// `template.spec.requirements[].key`. "Domain" is the text before the first `/` (all of it without one), and
/// the CRD tests it with `endsWith`, so `foo.karpenter.sh/x` is restricted too.
pub(crate) fn restricted_label(key: &str) -> Result<(), Problem> {
    let domain = key.split('/').next().unwrap_or(key);
    let message = if key == "karpenter.sh/nodepool" {
        "label \"karpenter.sh/nodepool\" is restricted"
    } else if key == "kubernetes.io/hostname" {
        "label \"kubernetes.io/hostname\" is restricted"
    } else if domain.ends_with("karpenter.sh") && key != "karpenter.sh/capacity-type" {
        "label domain \"karpenter.sh\" is restricted"
    } else if domain.ends_with("karpenter.k8s.aws") && !ALLOWED_AWS_LABELS.contains(&key) {
        "label domain \"karpenter.k8s.aws\" is restricted"
    } else {
        return Ok(());
    };
    let hint = match key {
        "karpenter.sh/nodepool" => "Karpenter sets it to the NodePool's name",
        "kubernetes.io/hostname" => "Karpenter cannot choose a node's hostname",
        _ => "of this domain only karpenter.sh/capacity-type and the karpenter.k8s.aws/instance-* (and a few other) labels may be used",
    };
    Err(Problem::new(format!("`{key}`: {message}")).hint(hint))
}

/// NodePool CRD `template.spec.requirements[].key`: maxLength 316, the key pattern, and the label restrictions.
pub(crate) fn requirement_key(s: &str) -> Result<(), Problem> {
    if s.len() > 316 || !matches_crd_key_pattern(s) {
        return Err(Problem::new(format!("`{s}` is not a valid requirement key"))
            .hint("a requirement key is a label key like `karpenter.k8s.aws/instance-family`"));
    }
    restricted_label(s)
}

/// NodePool CRD `template.metadata.labels` keys: the label restrictions. The CRD has no key pattern, but
/// Karpenter's runtime validation refuses a key that is not a qualified name, so that is required too.
pub(crate) fn nodepool_label_key(s: &str) -> Result<(), Problem> {
    qualified_name(s)?;
    restricted_label(s)
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

/// EC2NodeClass CRD `spec.tags` keys: not empty, none of the tags Karpenter and EKS own; and the AWS tag rules.
pub(crate) fn nodeclass_tag_key(s: &str) -> Result<(), Problem> {
    let restricted = s == "eks:eks-cluster-name"
        || s.starts_with("kubernetes.io/cluster")
        || s == "karpenter.sh/nodepool"
        || s == "karpenter.sh/nodeclaim"
        || s == "karpenter.k8s.aws/ec2nodeclass";
    if restricted {
        return Err(Problem::new(format!("tag contains a restricted tag matching {s}"))
            .hint("Karpenter and EKS set this tag on the instances themselves"));
    }
    super::aws::tag_key(s)
}

/// EC2NodeClass CRD `amiSelectorTerms[].alias`: maxLength 30, `^[a-zA-Z0-9]+@.+$`, a supported family, and
/// `latest` as the only version of the Windows families.
pub(crate) fn ami_alias(s: &str) -> Result<(), Problem> {
    const FAMILIES: [&str; 6] = ["al2", "al2023", "bottlerocket", "windows2019", "windows2022", "windows2025"];
    let hint = "write `family@version`, like `bottlerocket@latest` or `al2023@v20250505`";
    let Some((family, version)) = s.split_once('@') else {
        return Err(Problem::new(format!(
            "'alias' `{s}` is improperly formatted, must match the format 'family@version'"
        ))
        .hint(hint));
    };
    if family.is_empty() || !family.chars().all(|c| c.is_ascii_alphanumeric()) || version.is_empty() {
        return Err(Problem::new(format!(
            "'alias' `{s}` is improperly formatted, must match the format 'family@version'"
        ))
        .hint(hint));
    }
    if s.len() > 30 {
        return Err(Problem::new(format!("alias `{s}` is longer than 30 characters")));
    }
    if !FAMILIES.contains(&family) {
        let p = Problem::new(format!("AMI family `{family}` is not supported, must be one of {}", FAMILIES.join(", ")));
        return Err(match super::closest(family, FAMILIES) {
            Some(c) => p.hint(format!("did you mean `{c}`?")),
            None => p,
        });
    }
    if family.starts_with("windows") && version != "latest" {
        return Err(
            Problem::new("windows families may only specify version 'latest'").hint(format!("write `{family}@latest`"))
        );
    }
    Ok(())
}

/// EC2NodeClass CRD `blockDeviceMappings[].ebs.volumeSize`:
/// `^((?:[1-9][0-9]{0,3}|[1-4][0-9]{4}|[5][0-8][0-9]{3}|59000)Gi|(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|[6][0-3][0-9]{3}|64000)G|([1-9]||[1-5][0-7]|58)Ti|([1-9]||[1-5][0-9]|6[0-3]|64)T)$`
/// i.e. 1–59000Gi, 1–64000G, 1–64T, and for Ti 1–9, 10–17, 20–27, …, 50–57 and 58 (the pattern's `[1-5][0-7]`
/// leaves 18Ti, 19Ti, 28Ti… out, and the API server refuses them). The pattern's empty alternative also lets a
/// bare `Ti` or `T` through; that is no size at all, so it is refused here.
pub(crate) fn volume_size(s: &str) -> Result<(), Problem> {
    let (digits, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: Option<u32> = if is_digits(digits) && !digits.starts_with('0') { digits.parse().ok() } else { None };
    let ok = n.is_some_and(|n| match unit {
        "Gi" => (1..=59000).contains(&n),
        "G" => (1..=64000).contains(&n),
        "Ti" => (1..=9).contains(&n) || ((10..=57).contains(&n) && n % 10 <= 7) || n == 58,
        "T" => (1..=64).contains(&n),
        _ => false,
    });
    if !ok {
        return Err(Problem::new(format!("`{s}` is not a volume size the EC2NodeClass accepts"))
            .hint("write a whole number of `Gi` (1–59000), `G` (1–64000), `Ti` or `T`, like `100Gi`"));
    }
    Ok(())
}

/// A block device name such as `/dev/xvda`.
pub(crate) fn device_name(s: &str) -> Result<(), Problem> {
    let ok = s.strip_prefix("/dev/").is_some_and(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_alphanumeric()));
    if !ok {
        return Err(Problem::new(format!("`{s}` is not a device name")).hint("write like `/dev/xvda`"));
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

/// The chart reference: Helm's `oci://registry/repository` form.
pub(crate) fn chart(s: &str) -> Result<(), Problem> {
    let rest = s.strip_prefix("oci://").ok_or_else(|| {
        Problem::new(format!("`{s}` is not an OCI chart reference"))
            .hint("write like `oci://public.ecr.aws/karpenter/karpenter`")
    })?;
    match rest.split_once('/') {
        Some((host, repo)) if !host.is_empty() && !repo.is_empty() && !repo.contains([':', '@']) => Ok(()),
        _ => Err(Problem::new(format!("`{s}` names no repository in a registry"))
            .hint("write `oci://<registry>/<repository>`, without a tag: the tag is `karpenter.version`")),
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
    use crate::blueprint::rules::judge;

    #[test]
    fn restricted_labels_follow_the_crd() {
        judge(
            requirement_key,
            &["karpenter.sh/capacity-type", "karpenter.k8s.aws/instance-family", "kubernetes.io/arch", "team"],
            &[
                "karpenter.sh/nodepool",
                "karpenter.sh/foo",
                "kubernetes.io/hostname",
                "karpenter.k8s.aws/instance-ami-id",
                "sub.karpenter.sh/x",
                "karpenter.sh",
                "bad key",
            ],
        );
        assert!(requirement_key(&format!("a/{}", "b".repeat(320))).is_err());
        assert!(nodepool_label_key("team").is_ok() && nodepool_label_key("karpenter.sh/x").is_err());
        assert!(nodepool_label_key("Bad/x").is_err());
        assert!(node_group_label_key("karpenter.sh/controller").is_err() && node_group_label_key("role").is_ok());
    }

    #[test]
    fn nodeclass_tags() {
        let reserved =
            ["kubernetes.io/cluster/x", "eks:eks-cluster-name", "karpenter.sh/nodepool", "karpenter.sh/nodeclaim"];
        judge(nodeclass_tag_key, &["team"], &[&reserved[..], &["karpenter.k8s.aws/ec2nodeclass", ""]].concat());
    }

    #[test]
    fn aliases() {
        judge(
            ami_alias,
            &["bottlerocket@latest", "al2023@v20250505", "bottlerocket@v1.10.0", "al2@latest", "windows2022@latest"],
            &[
                "bottlerocket",
                "bottlerocket@",
                "@latest",
                "ubuntu@latest",
                "windows2022@v1",
                "al2023@v20250505-very-long-suffix",
                "bottle-rocket@latest",
            ],
        );
        assert_eq!(ami_alias("botlerocket@latest").unwrap_err().hint.as_deref(), Some("did you mean `bottlerocket`?"));
    }

    #[test]
    fn volume_sizes_follow_the_crd_pattern() {
        judge(
            volume_size,
            &["20Gi", "59000Gi", "64000G", "9Ti", "17Ti", "58Ti", "64T", "1G"],
            &["0Gi", "59001Gi", "18Ti", "59Ti", "65T", "Ti", "20", "20GiB", "020Gi", "1.5Ti"],
        );
    }

    #[test]
    fn devices_and_versions() {
        assert!(device_name("/dev/xvdb").is_ok() && device_name("xvdb").is_err());
        assert_eq!(default_device_name("bottlerocket@latest"), "/dev/xvdb");
        assert_eq!(default_device_name("al2023@latest"), "/dev/xvda");
        assert_eq!(default_device_name("windows2022@latest"), "/dev/sda1");
        assert!(version("1.14.1").is_ok() && version("0.37.0").is_err() && version("1.14").is_err());
    }
}
