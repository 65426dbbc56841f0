//! The core end to end: plan, apply, no-op plan, targeted changes, destroy, on the network and IAM layers of
//! karpenter-mng, against a private emulator. Every assertion about what exists reads the emulator back with
//! the AWS SDK rather than trusting kbp's output.

use crate::support::*;
use aws_sdk_ec2::types::Filter;
use serde_json::Value;

const STACK: &str = "ex-karpenter-mng";

fn plan_json(em: &Emulator, ws: &Workspace, extra: &[&str]) -> Value {
    let mut args = vec!["plan", ws.blueprint_arg(), "--json"];
    args.extend_from_slice(extra);
    let out = kbp_ok(em, &args, ws.path());
    events::plan(&out)
}

/// (address, action) of every change in a JSON plan, sorted.
fn changes(plan: &Value) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["address"].as_str().unwrap().to_string(), c["action"].as_str().unwrap().to_string()))
        .collect();
    v.sort();
    v
}

fn count_prefix(changes: &[(String, String)], prefix: &str) -> usize {
    changes.iter().filter(|(a, _)| a.starts_with(prefix)).count()
}

async fn stack_role_names(em: &Emulator) -> Vec<String> {
    let roles = em.iam().await.list_roles().send().await.unwrap();
    roles.roles().iter().map(|r| r.role_name().to_string()).filter(|n| n.contains(STACK)).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn plan_apply_change_and_destroy_the_network_and_iam_layers() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("karpenter-mng");

    // Empty state: every network and IAM resource is planned for creation.
    let plan = plan_json(&em, &ws, &[]);
    let c = changes(&plan);
    assert!(c.iter().all(|(_, a)| a == "create"), "{c:?}");
    assert_eq!(count_prefix(&c, "vpc.main"), 1);
    assert_eq!(count_prefix(&c, "subnet.private["), 3);
    assert_eq!(count_prefix(&c, "subnet.public["), 3);
    assert_eq!(count_prefix(&c, "internet_gateway.main"), 1);
    assert_eq!(count_prefix(&c, "nat_gateway.main["), 1, "single NAT gateway");
    assert_eq!(count_prefix(&c, "eip.nat["), 1);
    assert_eq!(count_prefix(&c, "route_table."), 4);
    assert_eq!(count_prefix(&c, "route."), 4);
    assert_eq!(count_prefix(&c, "route_table_association."), 6);
    for role in ["cluster", "node_group", "karpenter_node", "karpenter_controller"] {
        assert_eq!(count_prefix(&c, &format!("iam_role.{role}")), 1, "iam_role.{role}");
    }
    assert!(count_prefix(&c, "iam_policy.karpenter_controller[") >= 5);
    assert!(count_prefix(&c, "iam_role_policy_attachment.karpenter_node[") == 4);
    assert_eq!(plan["summary"]["add"].as_u64().unwrap() as usize, c.len());
    assert_eq!(count_prefix(&c, "node_pool.main["), 1, "in-cluster objects are planned like the rest");

    // Apply creates them, tagged.
    let out = kbp_ok(&em, &["apply", ws.blueprint_arg(), "--auto-approve"], ws.path());
    assert!(stdout(&out).contains("Apply complete!"), "{}", describe_output(&out));
    let ec2 = em.ec2().await;
    let vpcs = ec2.describe_vpcs().filters(of_stack(STACK)).send().await.unwrap();
    assert_eq!(vpcs.vpcs().len(), 1);
    let vpc = &vpcs.vpcs()[0];
    assert_eq!(vpc.cidr_block(), Some("10.0.0.0/16"));
    assert!(vpc.tags().iter().any(|t| t.key() == Some("kbp:address") && t.value() == Some("vpc.main")));
    let subnets = ec2.describe_subnets().filters(of_stack(STACK)).send().await.unwrap();
    assert_eq!(subnets.subnets().len(), 6);
    let discovery: Vec<_> = subnets
        .subnets()
        .iter()
        .filter(|s| s.tags().iter().any(|t| t.key() == Some("karpenter.sh/discovery") && t.value() == Some(STACK)))
        .collect();
    assert_eq!(discovery.len(), 3, "private subnets carry the Karpenter discovery tag");
    let nats = ec2.describe_nat_gateways().filter(of_stack(STACK)).send().await.unwrap();
    assert_eq!(nats.nat_gateways().iter().filter(|n| n.state().map(|s| s.as_str()) == Some("available")).count(), 1);
    let igws = ec2.describe_internet_gateways().filters(of_stack(STACK)).send().await.unwrap();
    assert_eq!(igws.internet_gateways()[0].attachments()[0].vpc_id(), vpc.vpc_id());
    let tables = ec2.describe_route_tables().filters(of_stack(STACK)).send().await.unwrap();
    assert_eq!(tables.route_tables().len(), 4);
    let iam = em.iam().await;
    let node_role = iam.list_attached_role_policies().role_name(format!("KarpenterNodeRole-{STACK}")).send().await;
    let attached: Vec<String> = node_role
        .expect("the Karpenter node role exists (named after the cluster in karpenter-mng)")
        .attached_policies()
        .iter()
        .filter_map(|p| p.policy_name().map(str::to_string))
        .collect();
    for p in [
        "AmazonEKSWorkerNodePolicy",
        "AmazonEKS_CNI_Policy",
        "AmazonEC2ContainerRegistryPullOnly",
        "AmazonSSMManagedInstanceCore",
    ] {
        assert!(attached.iter().any(|a| a == p), "{p} attached to the node role: {attached:?}");
    }
    assert!(stack_role_names(&em).await.len() >= 3);

    let list = kbp_ok(&em, &["state", "list"], ws.path());
    assert!(stdout(&list).contains("subnet.private[\"us-west-2a\"]"), "{}", stdout(&list));
    let show = kbp_ok(&em, &["state", "show", "vpc.main", "--json"], ws.path());
    let shown: Value = serde_json::from_slice(&show.stdout).unwrap();
    assert_eq!(shown["id"].as_str(), vpc.vpc_id());

    // A second plan finds nothing to do.
    let again = kbp(&em, &["plan", ws.blueprint_arg(), "--detailed-exitcode"], ws.path());
    assert_exit_code(&again, 0, "plan after apply");
    assert!(stdout(&again).contains("No changes."));

    // One tag on the private subnets: exactly those three are updated in place.
    let tag = ["--set", "vpc.private_subnet_tags.tier=private"];
    let plan = plan_json(&em, &ws, &tag);
    let c = changes(&plan);
    assert_eq!(c.len(), 3, "{c:?}");
    assert!(c.iter().all(|(a, act)| a.starts_with("subnet.private[") && act == "update"), "{c:?}");
    let pending = kbp(&em, &["plan", ws.blueprint_arg(), "--detailed-exitcode", tag[0], tag[1]], ws.path());
    assert_exit_code(&pending, 2, "plan with a change");
    kbp_ok(&em, &["apply", ws.blueprint_arg(), "--auto-approve", tag[0], tag[1]], ws.path());
    let tagged = ec2
        .describe_subnets()
        .filters(of_stack(STACK))
        .filters(Filter::builder().name("tag:tier").values("private").build())
        .send()
        .await
        .unwrap();
    assert_eq!(tagged.subnets().len(), 3);

    // NAT mode single → per-az: two more EIPs and NAT gateways, and two routes re-pointed; nothing else.
    let per_az = ["--set", "vpc.nat_gateway=per-az", "--set", "vpc.private_subnet_tags.tier=private"];
    let c = changes(&plan_json(&em, &ws, &per_az));
    let expected: Vec<(String, String)> = [
        ("eip.nat[\"us-west-2b\"]", "create"),
        ("eip.nat[\"us-west-2c\"]", "create"),
        ("nat_gateway.main[\"us-west-2b\"]", "create"),
        ("nat_gateway.main[\"us-west-2c\"]", "create"),
        ("route.private_nat[\"us-west-2b\"]", "update"),
        ("route.private_nat[\"us-west-2c\"]", "update"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(c, expected);
    let mut args = vec!["apply", ws.blueprint_arg(), "--auto-approve"];
    args.extend_from_slice(&per_az);
    kbp_ok(&em, &args, ws.path());
    let nats = ec2.describe_nat_gateways().filter(of_stack(STACK)).send().await.unwrap();
    assert_eq!(nats.nat_gateways().iter().filter(|n| n.state().map(|s| s.as_str()) == Some("available")).count(), 3);
    let mut args = vec!["plan", ws.blueprint_arg(), "--detailed-exitcode"];
    args.extend_from_slice(&per_az);
    assert_exit_code(&kbp(&em, &args, ws.path()), 0, "plan after the NAT change");

    // Destroy leaves nothing kbp made: no tagged network resource, none of the stack's roles or policies.
    let mut args = vec!["destroy", ws.blueprint_arg(), "--auto-approve"];
    args.extend_from_slice(&per_az);
    let out = kbp_ok(&em, &args, ws.path());
    assert!(stdout(&out).contains("Destroy complete!"), "{}", describe_output(&out));
    assert!(ec2.describe_vpcs().filters(of_stack(STACK)).send().await.unwrap().vpcs().is_empty());
    assert!(ec2.describe_subnets().filters(of_stack(STACK)).send().await.unwrap().subnets().is_empty());
    assert!(ec2
        .describe_internet_gateways()
        .filters(of_stack(STACK))
        .send()
        .await
        .unwrap()
        .internet_gateways()
        .is_empty());
    assert!(ec2.describe_route_tables().filters(of_stack(STACK)).send().await.unwrap().route_tables().is_empty());
    assert!(ec2.describe_addresses().filters(of_stack(STACK)).send().await.unwrap().addresses().is_empty());
    let live_nats = ec2.describe_nat_gateways().filter(of_stack(STACK)).send().await.unwrap();
    assert!(live_nats.nat_gateways().iter().all(|n| n.state().map(|s| s.as_str()) == Some("deleted")));
    assert!(stack_role_names(&em).await.is_empty(), "{:?}", stack_role_names(&em).await);
    let policies = iam.list_policies().scope(aws_sdk_iam::types::PolicyScopeType::Local).send().await.unwrap();
    assert!(policies.policies().iter().all(|p| !p.policy_name().unwrap_or("").contains(STACK)));
    let list = kbp_ok(&em, &["state", "list"], ws.path());
    assert!(stdout(&list).trim().is_empty(), "state is empty after destroy: {}", stdout(&list));
}
