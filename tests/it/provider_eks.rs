//! The EKS providers against a private emulator, one lifecycle per kind: create, read back with the raw SDK
//! (attributes, kbp tags, labels and taints, add-on configuration), provider read equals the desired attributes
//! (after canonical), update in place, delete (twice), and find.

use std::collections::BTreeMap;

use kbp::graph::{Address, Attrs};
use kbp::providers::Context;
use serde_json::{json, Value};

use crate::support::provider::*;
use crate::support::*;

const CLUSTER: &str = "demo";

/// What a cluster needs: a VPC with private subnets in two zones, the node security group, and the cluster and
/// node roles.
struct Prerequisites {
    vpc_id: String,
    subnets: Vec<String>,
    security_group_id: String,
    cluster_role: String,
    node_role: String,
}

/// What the EKS kinds need around them, made with the raw SDK, and EKS read back.
impl Harness {
    async fn prerequisites(&self) -> Prerequisites {
        let vpc = self.ec2.create_vpc().cidr_block("10.0.0.0/16").send().await.unwrap();
        let vpc_id = vpc.vpc().unwrap().vpc_id().unwrap().to_string();
        let mut subnets = Vec::new();
        for (i, az) in ["us-west-2a", "us-west-2b"].iter().enumerate() {
            let cidr = format!("10.0.{i}.0/24");
            let s = self.ec2.create_subnet().vpc_id(&vpc_id).cidr_block(cidr).availability_zone(*az).send().await;
            subnets.push(s.unwrap().subnet().unwrap().subnet_id().unwrap().to_string());
        }
        let sg = self.ec2.create_security_group().group_name("demo-node").description("nodes").vpc_id(&vpc_id);
        let security_group_id = sg.send().await.unwrap().group_id().unwrap().to_string();
        Prerequisites {
            vpc_id,
            subnets,
            security_group_id,
            cluster_role: self.role("demo-cluster", "eks.amazonaws.com").await,
            node_role: self.role("demo-node-group", "ec2.amazonaws.com").await,
        }
    }

    async fn role(&self, name: &str, service: &str) -> String {
        self.role_at("/", name, service).await
    }

    async fn role_at(&self, path: &str, name: &str, service: &str) -> String {
        let trust = json!({
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Principal": {"Service": service}, "Action": ["sts:AssumeRole", "sts:TagSession"]}],
        });
        let role = self.iam.create_role().path(path).role_name(name).assume_role_policy_document(trust.to_string());
        role.send().await.unwrap().role().unwrap().arn().to_string()
    }

    async fn cluster(&self, pre: &Prerequisites) -> String {
        self.create("aws_eks_cluster", "eks_cluster.main", cluster_attrs(pre, "1.33", json!({}))).await.id
    }

    async fn describe_cluster(&self) -> aws_sdk_eks::types::Cluster {
        self.eks.describe_cluster().name(CLUSTER).send().await.unwrap().cluster.unwrap()
    }

    async fn describe_node_group(&self, name: &str) -> aws_sdk_eks::types::Nodegroup {
        let d = self.eks.describe_nodegroup().cluster_name(CLUSTER).nodegroup_name(name).send().await;
        d.unwrap().nodegroup.unwrap()
    }
}

fn cluster_attrs(pre: &Prerequisites, version: &str, tags: Value) -> Value {
    json!({
        "name": CLUSTER,
        "version": version,
        "role_arn": pre.cluster_role,
        // Reversed: the provider compares subnets as a set.
        "subnet_ids": [pre.subnets[1], pre.subnets[0]],
        "security_group_ids": [pre.security_group_id],
        "endpoint_public_access": true,
        "endpoint_private_access": false,
        "public_access_cidrs": ["0.0.0.0/0"],
        "authentication_mode": "API",
        "log_types": ["audit", "api"],
        "encryption_key_arn": null,
        "tags": tags,
    })
}

#[tokio::test]
async fn cluster_lifecycle() {
    let h = Harness::start().await;
    let pre = h.prerequisites().await;
    let address = "eks_cluster.main";
    let applied = h.create("aws_eks_cluster", address, cluster_attrs(&pre, "1.33", json!({"team": "a"}))).await;
    assert_eq!(applied.id, CLUSTER);

    let c = h.describe_cluster().await;
    assert_eq!(c.status().map(|s| s.as_str()), Some("ACTIVE"));
    assert_eq!((c.version(), c.role_arn()), (Some("1.33"), Some(pre.cluster_role.as_str())));
    let vpc = c.resources_vpc_config().unwrap();
    assert_eq!(sorted(vpc.subnet_ids().to_vec()), sorted(pre.subnets.clone()));
    assert_eq!(vpc.security_group_ids(), [pre.security_group_id.as_str()]);
    assert_eq!(vpc.vpc_id(), Some(pre.vpc_id.as_str()));
    assert!(vpc.endpoint_public_access() && !vpc.endpoint_private_access());
    let access = c.access_config().unwrap();
    assert_eq!(access.authentication_mode().map(|m| m.as_str()), Some("API"));
    assert_eq!(access.bootstrap_cluster_creator_admin_permissions(), Some(false));
    assert_eq!(tag_map(c.tags()), expected_tags(&[("team", "a")], address));
    // kbp makes its own admin access entry; EKS made none for the creator.
    let entries = h.eks.list_access_entries().cluster_name(CLUSTER).send().await.unwrap();
    assert!(entries.access_entries().is_empty(), "no bootstrap access entry: {:?}", entries.access_entries());

    let out = &applied.outputs;
    assert_eq!(out["name"], CLUSTER);
    assert_eq!(out["arn"], c.arn().unwrap());
    assert_eq!(out["endpoint"], c.endpoint().unwrap());
    assert!(out["endpoint"].as_str().unwrap().starts_with("https://"));
    assert_eq!(out["certificate_authority_data"], c.certificate_authority().unwrap().data().unwrap());
    assert_eq!(out["oidc_issuer"], c.identity().unwrap().oidc().unwrap().issuer().unwrap());
    assert!(out["cluster_security_group_id"].as_str().unwrap().starts_with("sg-"));
    assert_eq!((out["version"].as_str(), out["platform_version"].is_string()), (Some("1.33"), true));

    // In place: one minor version up, endpoint access, logging and tags, each its own EKS update.
    let mut next = cluster_attrs(&pre, "1.34", json!({"team": "b", "env": "test"}));
    next["endpoint_private_access"] = json!(true);
    next["public_access_cidrs"] = json!(["203.0.113.0/24", "198.51.100.0/24"]);
    next["log_types"] = json!(["scheduler", "audit"]);
    let updated = h.update_in_place("aws_eks_cluster", address, CLUSTER, next.clone()).await;
    assert_eq!(updated.outputs["version"], "1.34");
    let c = h.describe_cluster().await;
    assert_eq!((c.version(), c.status().map(|s| s.as_str())), (Some("1.34"), Some("ACTIVE")));
    let vpc = c.resources_vpc_config().unwrap();
    assert!(vpc.endpoint_private_access());
    assert_eq!(sorted(vpc.public_access_cidrs().to_vec()), ["198.51.100.0/24", "203.0.113.0/24"]);
    assert_eq!(sorted(vpc.subnet_ids().to_vec()), sorted(pre.subnets.clone()), "subnets survive an endpoint update");
    let logging = c.logging().unwrap().cluster_logging();
    let enabled: Vec<&str> =
        logging.iter().filter(|s| s.enabled() == Some(true)).flat_map(|s| s.types()).map(|t| t.as_str()).collect();
    assert_eq!(sorted(enabled.iter().map(|t| t.to_string()).collect()), ["audit", "scheduler"]);
    assert_eq!(tag_map(c.tags()), expected_tags(&[("team", "b"), ("env", "test")], address));

    // Two minor versions at once, or down: refused before any call, naming the way forward.
    let cluster_address: Address = address.parse().unwrap();
    let mut skip = next.clone();
    skip["version"] = json!("1.36");
    let e = h.try_update("aws_eks_cluster", &cluster_address, CLUSTER, &obj(skip)).await.unwrap_err();
    assert!(e.message.contains("1.34 → 1.35 → 1.36"), "{e}");
    assert!(e.hint.as_deref().unwrap_or_default().contains("\"1.35\""), "{e:?}");
    let mut down = next.clone();
    down["version"] = json!("1.33");
    let e = h.try_update("aws_eks_cluster", &cluster_address, CLUSTER, &obj(down)).await.unwrap_err();
    assert!(e.message.contains("downgrade"), "{e}");
    assert_eq!(h.describe_cluster().await.version(), Some("1.34"));

    assert_eq!(h.find("aws_eks_cluster", address, &next).await, Some(CLUSTER.to_string()));
    let other_stack = Context::from_sdk(h.cx.sdk.clone(), "other-stack", REGION);
    let p = h.provider("aws_eks_cluster");
    let a: Address = address.parse().unwrap();
    let attrs = obj(next.clone());
    assert_eq!(
        p.find(&other_stack, &desired(&a, &attrs)).await.unwrap(),
        None,
        "another stack's cluster is not adopted"
    );

    h.delete("aws_eks_cluster", CLUSTER).await;
    let err = h.eks.describe_cluster().name(CLUSTER).send().await.unwrap_err();
    assert_eq!(aws_sdk_eks::error::ProvideErrorMetadata::code(&err), Some("ResourceNotFoundException"));
    assert_eq!(h.find("aws_eks_cluster", address, &next).await, None);
}

#[tokio::test]
async fn node_group_lifecycle() {
    let h = Harness::start().await;
    let pre = h.prerequisites().await;
    h.cluster(&pre).await;
    let address = "eks_node_group.controller";
    let attrs = |scaling: Value, labels: Value, taints: Value, tags: Value| {
        json!({
            "cluster_name": CLUSTER,
            "name": "controller",
            "node_role_arn": pre.node_role,
            "subnet_ids": pre.subnets,
            "ami_type": "AL2023_x86_64_STANDARD",
            "instance_types": ["m6i.large", "m5.large"],
            "capacity_type": "ON_DEMAND",
            "scaling": scaling,
            "disk_size": 30,
            "labels": labels,
            "taints": taints,
            // The cluster's version, as the blueprint compiles it.
            "version": "1.33",
            "release_version": null,
            "update_config": {"max_unavailable": 1, "max_unavailable_percentage": null},
            "tags": tags,
        })
    };
    let first = attrs(
        json!({"min_size": 1, "max_size": 3, "desired_size": 2}),
        json!({"karpenter.sh/controller": "true", "team": "a"}),
        json!([
            {"key": "karpenter.sh/controller", "value": "true", "effect": "NoSchedule"},
            {"key": "dedicated", "value": null, "effect": "NoExecute"},
        ]),
        json!({"team": "a"}),
    );
    let applied = h.create("aws_eks_node_group", address, first).await;
    assert_eq!(applied.id, "demo:controller");
    assert_eq!(applied.outputs["name"], "controller");

    let ng = h.describe_node_group("controller").await;
    assert_eq!(applied.outputs["arn"], ng.nodegroup_arn().unwrap());
    assert_eq!(ng.status().map(|s| s.as_str()), Some("ACTIVE"));
    assert_eq!(ng.node_role(), Some(pre.node_role.as_str()));
    assert_eq!(ng.instance_types(), ["m6i.large", "m5.large"]);
    assert_eq!((ng.disk_size(), ng.capacity_type().map(|c| c.as_str())), (Some(30), Some("ON_DEMAND")));
    let s = ng.scaling_config().unwrap();
    assert_eq!((s.min_size(), s.max_size(), s.desired_size()), (Some(1), Some(3), Some(2)));
    assert_eq!(
        tag_map(ng.labels()),
        BTreeMap::from([("karpenter.sh/controller".into(), "true".into()), ("team".into(), "a".into())])
    );
    let taints = |ng: &aws_sdk_eks::types::Nodegroup| {
        let mut t: Vec<(String, Option<String>, String)> = ng
            .taints()
            .iter()
            .map(|t| {
                (t.key().unwrap().to_string(), t.value().map(str::to_string), t.effect().unwrap().as_str().to_string())
            })
            .collect();
        t.sort();
        t
    };
    assert_eq!(
        taints(&ng),
        [
            ("dedicated".to_string(), None, "NO_EXECUTE".to_string()),
            ("karpenter.sh/controller".to_string(), Some("true".to_string()), "NO_SCHEDULE".to_string()),
        ]
    );
    assert_eq!(tag_map(ng.tags()), expected_tags(&[("team", "a")], address));

    // Scaling, a changed and a new label and one removed, a taint's value changed, one removed and one added.
    let second = attrs(
        json!({"min_size": 2, "max_size": 4, "desired_size": 3}),
        json!({"karpenter.sh/controller": "true", "tier": "system"}),
        json!([
            {"key": "karpenter.sh/controller", "value": "yes", "effect": "NoSchedule"},
            {"key": "spot", "value": "false", "effect": "PreferNoSchedule"},
        ]),
        json!({"team": "b"}),
    );
    h.update_in_place("aws_eks_node_group", address, "demo:controller", second.clone()).await;
    let ng = h.describe_node_group("controller").await;
    let s = ng.scaling_config().unwrap();
    assert_eq!((s.min_size(), s.max_size(), s.desired_size()), (Some(2), Some(4), Some(3)));
    assert_eq!(
        tag_map(ng.labels()),
        BTreeMap::from([("karpenter.sh/controller".into(), "true".into()), ("tier".into(), "system".into())])
    );
    assert_eq!(
        taints(&ng),
        [
            ("karpenter.sh/controller".to_string(), Some("yes".to_string()), "NO_SCHEDULE".to_string()),
            ("spot".to_string(), Some("false".to_string()), "PREFER_NO_SCHEDULE".to_string()),
        ]
    );
    assert_eq!(tag_map(ng.tags()), expected_tags(&[("team", "b")], address));

    // A share of the nodes out of service at once, and a pinned AMI release: EKS takes both, and read reports
    // the release as an attribute once pinned.
    let mut third = second.clone();
    third["update_config"] = json!({"max_unavailable": null, "max_unavailable_percentage": 50});
    third["release_version"] = json!("1.33.13-20260115");
    h.update_in_place("aws_eks_node_group", address, "demo:controller", third).await;
    let ng = h.describe_node_group("controller").await;
    let u = ng.update_config().unwrap();
    assert_eq!((u.max_unavailable(), u.max_unavailable_percentage()), (None, Some(50)));
    assert_eq!(ng.release_version(), Some("1.33.13-20260115"));

    assert_eq!(h.find("aws_eks_node_group", address, &second).await, Some("demo:controller".to_string()));
    let mut other = second.clone();
    other["name"] = json!("other");
    assert_eq!(h.find("aws_eks_node_group", address, &other).await, None);

    h.delete("aws_eks_node_group", "demo:controller").await;
    let left = h.eks.list_nodegroups().cluster_name(CLUSTER).send().await.unwrap();
    assert!(left.nodegroups().is_empty(), "node group is gone: {:?}", left.nodegroups());
    h.delete("aws_eks_cluster", CLUSTER).await;
}

/// The version EKS marks as the default of `addon` for Kubernetes `version`, as the emulator lists it.
pub(crate) async fn default_addon_version(eks: &aws_sdk_eks::client::Client, addon: &str, version: &str) -> String {
    let out = eks.describe_addon_versions().addon_name(addon).kubernetes_version(version).send().await.unwrap();
    let versions = out.addons()[0].addon_versions();
    let default = versions
        .iter()
        .find(|v| v.compatibilities().iter().any(|c| c.cluster_version() == Some(version) && c.default_version()));
    default.unwrap().addon_version().unwrap().to_string()
}

#[tokio::test]
async fn addon_lifecycle() {
    let h = Harness::start().await;
    let pre = h.prerequisites().await;
    h.cluster(&pre).await;
    let attrs = |name: &str, version: Value, config: Value, tags: Value| {
        json!({
            "cluster_name": CLUSTER,
            "addon_name": name,
            "addon_version": version,
            "configuration_values": config,
            "resolve_conflicts": "OVERWRITE",
            "tags": tags,
            "kubernetes_version": "1.33",
        })
    };

    // Unpinned: EKS's default for the cluster's version is installed, and read keeps reporting "unpinned".
    let cni_address = "eks_addon.main[\"vpc-cni\"]";
    let cni =
        h.create("aws_eks_addon", cni_address, attrs("vpc-cni", Value::Null, Value::Null, json!({"team": "a"}))).await;
    assert_eq!(cni.id, "demo:vpc-cni");
    let default = default_addon_version(&h.eks, "vpc-cni", "1.33").await;
    let a = h.eks.describe_addon().cluster_name(CLUSTER).addon_name("vpc-cni").send().await.unwrap().addon.unwrap();
    assert_eq!(a.addon_version(), Some(default.as_str()));
    assert_eq!(a.status().map(|s| s.as_str()), Some("ACTIVE"));
    assert_eq!(tag_map(a.tags()), expected_tags(&[("team", "a")], cni_address));
    assert_eq!((cni.outputs["version"].as_str(), cni.outputs["arn"].as_str()), (Some(default.as_str()), a.addon_arn()));
    // Read for an adopted add-on (no prior state) reports the installed version.
    let p = h.provider("aws_eks_addon");
    let adopted = p.read(&h.cx, "demo:vpc-cni", &Attrs::new()).await.unwrap().unwrap();
    assert_eq!(adopted.attrs["addon_version"], default.as_str());

    // Pinned, with CoreDNS-style configuration values that travel as a JSON string.
    let dns_address = "eks_addon.main[\"coredns\"]";
    let versions =
        h.eks.describe_addon_versions().addon_name("coredns").kubernetes_version("1.33").send().await.unwrap();
    let versions: Vec<String> =
        versions.addons()[0].addon_versions().iter().map(|v| v.addon_version().unwrap().to_string()).collect();
    assert!(versions.len() >= 2, "the emulator offers two coredns versions for 1.33: {versions:?}");
    let config = json!({
        "replicaCount": 2,
        "tolerations": [
            {"key": "karpenter.sh/controller", "value": "true", "effect": "NoSchedule"},
            {"key": "CriticalAddonsOnly", "operator": "Exists"},
        ],
    });
    let dns =
        h.create("aws_eks_addon", dns_address, attrs("coredns", json!(versions[1]), config.clone(), json!({}))).await;
    let describe = || async {
        h.eks.describe_addon().cluster_name(CLUSTER).addon_name("coredns").send().await.unwrap().addon.unwrap()
    };
    let a = describe().await;
    assert_eq!(a.addon_version(), Some(versions[1].as_str()));
    let sent: Value = serde_json::from_str(a.configuration_values().unwrap()).unwrap();
    assert_eq!(sent, config);

    // In place: another version and other configuration; then the configuration removed.
    let next = attrs("coredns", json!(versions[0]), json!({"replicaCount": 3}), json!({"env": "test"}));
    let updated = h.update_in_place("aws_eks_addon", dns_address, &dns.id, next).await;
    assert_eq!(updated.outputs["version"], versions[0].as_str());
    let a = describe().await;
    assert_eq!(a.addon_version(), Some(versions[0].as_str()));
    assert_eq!(serde_json::from_str::<Value>(a.configuration_values().unwrap()).unwrap(), json!({"replicaCount": 3}));
    assert_eq!(tag_map(a.tags()), expected_tags(&[("env", "test")], dns_address));
    h.update_in_place(
        "aws_eks_addon",
        dns_address,
        &dns.id,
        attrs("coredns", json!(versions[0]), Value::Null, json!({})),
    )
    .await;
    assert!(describe().await.configuration_values().unwrap_or_default().is_empty(), "configuration removed");

    let unpinned = attrs("vpc-cni", Value::Null, Value::Null, json!({}));
    assert_eq!(h.find("aws_eks_addon", cni_address, &unpinned).await, Some("demo:vpc-cni".to_string()));
    assert_eq!(
        h.find("aws_eks_addon", cni_address, &attrs("kube-proxy", Value::Null, Value::Null, json!({}))).await,
        None
    );

    h.delete("aws_eks_addon", &dns.id).await;
    h.delete("aws_eks_addon", &cni.id).await;
    let left = h.eks.list_addons().cluster_name(CLUSTER).send().await.unwrap();
    assert!(left.addons().is_empty(), "add-ons are gone: {:?}", left.addons());
    assert_eq!(h.find("aws_eks_addon", cni_address, &unpinned).await, None);
}

#[tokio::test]
async fn access_entry_lifecycle() {
    let h = Harness::start().await;
    let pre = h.prerequisites().await;
    h.cluster(&pre).await;
    // kbp running with assumed-role credentials: the caller is a session of a role that lives under a path, as
    // SSO roles do (theirs, /aws-reserved/sso.amazonaws.com/…, trips the emulator's region detection).
    let sso_role = h.role_at("/platform/admins/", "AWSReservedSSO_Admin_1a2b", "ec2.amazonaws.com").await;
    let session = format!("arn:aws:sts::{ACCOUNT_ID}:assumed-role/AWSReservedSSO_Admin_1a2b/jane@example.com");
    let policy = |name: &str| format!("arn:aws:eks::aws:cluster-access-policy/{name}");
    let admin = |policies: Vec<String>, tags: Value| {
        json!({
            "cluster_name": CLUSTER, "principal_arn": session, "type": "STANDARD", "policy_arns": policies,
            "namespace_policies": {}, "username": null, "kubernetes_groups": [], "tags": tags,
        })
    };
    let address = "eks_access_entry.admin";
    let applied =
        h.create("aws_eks_access_entry", address, admin(vec![policy("AmazonEKSClusterAdminPolicy")], json!({}))).await;
    assert_eq!(applied.id, format!("demo:{sso_role}"), "the entry names the role with its path");

    let entry = h.eks.describe_access_entry().cluster_name(CLUSTER).principal_arn(&sso_role).send().await.unwrap();
    let entry = entry.access_entry.unwrap();
    assert_eq!(entry.r#type(), Some("STANDARD"));
    assert_eq!(applied.outputs["arn"], entry.access_entry_arn().unwrap());
    assert_eq!(tag_map(entry.tags()), expected_tags(&[], address));
    let associated = || async {
        let out = h.eks.list_associated_access_policies().cluster_name(CLUSTER).principal_arn(&sso_role).send().await;
        let mut found: Vec<(String, String)> = out
            .unwrap()
            .associated_access_policies()
            .iter()
            .map(|p| {
                (p.policy_arn().unwrap().to_string(), p.access_scope().unwrap().r#type().unwrap().as_str().to_string())
            })
            .collect();
        found.sort();
        found
    };
    assert_eq!(associated().await, [(policy("AmazonEKSClusterAdminPolicy"), "cluster".to_string())]);

    // The policy set changes in place: one associated, one disassociated.
    let next = admin(vec![policy("AmazonEKSViewPolicy"), policy("AmazonEKSEditPolicy")], json!({"team": "a"}));
    h.update_in_place("aws_eks_access_entry", address, &applied.id, next.clone()).await;
    assert_eq!(
        associated().await,
        [
            (policy("AmazonEKSEditPolicy"), "cluster".to_string()),
            (policy("AmazonEKSViewPolicy"), "cluster".to_string())
        ]
    );
    let entry = h.eks.describe_access_entry().cluster_name(CLUSTER).principal_arn(&sso_role).send().await.unwrap();
    assert_eq!(tag_map(entry.access_entry.unwrap().tags()), expected_tags(&[("team", "a")], address));

    // Karpenter's nodes: an EC2_LINUX entry, which takes no access policies.
    let node_role = h.role("demo-karpenter-node", "ec2.amazonaws.com").await;
    let node = json!({
        "cluster_name": CLUSTER, "principal_arn": node_role, "type": "EC2_LINUX", "policy_arns": [],
        "namespace_policies": {}, "username": null, "kubernetes_groups": [], "tags": {},
    });
    let node_entry = h.create("aws_eks_access_entry", "eks_access_entry.karpenter_node", node).await;
    let entry = h.eks.describe_access_entry().cluster_name(CLUSTER).principal_arn(&node_role).send().await.unwrap();
    assert_eq!(entry.access_entry.unwrap().r#type(), Some("EC2_LINUX"));

    assert_eq!(h.find("aws_eks_access_entry", address, &next).await, Some(applied.id.clone()));
    h.delete("aws_eks_access_entry", &applied.id).await;
    h.delete("aws_eks_access_entry", &node_entry.id).await;
    let left = h.eks.list_access_entries().cluster_name(CLUSTER).send().await.unwrap();
    assert!(left.access_entries().is_empty(), "access entries are gone: {:?}", left.access_entries());
    assert_eq!(h.find("aws_eks_access_entry", address, &next).await, None);
}

#[tokio::test]
async fn pod_identity_association_lifecycle() {
    let h = Harness::start().await;
    let pre = h.prerequisites().await;
    h.cluster(&pre).await;
    let role = h.role("demo-karpenter", "pods.eks.amazonaws.com").await;
    let other_role = h.role("demo-karpenter-2", "pods.eks.amazonaws.com").await;
    let attrs = |role: &str, tags: Value| json!({"cluster_name": CLUSTER, "namespace": "kube-system", "service_account": "karpenter", "role_arn": role, "tags": tags});
    let address = "eks_pod_identity_association.karpenter";
    let applied = h.create("aws_eks_pod_identity_association", address, attrs(&role, json!({"team": "a"}))).await;
    let association_id = applied.outputs["association_id"].as_str().unwrap().to_string();
    assert_eq!(applied.id, format!("demo:{association_id}"));

    let describe = || async {
        let d = h.eks.describe_pod_identity_association().cluster_name(CLUSTER).association_id(&association_id);
        d.send().await.unwrap().association.unwrap()
    };
    let a = describe().await;
    assert_eq!(
        (a.namespace(), a.service_account(), a.role_arn()),
        (Some("kube-system"), Some("karpenter"), Some(role.as_str()))
    );
    assert_eq!(applied.outputs["arn"], a.association_arn().unwrap());
    assert_eq!(tag_map(a.tags()), expected_tags(&[("team", "a")], address));

    // The role changes in place; the association keeps its ID.
    h.update_in_place("aws_eks_pod_identity_association", address, &applied.id, attrs(&other_role, json!({}))).await;
    let a = describe().await;
    assert_eq!(a.role_arn(), Some(other_role.as_str()));
    assert_eq!(tag_map(a.tags()), expected_tags(&[], address));

    assert_eq!(
        h.find("aws_eks_pod_identity_association", address, &attrs(&other_role, json!({}))).await,
        Some(applied.id.clone())
    );
    let mut other_account = attrs(&other_role, json!({}));
    other_account["service_account"] = json!("other");
    assert_eq!(h.find("aws_eks_pod_identity_association", address, &other_account).await, None);

    h.delete("aws_eks_pod_identity_association", &applied.id).await;
    let left = h.eks.list_pod_identity_associations().cluster_name(CLUSTER).send().await.unwrap();
    assert!(left.associations().is_empty(), "association is gone: {:?}", left.associations());
    assert_eq!(h.find("aws_eks_pod_identity_association", address, &attrs(&other_role, json!({}))).await, None);
}

#[tokio::test]
async fn reading_unknown_ids_says_gone_and_deleting_them_succeeds() {
    let h = Harness::start().await;
    let pre = h.prerequisites().await;
    h.cluster(&pre).await;
    let unknown = [
        ("aws_eks_cluster", "nope"),
        ("aws_eks_node_group", "nope:controller"),
        ("aws_eks_node_group", "demo:nope"),
        ("aws_eks_addon", "nope:coredns"),
        ("aws_eks_addon", "demo:coredns"),
        ("aws_eks_access_entry", "demo:arn:aws:iam::123456789012:role/nope"),
        ("aws_eks_pod_identity_association", "demo:a-0123456789abcdefg"),
        ("aws_eks_pod_identity_association", "nope:a-0123456789abcdefg"),
    ];
    for (kind, id) in unknown {
        let p = h.provider(kind);
        assert_eq!(p.read(&h.cx, id, &Attrs::new()).await.unwrap_or_else(|e| panic!("read {kind} {id}: {e}")), None);
        p.delete(&h.cx, id, &Attrs::new()).await.unwrap_or_else(|e| panic!("delete {kind} {id}: {e}"));
    }
}
