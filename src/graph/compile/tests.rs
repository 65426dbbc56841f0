use std::collections::BTreeMap;

use super::*;
use crate::blueprint::*;

pub(crate) fn sample() -> Blueprint {
    let net = |s: &str| s.parse().unwrap();
    Blueprint {
        cluster: Cluster {
            name: "demo".into(),
            region: "us-west-2".into(),
            version: "1.33".into(),
            endpoint_public_access: true,
            endpoint_private_access: true,
            public_access_cidrs: vec!["0.0.0.0/0".into()],
            log_types: vec!["api".into(), "audit".into(), "authenticator".into()],
            secrets_encryption: true,
            ttl: None,
            tags: BTreeMap::from([("team".into(), "platform".into())]),
            access_entries: Vec::new(),
        },
        vpc: Vpc {
            network: Network::Managed(ManagedNetwork {
                cidr: net("10.0.0.0/16"),
                azs: vec!["us-west-2a".into(), "us-west-2b".into(), "us-west-2c".into()],
                private_subnets: vec![net("10.0.0.0/20"), net("10.0.16.0/20"), net("10.0.32.0/20")],
                public_subnets: vec![net("10.0.48.0/24"), net("10.0.49.0/24"), net("10.0.50.0/24")],
                nat_gateway: NatGatewayMode::Single,
                enable_dns_hostnames: true,
                tags: BTreeMap::new(),
            }),
            private_subnet_tags: BTreeMap::new(),
            public_subnet_tags: BTreeMap::new(),
        },
        node_group: NodeGroup {
            name: "karpenter".into(),
            ami_type: "BOTTLEROCKET_x86_64".into(),
            instance_types: vec!["m5.large".into()],
            capacity_type: "ON_DEMAND".into(),
            min_size: 2,
            max_size: 3,
            desired_size: 2,
            disk_size: 20,
            labels: BTreeMap::new(),
            taints: vec![],
            version: None,
            release_version: None,
            update_config: Default::default(),
        },
        addons: ["vpc-cni", "kube-proxy", "coredns", "eks-pod-identity-agent"]
            .iter()
            .map(|a| (a.to_string(), Addon { version: None, configuration_values: None }))
            .collect(),
        karpenter: Karpenter {
            version: "1.14.1".into(),
            namespace: "karpenter".into(),
            identity: Identity::PodIdentity,
            interruption_queue: true,
            spot: true,
            replicas: 2,
            node_role_name: "KarpenterNodeRole-demo".into(),
            controller_role_name: "KarpenterController-demo".into(),
            chart: "oci://public.ecr.aws/karpenter/karpenter".into(),
            values_files: Vec::new(),
            values: None,
            api_versions: Vec::new(),
            user_values: serde_json::json!({}),
            crds_dir: None,
            image: "public.ecr.aws/karpenter/controller".into(),
            log_level: "info".into(),
            cpu: "1".into(),
            memory: "1Gi".into(),
            rollout_timeout: "10m".into(),
        },
        node_classes: BTreeMap::from([(
            "default".into(),
            NodeClass {
                ami_alias: "bottlerocket@latest".into(),
                root_volume: RootVolume {
                    device_name: "/dev/xvdb".into(),
                    size: "20Gi".into(),
                    volume_type: "gp3".into(),
                    encrypted: true,
                    iops: None,
                    throughput: None,
                },
                tags: BTreeMap::new(),
                spec: BTreeMap::new(),
            },
        )]),
        node_pools: BTreeMap::from([(
            "default".into(),
            NodePool {
                node_class: "default".into(),
                weight: None,
                requirements: vec![Requirement {
                    key: "karpenter.k8s.aws/instance-generation".into(),
                    operator: "Gt".into(),
                    values: vec!["2".into()],
                    min_values: None,
                }],
                limits: BTreeMap::from([("cpu".into(), "1000".into())]),
                labels: BTreeMap::new(),
                taints: vec![],
                startup_taints: vec![],
                expire_after: "720h".into(),
                termination_grace_period: None,
                disruption: Disruption {
                    consolidation_policy: "WhenEmpty".into(),
                    consolidate_after: "30s".into(),
                    budgets: vec![Budget { nodes: "10%".into(), schedule: None, duration: None, reasons: vec![] }],
                },
                spec: BTreeMap::new(),
            },
        )]),
        state: StateSettings {
            backend: "local".into(),
            path: None,
            bucket: None,
            key: None,
            region: None,
            kms_key_id: None,
            profile: None,
            role_arn: None,
        },
        import: Vec::new(),
        moved: Vec::new(),
    }
}

/// The VPC kbp creates in `bp`, to edit (every sample's VPC is one).
pub(crate) fn managed(bp: &mut Blueprint) -> &mut ManagedNetwork {
    match &mut bp.vpc.network {
        Network::Managed(v) => v,
        Network::Existing(v) => panic!("the sample names existing VPC {}", v.id),
    }
}

fn count(g: &ResourceGraph, kind: &str) -> usize {
    g.resources().filter(|r| r.kind == kind).count()
}

fn addr(s: &str) -> Address {
    s.parse().unwrap()
}

#[test]
fn compiles_the_whole_stack() {
    let g = compile(&sample()).unwrap();
    assert_eq!(count(&g, kinds::SUBNET), 6);
    assert_eq!(count(&g, kinds::NAT_GATEWAY), 1);
    assert_eq!(count(&g, kinds::EIP), 1);
    assert_eq!(count(&g, kinds::ROUTE), 4);
    assert_eq!(count(&g, kinds::ROUTE_TABLE_ASSOCIATION), 6);
    assert_eq!(count(&g, kinds::EVENT_RULE), 5);
    assert_eq!(count(&g, kinds::EKS_ADDON), 4);
    assert_eq!(count(&g, kinds::IAM_POLICY), 6);
    assert_eq!(count(&g, kinds::EKS_POD_IDENTITY_ASSOCIATION), 1);
    assert_eq!(count(&g, kinds::IAM_OIDC_PROVIDER), 0);
    assert_eq!(count(&g, kinds::NODE_POOL), 1);
    assert!(g.get(&addr("iam_service_linked_role.spot")).is_some());
}

#[test]
fn single_nat_routes_every_az_through_the_first() {
    let g = compile(&sample()).unwrap();
    let r = g.get(&addr("route.private_nat[\"us-west-2c\"]")).unwrap();
    let deps = r.dependencies();
    assert!(deps.contains(&addr("nat_gateway.main[\"us-west-2a\"]")));
}

#[test]
fn nat_modes_change_only_nat_resources_and_routes() {
    let mut bp = sample();
    let single = compile(&bp).unwrap();
    managed(&mut bp).nat_gateway = NatGatewayMode::PerAz;
    let per_az = compile(&bp).unwrap();
    assert_eq!(count(&per_az, kinds::NAT_GATEWAY), 3);
    let changed: Vec<String> =
        per_az.resources().filter(|r| single.get(&r.address) != Some(r)).map(|r| r.address.to_string()).collect();
    for a in &changed {
        assert!(a.starts_with("nat_gateway.") || a.starts_with("eip.") || a.starts_with("route.private_nat"), "{a}");
    }
    managed(&mut bp).nat_gateway = NatGatewayMode::None;
    let none = compile(&bp).unwrap();
    assert_eq!(count(&none, kinds::NAT_GATEWAY), 0);
    assert_eq!(count(&none, kinds::ROUTE), 1);
}

#[test]
fn private_subnets_carry_the_discovery_tag() {
    let g = compile(&sample()).unwrap();
    let s = g.get(&addr("subnet.private[\"us-west-2b\"]")).unwrap();
    assert_eq!(s.attrs["tags"]["karpenter.sh/discovery"], "demo");
    assert_eq!(s.attrs["tags"]["team"], "platform");
    assert_eq!(s.attrs["cidr_block"], "10.0.16.0/20");
    let p = g.get(&addr("subnet.public[\"us-west-2b\"]")).unwrap();
    assert!(p.attrs["tags"].get("karpenter.sh/discovery").is_none());
    assert_eq!(p.attrs["tags"]["kubernetes.io/role/elb"], "1");
}

#[test]
fn irsa_trusts_the_cluster_oidc_provider() {
    let mut bp = sample();
    bp.karpenter.identity = Identity::Irsa;
    let g = compile(&bp).unwrap();
    assert_eq!(count(&g, kinds::EKS_POD_IDENTITY_ASSOCIATION), 0);
    let role = g.get(&addr("iam_role.karpenter_controller")).unwrap();
    assert!(role.dependencies().contains(&addr("iam_openid_connect_provider.cluster")));
}

#[test]
fn controller_policies_resolve_to_scoped_documents() {
    let g = compile(&sample()).unwrap();
    let p = g.get(&addr("iam_policy.karpenter_controller[\"eks-integration\"]")).unwrap();
    let (doc, missing) = crate::graph::value::resolve(&p.attrs["policy"], &|_, o| match o {
        "partition" => Some(json!("aws")),
        "account_id" => Some(json!("123456789012")),
        _ => None,
    });
    assert!(missing.is_empty());
    assert_eq!(doc["Statement"][0]["Resource"], "arn:aws:eks:us-west-2:123456789012:cluster/demo");
}

#[test]
fn coredns_tolerates_the_controller_taint() {
    let g = compile(&sample()).unwrap();
    let c = g.get(&addr("eks_addon.main[\"coredns\"]")).unwrap();
    assert_eq!(c.attrs["configuration_values"]["tolerations"][0]["key"], "karpenter.sh/controller");
    let ng = g.get(&addr("eks_node_group.controller")).unwrap();
    assert_eq!(ng.attrs["labels"]["karpenter.sh/controller"], "true");
    assert_eq!(ng.attrs["taints"][0]["effect"], "NoSchedule");
}

#[test]
fn creation_order_puts_dependencies_first() {
    let g = compile(&sample()).unwrap();
    let order: Vec<String> = g.in_order().iter().map(|r| r.address.to_string()).collect();
    let pos = |a: &str| order.iter().position(|x| x == a).unwrap();
    assert!(pos("vpc.main") < pos("subnet.private[\"us-west-2a\"]"));
    assert!(pos("eip.nat[\"us-west-2a\"]") < pos("nat_gateway.main[\"us-west-2a\"]"));
    assert!(pos("eks_cluster.main") < pos("eks_node_group.controller"));
    assert!(pos("eks_node_group.controller") < pos("eks_addon.main[\"coredns\"]"));
    assert!(pos("karpenter_controller.main") < pos("node_pool.main[\"default\"]"));
}

#[test]
fn compiling_is_deterministic() {
    let a = compile(&sample()).unwrap();
    let b = compile(&sample()).unwrap();
    assert_eq!(crate::graph::to_json(&a), crate::graph::to_json(&b));
}

#[test]
fn karpenter_nodes_join_the_cluster_security_group() {
    let g = compile(&sample()).unwrap();
    let class = g.get(&addr("ec2_node_class.main[\"default\"]")).unwrap();
    let terms = &class.attrs["manifest"]["spec"]["securityGroupSelectorTerms"];
    assert_eq!(terms[0]["tags"]["karpenter.sh/discovery"], "demo");
    assert!(class.dependencies().contains(&addr("eks_cluster.main")), "{terms}");
}

#[test]
fn windows_node_classes_join_with_an_ec2_windows_access_entry() {
    let entry_type = |bp: &Blueprint| {
        compile(bp).unwrap().get(&addr("eks_access_entry.karpenter_node")).unwrap().attrs["type"].clone()
    };
    let mut bp = sample();
    assert_eq!(entry_type(&bp), "EC2_LINUX");
    for family in ["windows2019", "windows2022", "windows2025"] {
        bp.node_classes.get_mut("default").unwrap().ami_alias = format!("{family}@latest");
        assert_eq!(entry_type(&bp), "EC2_WINDOWS", "{family}");
    }
}

/// `v` with the caller identity's outputs filled in, and every other reference left as the plan shows it.
fn with_caller(v: &Value) -> Value {
    crate::graph::value::resolve(v, &|a, o| match (a.to_string().as_str(), o) {
        ("caller_identity.current", "partition") => Some(json!("aws")),
        ("caller_identity.current", "account_id") => Some(json!("123456789012")),
        ("caller_identity.current", "url_suffix") => Some(json!("amazonaws.com")),
        _ => None,
    })
    .0
}

#[test]
fn node_roles_trust_ec2_by_the_partitions_url_suffix() {
    let g = compile(&sample()).unwrap();
    for role in ["iam_role.karpenter_node", "iam_role.node_group"] {
        let trust = &g.get(&addr(role)).unwrap().attrs["assume_role_policy"];
        let principal = |suffix: &str| {
            let caller = addr("caller_identity.current");
            let resolved =
                crate::graph::value::resolve(trust, &|a, o| (*a == caller && o == "url_suffix").then(|| json!(suffix)));
            resolved.0["Statement"][0]["Principal"].clone()
        };
        assert_eq!(principal("amazonaws.com"), json!({"Service": "ec2.amazonaws.com"}), "{role}");
        assert_eq!(principal("amazonaws.com.cn"), json!({"Service": "ec2.amazonaws.com.cn"}), "{role}");
    }
}

#[test]
fn pod_identity_trust_is_scoped_to_this_account_and_cluster() {
    let g = compile(&sample()).unwrap();
    let role = g.get(&addr("iam_role.karpenter_controller")).unwrap();
    let trust = with_caller(&role.attrs["assume_role_policy"]);
    let statement = &trust["Statement"][0];
    assert_eq!(statement["Principal"], json!({"Service": "pods.eks.amazonaws.com"}));
    assert_eq!(statement["Action"], json!(["sts:AssumeRole", "sts:TagSession"]));
    assert_eq!(
        statement["Condition"],
        json!({
            "StringEquals": {"aws:SourceAccount": "123456789012"},
            "ArnLike": {"aws:SourceArn": "arn:aws:eks:us-west-2:123456789012:podidentityassociation/demo/*"},
        })
    );
    // The account comes from the caller identity, not from the cluster: the role is made while the cluster is.
    assert_eq!(
        role.attrs["assume_role_policy"]["Statement"][0]["Condition"]["StringEquals"]["aws:SourceAccount"],
        crate::graph::value::reference(&addr("caller_identity.current"), "account_id")
    );
    assert!(role.dependencies().contains(&addr("caller_identity.current")));
    assert!(!role.dependencies().contains(&addr("eks_cluster.main")));
}

#[test]
fn irsa_trust_keeps_its_oidc_conditions_only() {
    let mut bp = sample();
    bp.karpenter.identity = Identity::Irsa;
    let g = compile(&bp).unwrap();
    let role = g.get(&addr("iam_role.karpenter_controller")).unwrap();
    let statement = &role.attrs["assume_role_policy"]["Statement"][0];
    assert_eq!(statement["Action"], "sts:AssumeRoleWithWebIdentity");
    let conditions: Vec<&String> = statement["Condition"].as_object().unwrap().keys().collect();
    assert_eq!(conditions, ["StringEquals"]);
}

#[test]
fn only_this_stacks_rules_may_send_to_the_interruption_queue() {
    let g = compile(&sample()).unwrap();
    let p = g.get(&addr("sqs_queue_policy.interruption")).unwrap();
    let statements = p.attrs["policy"]["Statement"].as_array().unwrap();
    assert_eq!(statements.len(), 2);
    let allow = &statements[0];
    assert_eq!(allow["Principal"], json!({"Service": "events.amazonaws.com"}));
    assert_eq!(allow["Action"], "sqs:SendMessage");
    let rules: Vec<Value> =
        ["health", "spot_interruption", "rebalance", "instance_state_change", "capacity_reservation_interruption"]
            .iter()
            .map(|r| crate::graph::value::reference(&Address::new("event_rule", r), "arn"))
            .collect();
    assert_eq!(allow["Condition"], json!({"ArnEquals": {"aws:SourceArn": rules}}));
    for r in g.resources().filter(|r| r.kind == kinds::EVENT_RULE) {
        assert!(p.dependencies().contains(&r.address), "the policy waits for {}", r.address);
    }
    let deny = &statements[1];
    assert_eq!((deny["Sid"].as_str(), deny["Effect"].as_str()), (Some("DenyHTTP"), Some("Deny")));
    assert_eq!(deny["Condition"], json!({"Bool": {"aws:SecureTransport": false}}));
    assert!(!p.attrs["policy"].to_string().contains("sqs.amazonaws.com"));
}

fn block_devices(bp: &Blueprint) -> Value {
    let g = compile(bp).unwrap();
    g.get(&addr("ec2_node_class.main[\"default\"]")).unwrap().attrs["manifest"]["spec"]["blockDeviceMappings"].clone()
}

#[test]
fn bottlerocket_declares_both_volumes_encrypted() {
    let ebs =
        |size: &str| json!({"volumeSize": size, "volumeType": "gp3", "encrypted": true, "deleteOnTermination": true});
    assert_eq!(
        block_devices(&sample()),
        json!([
            {"deviceName": "/dev/xvda", "ebs": ebs("4Gi")},
            {"deviceName": "/dev/xvdb", "ebs": ebs("20Gi")},
        ])
    );
    // A blueprint that configures the OS volume itself gets just that one.
    let mut bp = sample();
    bp.node_classes.get_mut("default").unwrap().root_volume.device_name = "/dev/xvda".into();
    assert_eq!(block_devices(&bp), json!([{"deviceName": "/dev/xvda", "ebs": ebs("20Gi")}]));
}

#[test]
fn other_ami_families_keep_one_root_volume() {
    let mut bp = sample();
    let class = bp.node_classes.get_mut("default").unwrap();
    class.ami_alias = "al2023@latest".into();
    class.root_volume.device_name = "/dev/xvda".into();
    let devices = block_devices(&bp);
    assert_eq!(devices.as_array().unwrap().len(), 1, "{devices}");
    assert_eq!(devices[0]["deviceName"], "/dev/xvda");
    assert_eq!(devices[0]["ebs"]["volumeSize"], "20Gi");
}

const PRIVATE: [&str; 2] = ["subnet-0a1b2c3d4e5f60001", "subnet-0a1b2c3d4e5f60002"];
const PUBLIC: &str = "subnet-0a1b2c3d4e5f60003";

/// The sample stack in an existing VPC.
fn existing_network() -> Blueprint {
    let mut bp = sample();
    bp.vpc.network = Network::Existing(ExistingNetwork {
        id: "vpc-0a1b2c3d4e5f60000".into(),
        private_subnet_ids: PRIVATE.map(String::from).to_vec(),
        public_subnet_ids: vec![PUBLIC.into()],
        security_group_ids: vec!["sg-0a1b2c3d4e5f60009".into()],
    });
    bp.vpc.private_subnet_tags = BTreeMap::from([("tier".into(), "private".into())]);
    bp
}

fn subnet_refs(kind: &str, ids: &[&str]) -> Value {
    json!(ids
        .iter()
        .map(|id| crate::graph::value::reference(&Address::keyed(kind, "private", id), "id"))
        .collect::<Vec<_>>())
}

#[test]
fn an_existing_vpc_replaces_the_whole_network() {
    let g = compile(&existing_network()).unwrap();
    for kind in [
        kinds::VPC,
        kinds::SUBNET,
        kinds::INTERNET_GATEWAY,
        kinds::EIP,
        kinds::NAT_GATEWAY,
        kinds::ROUTE_TABLE,
        kinds::ROUTE,
        kinds::ROUTE_TABLE_ASSOCIATION,
    ] {
        assert_eq!(count(&g, kind), 0, "{kind}");
    }
    assert_eq!(count(&g, kinds::EXISTING_VPC), 1);
    assert_eq!(count(&g, kinds::EXISTING_SUBNET), 3);
    assert_eq!(count(&g, kinds::SUBNET_TAGS), 3);
    let vpc = g.get(&addr("existing_vpc.main")).unwrap();
    assert_eq!(vpc.attrs, *json!({ "vpc_id": "vpc-0a1b2c3d4e5f60000" }).as_object().unwrap());
    let subnet = g.get(&Address::keyed("existing_subnet", "public", PUBLIC)).unwrap();
    assert_eq!(subnet.attrs["subnet_id"], PUBLIC);
    assert_eq!(subnet.attrs["vpc_id"], crate::graph::value::reference(&addr("existing_vpc.main"), "id"));
    let sg = g.get(&addr("security_group.node")).unwrap();
    assert_eq!(sg.attrs["vpc_id"], crate::graph::value::reference(&addr("existing_vpc.main"), "id"));
}

#[test]
fn the_cluster_and_node_group_run_in_the_existing_private_subnets() {
    let g = compile(&existing_network()).unwrap();
    let cluster = g.get(&addr("eks_cluster.main")).unwrap();
    assert_eq!(cluster.attrs["subnet_ids"], subnet_refs("existing_subnet", &PRIVATE));
    let groups = &cluster.attrs["security_group_ids"];
    assert_eq!(groups[1], "sg-0a1b2c3d4e5f60009", "{groups}");
    let ng = g.get(&addr("eks_node_group.controller")).unwrap();
    assert_eq!(ng.attrs["subnet_ids"], subnet_refs("existing_subnet", &PRIVATE));
    // No NAT routes to wait for: the existing VPC's routing is its owner's.
    assert!(ng.dependencies().iter().all(|d| !d.to_string().starts_with("route")), "{:?}", ng.depends_on);
    // The same blueprint with a VPC kbp creates keeps its subnets and routes.
    let managed = compile(&sample()).unwrap();
    let ng = managed.get(&addr("eks_node_group.controller")).unwrap();
    assert_eq!(
        ng.attrs["subnet_ids"][0],
        crate::graph::value::reference(&addr("subnet.private[\"us-west-2a\"]"), "id")
    );
    assert!(ng.depends_on.contains(&addr("route.private_nat[\"us-west-2c\"]")));
}

#[test]
fn existing_subnets_get_only_the_tags_kubernetes_needs() {
    let g = compile(&existing_network()).unwrap();
    let private = g.get(&Address::keyed("subnet_tags", "private", PRIVATE[1])).unwrap();
    assert_eq!(
        private.attrs["subnet_id"],
        crate::graph::value::reference(&Address::keyed("existing_subnet", "private", PRIVATE[1]), "id")
    );
    assert_eq!(
        private.attrs["tags"],
        json!({
            "karpenter.sh/discovery": "demo",
            "kubernetes.io/role/internal-elb": "1",
            "kubernetes.io/cluster/demo": "shared",
            "tier": "private",
        })
    );
    let public = g.get(&Address::keyed("subnet_tags", "public", PUBLIC)).unwrap();
    assert_eq!(public.attrs["tags"], json!({ "kubernetes.io/role/elb": "1", "kubernetes.io/cluster/demo": "shared" }));
    // Neither the stack's tags (cluster.tags) nor kbp's own: the subnets are someone else's.
    for r in g.resources().filter(|r| r.kind == kinds::SUBNET_TAGS) {
        let tags = r.attrs["tags"].as_object().unwrap();
        assert!(tags.keys().all(|k| !k.starts_with("kbp:") && k != "team" && k != "Name"), "{}: {tags:?}", r.address);
    }
}

#[test]
fn node_classes_wait_for_the_discovery_tags_and_select_the_extra_security_groups() {
    let g = compile(&existing_network()).unwrap();
    let class = g.get(&addr("ec2_node_class.main[\"default\"]")).unwrap();
    for id in PRIVATE {
        assert!(class.depends_on.contains(&Address::keyed("subnet_tags", "private", id)), "{:?}", class.depends_on);
    }
    let order: Vec<String> = g.in_order().iter().map(|r| r.address.to_string()).collect();
    let pos = |a: &Address| order.iter().position(|x| *x == a.to_string()).unwrap();
    assert!(pos(&Address::keyed("subnet_tags", "private", PRIVATE[0])) < pos(&class.address));
    let terms = &class.attrs["manifest"]["spec"]["securityGroupSelectorTerms"];
    assert_eq!(terms.as_array().unwrap().len(), 3, "{terms}");
    assert_eq!(terms[2], json!({ "id": "sg-0a1b2c3d4e5f60009" }));
    // With a VPC kbp creates, the node class is as it was: two terms, no subnet tags to wait for.
    let managed = compile(&sample()).unwrap();
    let class = managed.get(&addr("ec2_node_class.main[\"default\"]")).unwrap();
    assert_eq!(class.attrs["manifest"]["spec"]["securityGroupSelectorTerms"].as_array().unwrap().len(), 2);
    assert!(class.depends_on.iter().all(|d| !d.to_string().starts_with("subnet")));
}

#[test]
fn names_cut_to_fit_stay_apart_and_stable() {
    let long = "c".repeat(63);
    let a = super::fit_name(&format!("{long}-HealthEvent"), 64);
    let b = super::fit_name(&format!("{long}-Rebalance"), 64);
    assert_eq!(a.len(), 64);
    assert_eq!(b.len(), 64);
    assert_ne!(a, b);
    assert_eq!(a, super::fit_name(&format!("{long}-HealthEvent"), 64));
    assert_eq!(super::fit_name("demo-HealthEvent", 64), "demo-HealthEvent");
}

#[test]
fn a_long_cluster_name_gives_five_distinct_interruption_rules() {
    let mut bp = sample();
    bp.cluster.name = "c".repeat(63);
    let g = super::compile(&bp).unwrap();
    let names: std::collections::BTreeSet<String> = g
        .in_order()
        .iter()
        .filter(|r| r.kind == kinds::EVENT_RULE)
        .map(|r| r.attrs["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names.len(), 5, "{names:?}");
    assert!(names.iter().all(|n| n.len() <= 64), "{names:?}");
}
