//! What runs in the cluster: Karpenter's CRDs, the controller, and the blueprint's EC2NodeClasses and NodePools.
//! The node classes and pools carry the manifests kbp applies, so the plan diffs them like any attribute.

use serde_json::{json, Map, Value};

use super::eks::{addon_address, CONTROLLER_LABEL, CONTROLLER_TAINT_EFFECT};
use super::karpenter_iam::queue_address;
use super::{kinds, Builder};
use crate::blueprint::crd_fields;
use crate::blueprint::{Identity, NodeClass, NodePool, Taint};
use crate::graph::kinds::in_cluster::ClusterAccess;
use crate::graph::kinds::karpenter_controller::Controller;
use crate::graph::kinds::karpenter_crds::Crds;
use crate::graph::value::reference;
use crate::graph::{Address, Resource};

pub(super) fn compile(b: &mut Builder) {
    let bp = b.bp;
    let cluster = b.cluster();
    // Every in-cluster object is reached through the cluster's endpoint and CA; a new cluster means new objects.
    let access = ClusterAccess {
        name: reference(&cluster, "name"),
        endpoint: reference(&cluster, "endpoint"),
        certificate_authority_data: reference(&cluster, "certificate_authority_data"),
    };
    let crds = b.add(
        Resource::new(
            Address::new("karpenter_crds", "main"),
            kinds::KARPENTER_CRDS,
            kinds::attrs(&Crds {
                version: bp.karpenter.version.clone(),
                chart: bp.karpenter.chart.clone(),
                crds_dir: bp.karpenter.crds_dir.clone(),
                cluster: access.clone(),
            }),
        )
        .after(&Address::new("eks_access_entry", "admin")),
    );

    let values = controller_values(b);
    // The settings a refresh reads back from the Deployment, taken from the values the chart is rendered with,
    // so a hand edit in the cluster shows as drift and a value the user sets does not.
    let setting = |pointer: &str| values.pointer(pointer).cloned().unwrap_or(Value::Null);
    let optional = |pointer: &str| Some(setting(pointer)).filter(|v| !v.is_null());
    let mut controller = Resource::new(
        Address::new("karpenter_controller", "main"),
        kinds::KARPENTER_CONTROLLER,
        kinds::attrs(&Controller {
            version: bp.karpenter.version.clone(),
            chart: bp.karpenter.chart.clone(),
            namespace: bp.karpenter.namespace.clone(),
            kube_version: bp.cluster.version.clone(),
            api_versions: bp.karpenter.api_versions.clone(),
            rollout_timeout: bp.karpenter.rollout_timeout.clone(),
            replicas: setting("/replicas"),
            image: setting("/controller/image/repository"),
            log_level: setting("/logLevel"),
            cpu: setting("/controller/resources/limits/cpu"),
            memory: setting("/controller/resources/limits/memory"),
            cluster_name: setting("/settings/clusterName"),
            cluster_endpoint: setting("/settings/clusterEndpoint"),
            interruption_queue: optional("/settings/interruptionQueue"),
            service_account_role_arn: optional("/serviceAccount/annotations/eks.amazonaws.com~1role-arn"),
            values,
            // What a refresh reads from the Deployment's status: anything but "available" is a change to make.
            health: crate::kubernetes::manifests::AVAILABLE.to_string(),
            cluster: access.clone(),
        }),
    )
    .after(&crds)
    .after(&Address::new("eks_node_group", "controller"));
    if bp.karpenter.identity == Identity::PodIdentity {
        controller = controller.after(&Address::new("eks_pod_identity_association", "karpenter"));
    }
    if bp.addons.contains_key("coredns") {
        controller = controller.after(&addon_address("coredns"));
    }
    let controller = b.add(controller);

    // Node classes after the controller: on destroy they go before it, since the controller removes their
    // finalizer once no node uses them. And after the private subnets carry the discovery tag Karpenter finds
    // them by (on destroy, the tags stay until no node class selects them).
    for (name, class) in &bp.node_classes {
        let mut r = Resource::new(
            Address::keyed("ec2_node_class", "main", name),
            kinds::EC2_NODE_CLASS,
            kinds::attrs(&kinds::ec2_node_class::NodeClass {
                manifest: node_class_manifest(b, name, class),
                // What a refresh reads from the object's Ready condition: anything but "ready" is a change.
                health: crate::kubernetes::manifests::READY.to_string(),
                cluster: access.clone(),
            }),
        )
        .after(&controller)
        .after(&Address::new("eks_access_entry", "karpenter_node"));
        for tagging in b.subnet_discovery() {
            r = r.after(&tagging);
        }
        b.add(r);
    }
    for (name, pool) in &bp.node_pools {
        b.add(
            Resource::new(
                Address::keyed("node_pool", "main", name),
                kinds::NODE_POOL,
                kinds::attrs(&kinds::node_pool::NodePool {
                    manifest: node_pool_manifest(name, pool),
                    health: crate::kubernetes::manifests::READY.to_string(),
                    cluster: access.clone(),
                }),
            )
            .after(&Address::keyed("ec2_node_class", "main", &pool.node_class))
            .after(&controller),
        );
    }
}

/// The chart's values: what kbp sets for this stack, then the user's values files and inline values over them
/// (maps merge, everything else replaces, as Helm layers `-f` files).
fn controller_values(b: &Builder) -> Value {
    let k = &b.bp.karpenter;
    let mut settings = json!({
        "clusterName": reference(&b.cluster(), "name"),
        "clusterEndpoint": reference(&b.cluster(), "endpoint"),
    });
    if k.interruption_queue {
        settings["interruptionQueue"] = reference(&queue_address(), "name");
    }
    // The controller runs only on the controller node group: its label selects it, its taint is tolerated (with
    // the chart's own CriticalAddonsOnly toleration kept).
    let mut values = json!({
        "settings": settings,
        "replicas": k.replicas,
        "logLevel": k.log_level,
        "controller": {
            "image": { "repository": k.image },
            "resources": {
                "requests": { "cpu": k.cpu, "memory": k.memory },
                "limits": { "cpu": k.cpu, "memory": k.memory },
            },
        },
        "nodeSelector": { CONTROLLER_LABEL.0: CONTROLLER_LABEL.1 },
        "tolerations": [
            { "key": "CriticalAddonsOnly", "operator": "Exists" },
            { "key": CONTROLLER_LABEL.0, "operator": "Equal", "value": CONTROLLER_LABEL.1, "effect": CONTROLLER_TAINT_EFFECT },
        ],
    });
    if k.identity == Identity::Irsa {
        values["serviceAccount"] = json!({
            "annotations": {
                "eks.amazonaws.com/role-arn": reference(&super::iam::role_address("karpenter_controller"), "arn"),
            },
        });
    }
    crate::helm::values::merge(&mut values, k.user_values.clone());
    values
}

fn node_class_manifest(b: &Builder, name: &str, c: &NodeClass) -> Value {
    let discovery = json!([{ "tags": { "karpenter.sh/discovery": b.cluster_name() } }]);
    // Karpenter's nodes join the EKS cluster security group too: the controller node group's nodes (and
    // CoreDNS on them) are only in that group, which admits only its own members.
    // And the blueprint's own security groups, by ID.
    let mut security_groups = vec![
        json!({ "tags": { "karpenter.sh/discovery": b.cluster_name() } }),
        json!({ "id": reference(&b.cluster(), "cluster_security_group_id") }),
    ];
    security_groups.extend(b.bp.vpc.security_group_ids().iter().map(|id| json!({ "id": id })));
    let v = &c.root_volume;
    let mut ebs = json!({
        "volumeSize": v.size,
        "volumeType": v.volume_type,
        "encrypted": v.encrypted,
        "deleteOnTermination": true,
    });
    if let Some(iops) = v.iops {
        ebs["iops"] = json!(iops);
    }
    if let Some(t) = v.throughput {
        ebs["throughput"] = json!(t);
    }
    let mut tags = b.bp.cluster.tags.clone();
    tags.extend(c.tags.clone());
    let mut manifest = json!({
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": { "name": name },
        "spec": {
            "amiSelectorTerms": [{ "alias": c.ami_alias }],
            "role": b.bp.karpenter.node_role_name,
            "subnetSelectorTerms": discovery,
            "securityGroupSelectorTerms": security_groups,
            // IMDSv2 only, and a hop limit of 1 so pods cannot reach the node's credentials.
            "metadataOptions": {
                "httpEndpoint": "enabled",
                "httpProtocolIPv6": "disabled",
                "httpPutResponseHopLimit": 1,
                "httpTokens": "required",
            },
            "blockDeviceMappings": block_devices(c, ebs),
            "tags": tags,
        },
    });
    // The blueprint's own spec fields replace or refine kbp's; an instance profile stands for the node role.
    if let Some(spec) = manifest["spec"].as_object_mut() {
        crd_fields::merge(spec, c.spec.clone().into_iter().collect());
        if c.spec.contains_key("instanceProfile") && !c.spec.contains_key("role") {
            spec.remove("role");
        }
    }
    manifest
}

/// Bottlerocket's OS volume, as Karpenter's own Bottlerocket default declares it.
const BOTTLEROCKET_OS_DEVICE: &str = "/dev/xvda";
const BOTTLEROCKET_OS_SIZE: &str = "4Gi";

/// The configured volume, and for Bottlerocket its OS volume too. Bottlerocket boots from `/dev/xvda` and keeps
/// kubelet and container data on `/dev/xvdb`; once a node class declares any mapping, Karpenter leaves the
/// undeclared volume to the AMI's own mapping, which is not encrypted unless the account encrypts EBS by default.
fn block_devices(c: &NodeClass, ebs: Value) -> Value {
    let bottlerocket = c.family() == "bottlerocket";
    let mut devices = Vec::new();
    if bottlerocket && c.root_volume.device_name != BOTTLEROCKET_OS_DEVICE {
        devices.push(json!({
            "deviceName": BOTTLEROCKET_OS_DEVICE,
            "ebs": {
                "volumeSize": BOTTLEROCKET_OS_SIZE,
                "volumeType": "gp3",
                "encrypted": true,
                "deleteOnTermination": true,
            },
        }));
    }
    devices.push(json!({ "deviceName": c.root_volume.device_name, "ebs": ebs }));
    Value::Array(devices)
}

fn node_pool_manifest(name: &str, p: &NodePool) -> Value {
    let requirements: Vec<Value> = p
        .requirements
        .iter()
        .map(|r| {
            let mut o = json!({ "key": r.key, "operator": r.operator });
            if !r.values.is_empty() || matches!(r.operator.as_str(), "In" | "NotIn") {
                o["values"] = json!(r.values);
            }
            if let Some(m) = r.min_values {
                o["minValues"] = json!(m);
            }
            o
        })
        .collect();
    let mut template_spec = json!({
        "nodeClassRef": { "group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": p.node_class },
        "requirements": requirements,
        "expireAfter": p.expire_after,
    });
    if !p.taints.is_empty() {
        template_spec["taints"] = taints(&p.taints);
    }
    if !p.startup_taints.is_empty() {
        template_spec["startupTaints"] = taints(&p.startup_taints);
    }
    if let Some(t) = &p.termination_grace_period {
        template_spec["terminationGracePeriod"] = json!(t);
    }
    let mut template = Map::new();
    if !p.labels.is_empty() {
        template.insert("metadata".to_string(), json!({ "labels": p.labels }));
    }
    template.insert("spec".to_string(), template_spec);
    let budgets: Vec<Value> = p
        .disruption
        .budgets
        .iter()
        .map(|bu| {
            let mut o = json!({ "nodes": bu.nodes });
            if let Some(s) = &bu.schedule {
                o["schedule"] = json!(s);
            }
            if let Some(d) = &bu.duration {
                o["duration"] = json!(d);
            }
            if !bu.reasons.is_empty() {
                o["reasons"] = json!(bu.reasons);
            }
            o
        })
        .collect();
    let mut spec = json!({
        "template": template,
        "disruption": {
            "consolidationPolicy": p.disruption.consolidation_policy,
            "consolidateAfter": p.disruption.consolidate_after,
            "budgets": budgets,
        },
    });
    if !p.limits.is_empty() {
        spec["limits"] = json!(p.limits);
    }
    if let Some(w) = p.weight {
        spec["weight"] = json!(w);
    }
    if let Some(spec) = spec.as_object_mut() {
        crd_fields::merge(spec, p.spec.clone().into_iter().collect());
    }
    json!({
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": { "name": name },
        "spec": spec,
    })
}

fn taints(ts: &[Taint]) -> Value {
    Value::Array(
        ts.iter()
            .map(|t| {
                let mut o = json!({ "key": t.key });
                if !t.effect.is_empty() {
                    o["effect"] = json!(t.effect);
                }
                if let Some(v) = &t.value {
                    o["value"] = json!(v);
                }
                o
            })
            .collect(),
    )
}
