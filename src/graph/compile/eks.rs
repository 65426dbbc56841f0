//! The EKS layer: the node security group Karpenter's nodes join (found by its discovery tag), the cluster,
//! access entries (the applying identity as cluster admin, Karpenter's node role as EC2_LINUX, or EC2_WINDOWS
//! when the node classes launch Windows), the tainted controller node group, the add-ons, and Karpenter's Pod
//! Identity association.

use std::collections::BTreeMap;

use serde_json::json;

use super::iam::role_address;
use super::{kinds, Builder};
use crate::blueprint::{Identity, NodeClass};
use crate::graph::kinds::eks_access_entry::AccessEntry;
use crate::graph::kinds::eks_node_group::{KubeTaint, NodeGroup, Scaling, UpdateConfig};
use crate::graph::kinds::eks_pod_identity_association::PodIdentityAssociation;
use crate::graph::kinds::security_group::SecurityGroup;
use crate::graph::value::reference;
use crate::graph::{Address, Resource};

/// The label and taint that keep the controller node group for the Karpenter controller (and CoreDNS).
pub(super) const CONTROLLER_LABEL: (&str, &str) = ("karpenter.sh/controller", "true");
pub(super) const CONTROLLER_TAINT_EFFECT: &str = "NoSchedule";

pub(super) fn compile(b: &mut Builder) {
    let bp = b.bp;
    let name = b.cluster_name().to_string();
    let private_subnets = b.private_subnet_ids();

    let discovery = BTreeMap::from([("karpenter.sh/discovery".to_string(), name.clone())]);
    let node_sg = b.add(Resource::new(
        Address::new("security_group", "node"),
        kinds::SECURITY_GROUP,
        kinds::attrs(&SecurityGroup {
            name: format!("{name}-node"),
            // EC2 takes only `a-zA-Z0-9`, spaces and `._-:/()#,@[]+=&;{}!$*` in a VPC security group's description.
            description: format!("EKS nodes of cluster {name}, selected by Karpenter EC2NodeClasses"),
            vpc_id: reference(&b.vpc(), "id"),
            tags: b.tags(&[&discovery], Some(&format!("{name}-node"))),
        }),
    ));

    // Envelope encryption of Kubernetes secrets with a key of the stack's own.
    let secrets_key = bp.cluster.secrets_encryption.then(|| {
        b.add(Resource::new(
            Address::new("kms_key", "secrets"),
            kinds::KMS_KEY,
            kinds::attrs(&kinds::kms_key::Key {
                alias: format!("alias/{name}-eks-secrets"),
                description: Some(format!("Envelope encryption of Kubernetes secrets of EKS cluster {name}")),
                enable_key_rotation: true,
                deletion_window_in_days: 7,
                tags: b.tags(&[], None),
            }),
        ))
    });

    // The blueprint's own security groups (of an existing VPC) join the one kbp makes.
    let mut security_groups = vec![reference(&node_sg, "id")];
    security_groups.extend(bp.vpc.security_group_ids().iter().map(|id| json!(id)));
    let cluster = b.add(
        Resource::new(
            b.cluster(),
            kinds::EKS_CLUSTER,
            kinds::attrs(&kinds::eks_cluster::Cluster {
                name: name.clone(),
                version: bp.cluster.version.clone(),
                role_arn: reference(&role_address("cluster"), "arn"),
                subnet_ids: private_subnets.clone(),
                security_group_ids: security_groups,
                endpoint_public_access: bp.cluster.endpoint_public_access,
                endpoint_private_access: bp.cluster.endpoint_private_access,
                public_access_cidrs: bp.cluster.public_access_cidrs.clone(),
                authentication_mode: "API".to_string(),
                log_types: Some(bp.cluster.log_types.clone()),
                encryption_key_arn: secrets_key.as_ref().map(|k| reference(k, "arn")),
                tags: b.tags(&[], None),
            }),
        )
        .after(&Address::keyed("iam_role_policy_attachment", "cluster", "AmazonEKSClusterPolicy")),
    );

    b.add(Resource::new(
        Address::new("eks_access_entry", "admin"),
        kinds::EKS_ACCESS_ENTRY,
        kinds::attrs(&AccessEntry {
            cluster_name: reference(&cluster, "name"),
            principal_arn: reference(&b.caller(), "arn"),
            entry_type: "STANDARD".to_string(),
            policy_arns: vec!["arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy".to_string()],
            namespace_policies: BTreeMap::new(),
            username: None,
            kubernetes_groups: Vec::new(),
            tags: b.tags(&[], None),
        }),
    ));
    // One entry per principal, of one type: validation keeps the node classes all Linux or all Windows.
    let node_entry_type = if bp.node_classes.values().any(NodeClass::windows) { "EC2_WINDOWS" } else { "EC2_LINUX" };
    b.add(Resource::new(
        Address::new("eks_access_entry", "karpenter_node"),
        kinds::EKS_ACCESS_ENTRY,
        kinds::attrs(&AccessEntry {
            cluster_name: reference(&cluster, "name"),
            principal_arn: reference(&role_address("karpenter_node"), "arn"),
            entry_type: node_entry_type.to_string(),
            policy_arns: Vec::new(),
            namespace_policies: BTreeMap::new(),
            username: None,
            kubernetes_groups: Vec::new(),
            tags: b.tags(&[], None),
        }),
    ));
    // The blueprint's own entries, by principal.
    for (i, e) in bp.cluster.access_entries.iter().enumerate() {
        let (cluster_wide, namespaced): (Vec<_>, Vec<_>) = e.policies.iter().partition(|p| p.namespaces.is_empty());
        let namespaced = namespaced.iter().map(|p| (p.arn(), p.namespaces.clone())).collect();
        let field = format!("cluster.access_entries[{i}]");
        let entry = Resource::new(
            Address::keyed("eks_access_entry", "granted", &e.principal_arn),
            kinds::EKS_ACCESS_ENTRY,
            kinds::attrs(&AccessEntry {
                cluster_name: reference(&cluster, "name"),
                principal_arn: json!(e.principal_arn),
                entry_type: e.entry_type.clone(),
                policy_arns: cluster_wide.iter().map(|p| p.arn()).collect(),
                namespace_policies: namespaced,
                username: e.username.clone(),
                kubernetes_groups: e.kubernetes_groups.clone(),
                tags: b.tags(&[], None),
            }),
        )
        .from_fields("", &[&field])
        .from_fields("policy_arns", &[&format!("{field}.policies")])
        .from_fields("namespace_policies", &[&format!("{field}.policies")]);
        b.add(entry);
    }

    let ng = &bp.node_group;
    let mut labels = ng.labels.clone();
    labels.insert(CONTROLLER_LABEL.0.to_string(), CONTROLLER_LABEL.1.to_string());
    let taint = |key: &str, value: Option<&str>, effect: &str| KubeTaint {
        key: key.to_string(),
        value: value.map(str::to_string),
        effect: effect.to_string(),
    };
    let mut taints = vec![taint(CONTROLLER_LABEL.0, Some(CONTROLLER_LABEL.1), CONTROLLER_TAINT_EFFECT)];
    taints.extend(ng.taints.iter().map(|t| taint(&t.key, t.value.as_deref(), &t.effect)));
    let mut ng_deps: Vec<Address> = super::iam::NODE_POLICIES
        .iter()
        .map(|p| Address::keyed("iam_role_policy_attachment", "node_group", p))
        .collect();
    // The VPC CNI must be there before nodes can become Ready; private subnets need their NAT route to pull images.
    if bp.addons.contains_key("vpc-cni") {
        ng_deps.push(addon_address("vpc-cni"));
    }
    ng_deps.extend(b.private_egress());
    let mut node_group = Resource::new(
        Address::new("eks_node_group", "controller"),
        kinds::EKS_NODE_GROUP,
        kinds::attrs(&NodeGroup {
            cluster_name: reference(&cluster, "name"),
            name: ng.name.clone(),
            node_role_arn: reference(&role_address("node_group"), "arn"),
            subnet_ids: private_subnets,
            ami_type: ng.ami_type.clone(),
            instance_types: ng.instance_types.clone(),
            capacity_type: ng.capacity_type.clone(),
            scaling: Scaling {
                min_size: count(ng.min_size),
                max_size: count(ng.max_size),
                desired_size: count(ng.desired_size),
            },
            disk_size: Some(count(ng.disk_size)),
            labels,
            taints,
            // The node group follows the control plane unless pinned: an upgrade moves it after the cluster and
            // the add-ons, in the same apply.
            version: Some(ng.kubernetes_version(&bp.cluster).to_string()),
            release_version: ng.release_version.clone(),
            update_config: Some(UpdateConfig {
                max_unavailable: ng.update_config.max_unavailable.map(count).or(ng
                    .update_config
                    .max_unavailable_percentage
                    .is_none()
                    .then_some(1)),
                max_unavailable_percentage: ng.update_config.max_unavailable_percentage.map(count),
            }),
            tags: b.tags(&[], None),
        }),
    );
    node_group.depends_on = ng_deps;
    // The first taint and one label are kbp's own; the rest are the blueprint's, in its order.
    node_group = node_group
        .from_fields("name", &["node_group.name", "cluster.name"])
        .from_fields("version", &["node_group.version", "cluster.version"])
        .from_fields("release_version", &["node_group.release_version"])
        .from_fields("update_config", &["node_group.update_config"])
        .from_fields("taints", &["node_group.taints", "node_group"])
        .from_fields("labels", &["node_group.labels", "node_group"]);
    for i in 0..ng.taints.len() {
        node_group = node_group.from_fields(&format!("taints[{}]", i + 1), &[&format!("node_group.taints[{i}]")]);
    }
    for key in ng.labels.keys() {
        let field = crate::blueprint::field_child("node_group.labels", key);
        node_group = node_group.from_fields(&crate::blueprint::field_child("labels", key), &[&field]);
    }
    // An upgrade moves the control plane, then the add-ons, then the nodes.
    for addon in bp.addons.keys() {
        node_group = node_group.update_after(&addon_address(addon));
    }
    let node_group = b.add(node_group);

    for (addon, cfg) in &bp.addons {
        let mut r = Resource::new(
            addon_address(addon),
            kinds::EKS_ADDON,
            kinds::attrs(&kinds::eks_addon::Addon {
                cluster_name: reference(&cluster, "name"),
                addon_name: addon.clone(),
                addon_version: cfg.version.clone(),
                // An unpinned add-on moves to the default of the cluster's new version when this changes.
                kubernetes_version: Some(bp.cluster.version.clone()),
                configuration_values: Some(configuration_values(
                    addon,
                    cfg.configuration_values.as_deref(),
                    &ng.taints,
                )),
                resolve_conflicts: Some("OVERWRITE".to_string()),
                tags: b.tags(&[], None),
            }),
        );
        r = r.from_fields("kubernetes_version", &["cluster.version"]);
        // CoreDNS needs a node to run on; the others run as DaemonSets and are wanted before nodes join.
        if addon == "coredns" {
            r = r.after_created(&node_group);
        }
        b.add(r);
    }

    if bp.karpenter.identity == Identity::PodIdentity {
        let mut assoc = Resource::new(
            Address::new("eks_pod_identity_association", "karpenter"),
            kinds::EKS_POD_IDENTITY_ASSOCIATION,
            kinds::attrs(&PodIdentityAssociation {
                cluster_name: reference(&cluster, "name"),
                namespace: bp.karpenter.namespace.clone(),
                service_account: "karpenter".to_string(),
                role_arn: reference(&role_address("karpenter_controller"), "arn"),
                tags: b.tags(&[], None),
            }),
        );
        if bp.addons.contains_key("eks-pod-identity-agent") {
            assoc = assoc.after(&addon_address("eks-pod-identity-agent"));
        }
        b.add(assoc);
    }
}

pub(super) fn addon_address(name: &str) -> Address {
    Address::keyed("eks_addon", "main", name)
}

/// CoreDNS must tolerate the controller node group's taints (kbp's own and the blueprint's): it has to run before
/// any Karpenter node exists. The tolerations are added to whatever configuration the blueprint gives, unless the
/// blueprint sets tolerations itself (validate then checks they cover the taints).
fn configuration_values(
    addon: &str,
    given: Option<&str>,
    taints: &[crate::blueprint::model::Taint],
) -> serde_json::Value {
    let mut cfg: serde_json::Value = given.and_then(|g| serde_json::from_str(g).ok()).unwrap_or_else(|| json!({}));
    if addon == "coredns" && cfg.get("tolerations").is_none() {
        let mut tolerations = vec![
            json!({"key": CONTROLLER_LABEL.0, "value": CONTROLLER_LABEL.1, "effect": CONTROLLER_TAINT_EFFECT}),
            json!({"key": "CriticalAddonsOnly", "operator": "Exists"}),
        ];
        for t in taints.iter().filter(|t| t.key != CONTROLLER_LABEL.0) {
            tolerations.push(match &t.value {
                Some(value) => json!({"key": t.key, "operator": "Equal", "value": value, "effect": t.effect}),
                None => json!({"key": t.key, "operator": "Exists", "effect": t.effect}),
            });
        }
        if let Some(obj) = cfg.as_object_mut() {
            obj.insert("tolerations".to_string(), json!(tolerations));
        }
    }
    if cfg.as_object().is_some_and(|o| o.is_empty()) {
        serde_json::Value::Null
    } else {
        cfg
    }
}

/// A count the blueprint bounds (node counts, GiB, percentages) as the `i32` EKS takes.
fn count(n: u32) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}
