//! Semantic validation of the typed blueprint: rules that span fields (subnets against the VPC and each other,
//! the fields an existing VPC allows, node group sizes, references between pools and classes, operator against
//! values). Every finding points at the field through the path index; findings about a field the schema already
//! refused are skipped.

mod network;
mod pools;

pub(crate) use pools::allows_spot;

use super::model::{Blueprint, Identity};
use super::tree::{item, Index};
use crate::diag::{Builder, Diagnostics, Severity};

/// Why an access entry other than STANDARD takes no access policies.
const POLICIES_HINT: &str = "only STANDARD entries are associated with access policies";
/// Why a node access entry takes no Kubernetes groups, and what to do.
const NODE_GROUPS_HINT: &str = "EKS gives node entries their groups itself: remove them, or use type = \"STANDARD\"";

pub(crate) fn validate(bp: &Blueprint, index: &Index, diags: &mut Diagnostics) {
    let mut c = Checker { index, diags };
    cluster(&mut c, bp);
    network::vpc(&mut c, bp);
    node_group(&mut c, bp);
    karpenter(&mut c, bp);
    pools::node_classes(&mut c, bp);
    pools::node_pools(&mut c, bp);
    state(&mut c, bp);
}

/// The `[state]` fields that belong to one backend are refused with the other.
fn state(c: &mut Checker, bp: &Blueprint) {
    let st = &bp.state;
    if st.backend == "s3" && st.bucket.is_none() {
        c.error("state.backend", &[], "the `s3` state backend needs a `bucket`".to_string())
            .map(|b| b.hint("add `bucket = \"NAME\"` to [state], naming an existing bucket (versioning on)"));
    }
    let s3_only = [
        ("bucket", st.bucket.is_some()),
        ("key", st.key.is_some()),
        ("region", st.region.is_some()),
        ("kms_key_id", st.kms_key_id.is_some()),
        ("profile", st.profile.is_some()),
        ("role_arn", st.role_arn.is_some()),
    ];
    if st.backend == "local" {
        for (name, _) in s3_only.iter().filter(|(_, set)| *set) {
            let at = format!("state.{name}");
            c.error(&at, &["state.backend"], format!("`{name}` is for the `s3` state backend, not `local`"))
                .map(|b| b.hint("set `backend = \"s3\"`, or remove it"));
        }
    }
    if st.backend == "s3" && st.path.is_some() {
        c.error("state.path", &["state.backend"], "`path` is for the `local` state backend, not `s3`".to_string())
            .map(|b| b.hint("use `key` for the object's key in the bucket"));
    }
}

pub(crate) struct Checker<'a> {
    index: &'a Index,
    diags: &'a mut Diagnostics,
}

impl Checker<'_> {
    /// Reports at the field `at` (or its nearest written ancestor), unless `at` or one of `reads` was refused.
    fn report(&mut self, severity: Severity, at: &str, reads: &[&str], message: String) -> Option<Builder<'_>> {
        if std::iter::once(at).chain(reads.iter().copied()).any(|p| self.index.is_rejected(p)) {
            return None;
        }
        let (source, span) = self.place(at);
        let b = match severity {
            Severity::Error => self.diags.error(source, span, message),
            Severity::Warning => self.diags.warning(source, span, message),
        };
        Some(b.path(at))
    }

    fn error(&mut self, at: &str, reads: &[&str], message: String) -> Option<Builder<'_>> {
        self.report(Severity::Error, at, reads, message)
    }

    fn warning(&mut self, at: &str, reads: &[&str], message: String) -> Option<Builder<'_>> {
        self.report(Severity::Warning, at, reads, message)
    }

    fn place(&self, path: &str) -> (usize, std::ops::Range<usize>) {
        self.index.locate(path).map_or((0, 0..0), |p| (p.source, p.span.clone()))
    }

    fn written(&self, path: &str) -> bool {
        self.index.get(path).is_some()
    }
}

/// EKS publishes no Amazon Linux 2 AMIs from Kubernetes 1.33 on.
fn has_al2(version: &str) -> bool {
    let minor = version.strip_prefix("1.").and_then(|m| m.parse::<u32>().ok());
    minor.is_some_and(|m| m < 33)
}

fn cluster(c: &mut Checker, bp: &Blueprint) {
    let cl = &bp.cluster;
    if !cl.endpoint_public_access && !cl.endpoint_private_access {
        let msg = "the API server endpoint must be reachable: public and private access are both off".to_string();
        c.error("cluster.endpoint_public_access", &["cluster.endpoint_private_access"], msg)
            .map(|b| b.hint("enable `endpoint_private_access` (reachable from the VPC) or `endpoint_public_access`"));
    }
    if !cl.endpoint_public_access && c.written("cluster.public_access_cidrs") {
        let msg = "`public_access_cidrs` has no effect without public endpoint access".to_string();
        c.warning("cluster.public_access_cidrs", &["cluster.endpoint_public_access"], msg)
            .map(|b| b.hint("remove it, or set `endpoint_public_access = true`"));
    }
    // Names derived from the cluster name (roles, policies, the queue) are judged with everything else the
    // stack sends, by the providers' AWS constraints (`providers::contract`, after compiling).
    access_entries(c, bp);
}

/// What EKS refuses of `[[cluster.access_entries]]`: one entry per principal; groups and policies only on a
/// STANDARD entry; and the principals whose entries kbp (Karpenter's nodes) or EKS (the node group's role)
/// make themselves.
fn access_entries(c: &mut Checker, bp: &Blueprint) {
    let own = [
        (format!(":role/{}", bp.karpenter.node_role_name), "kbp makes the entry of Karpenter's node role itself"),
        (format!(":role/{}-eks-nodes", bp.cluster.name), "EKS makes the entry of the node group's role itself"),
    ];
    let mut seen: Vec<&str> = Vec::new();
    for (i, e) in bp.cluster.access_entries.iter().enumerate() {
        let at = item("cluster.access_entries", i);
        let principal = format!("{at}.principal_arn");
        if seen.contains(&e.principal_arn.as_str()) {
            c.error(&principal, &[], format!("a second access entry for {}", e.principal_arn))
                .map(|b| b.hint("EKS takes one entry per principal: merge the two"));
        }
        seen.push(&e.principal_arn);
        if let Some((_, why)) = own.iter().find(|(suffix, _)| e.principal_arn.ends_with(suffix.as_str())) {
            c.error(&principal, &[], format!("{} already has an access entry: {why}", e.principal_arn))
                .map(|b| b.hint("remove this entry"));
        }
        if e.entry_type != "STANDARD" {
            let kind = &e.entry_type;
            let refused = [
                (e.kubernetes_groups.is_empty(), "kubernetes_groups", "Kubernetes groups", NODE_GROUPS_HINT),
                (e.policies.is_empty(), "policies", "access policies", POLICIES_HINT),
            ];
            for (_, field, what, hint) in refused.into_iter().filter(|(empty, ..)| !empty) {
                c.error(
                    &format!("{at}.{field}"),
                    &[&format!("{at}.type")],
                    format!("an access entry of type {kind} takes no {what}"),
                )
                .map(|b| b.hint(hint));
            }
        }
    }
}

fn node_group(c: &mut Checker, bp: &Blueprint) {
    let g = &bp.node_group;
    if g.min_size > g.max_size {
        let msg = format!("min_size ({}) is greater than max_size ({})", g.min_size, g.max_size);
        let related = c.place("node_group.max_size");
        c.error("node_group.min_size", &["node_group.max_size"], msg).map(|b| {
            b.expected(format!("at most max_size ({})", g.max_size)).related(
                related.0,
                related.1,
                "max_size is set here",
            )
        });
    } else if g.desired_size < g.min_size || g.desired_size > g.max_size {
        let msg =
            format!("desired_size ({}) is outside min_size..max_size ({}..{})", g.desired_size, g.min_size, g.max_size);
        c.error("node_group.desired_size", &["node_group.min_size", "node_group.max_size"], msg)
            .map(|b| b.expected(format!("from {} to {}", g.min_size, g.max_size)));
    }
    let version = g.kubernetes_version(&bp.cluster);
    if g.ami_type.starts_with("AL2_") && !has_al2(version) {
        let msg = format!("EKS publishes no {} AMIs for Kubernetes {version}", g.ami_type);
        c.error("node_group.ami_type", &["cluster.version", "node_group.version"], msg)
            .map(|b| b.hint("use an AL2023_* or BOTTLEROCKET_* AMI type"));
    }
    node_skew(c, &bp.cluster.version, g.version.as_deref());
    let u = &g.update_config;
    if u.max_unavailable.is_some() && u.max_unavailable_percentage.is_some() {
        let msg = "EKS takes one of `max_unavailable` and `max_unavailable_percentage`, not both".to_string();
        c.error(
            "node_group.update_config.max_unavailable_percentage",
            &["node_group.update_config.max_unavailable"],
            msg,
        )
        .map(|b| b.hint("remove one of them"));
    }
    let arm = g.ami_type.contains("ARM_64");
    for (i, t) in g.instance_types.iter().enumerate() {
        if super::rules::aws::is_graviton(t) != arm {
            let arch = if arm { "arm64" } else { "x86_64" };
            let msg =
                format!("instance type `{t}` does not look like an {arch} type, which AMI type {} needs", g.ami_type);
            c.warning(&item("node_group.instance_types", i), &["node_group.ami_type"], msg);
        }
    }
    for (i, t) in g.taints.iter().enumerate() {
        if t.key == "karpenter.sh/controller" {
            let msg = "the `karpenter.sh/controller` taint is implied: kbp always adds it".to_string();
            c.error(&format!("{}.key", item("node_group.taints", i)), &[], msg).map(|b| b.hint("remove this taint"));
        }
    }
}

/// A node group's pinned version against its control plane's: EKS refuses nodes newer than the control plane,
/// or more minor versions behind than Kubernetes' kubelet skew allows (three from 1.28 on, two before).
fn node_skew(c: &mut Checker, cluster: &str, pinned: Option<&str>) {
    let Some(pinned) = pinned else { return };
    let Some(behind) = super::versions::behind(cluster, pinned) else { return };
    let allowed = i64::from(super::versions::max_node_skew(cluster));
    let reads = ["cluster.version"];
    if behind < 0 {
        let msg = format!("node_group.version {pinned} is newer than cluster.version {cluster}");
        c.error("node_group.version", &reads, msg).map(|b| {
            b.hint(format!(
                "nodes are never newer than their control plane: set it to \"{cluster}\" or older, or remove it"
            ))
        });
    } else if behind > allowed {
        let msg = format!(
            "node_group.version {pinned} is {behind} minor versions behind cluster.version {cluster}; EKS allows {allowed}"
        );
        c.error("node_group.version", &reads, msg)
            .map(|b| b.hint("upgrade the nodes first (raise node_group.version), then the control plane"));
    }
}

fn karpenter(c: &mut Checker, bp: &Blueprint) {
    if bp.karpenter.identity == Identity::PodIdentity && !bp.addons.contains_key("eks-pod-identity-agent") {
        let msg = "Pod Identity needs the `eks-pod-identity-agent` add-on, which is disabled".to_string();
        let related = c.place("addons.eks-pod-identity-agent.enabled");
        c.error("karpenter.identity", &[], msg).map(|b| {
            b.hint("enable the add-on, or use identity = \"irsa\"").related(related.0, related.1, "disabled here")
        });
    }
    if !bp.karpenter.spot {
        let spot_pool = bp.node_pools.iter().find(|(_, p)| pools::allows_spot(p));
        if let Some((name, _)) = spot_pool {
            let msg = format!(
                "node pool `{name}` may launch Spot instances, but the EC2 Spot service-linked role is not ensured"
            );
            c.warning("karpenter.spot", &[], msg).map(|b| {
                b.hint("set `spot = true`: Karpenter cannot create the role itself and fails with AuthFailure.ServiceLinkedRoleCreationNotPermitted")
            });
        }
    }
}
