use async_trait::async_trait;
use serde_json::json;

use super::*;
use crate::graph::compile::tests_support::managed;
use crate::graph::{compile, Resource};
use crate::providers::read_only::{ReadOnly, Reads};
use crate::providers::Descriptor;
use crate::providers::WithoutState;
use crate::state::ResourceState;

/// A provider that is never called: the diff only asks for force_new and retain_on_destroy.
struct Fake(&'static str);

#[async_trait]
impl ReadOnly for Fake {
    fn descriptor(&self) -> Descriptor {
        let found = match self.0 {
            "aws_iam_service_linked_role" => WithoutState::Kept("account-wide; kbp never deletes it"),
            _ => WithoutState::Tags,
        };
        Descriptor {
            force_new: match self.0 {
                "aws_vpc" => &["cidr_block"],
                "aws_subnet" => &["vpc_id", "cidr_block", "availability_zone"],
                "aws_nat_gateway" => &["subnet_id", "allocation_id"],
                _ => &[],
            },
            ..Descriptor::new(self.0, found, &[])
        }
    }
}

const NETWORK_AND_IAM: &[&str] = &[
    "aws_caller_identity",
    "aws_vpc",
    "aws_subnet",
    "aws_internet_gateway",
    "aws_eip",
    "aws_nat_gateway",
    "aws_route_table",
    "aws_route",
    "aws_route_table_association",
    "aws_iam_role",
    "aws_iam_policy",
    "aws_iam_role_policy_attachment",
    "aws_iam_service_linked_role",
];

fn registry() -> Registry {
    let mut r = Registry::default();
    for k in NETWORK_AND_IAM {
        r.add(Reads(Fake(k)));
    }
    r
}

fn addr(s: &str) -> Address {
    s.parse().unwrap()
}

/// The state an apply of `graph` would leave, with made-up IDs and outputs for the kinds `registry` knows.
fn applied(graph: &ResourceGraph, registry: &Registry) -> State {
    let mut s = State::new("demo", "us-west-2");
    for r in graph.in_order() {
        if !registry.has(&r.kind) || r.dependencies().iter().any(|d| !s.resources.contains_key(d)) {
            continue;
        }
        let (attrs, missing) = value::resolve(&Value::Object(r.attrs.clone()), &|a, o| s.output(a, o));
        assert!(missing.is_empty());
        let id = format!("id-{}", r.address);
        let outputs = json!({"id": id, "arn": format!("arn:{id}"), "name": id, "partition": "aws",
                             "url_suffix": "amazonaws.com", "account_id": "123456789012"});
        s.resources.insert(
            r.address.clone(),
            ResourceState {
                address: r.address.clone(),
                kind: r.kind.clone(),
                id: Some(id),
                status: Status::Ready,
                attributes: attrs.as_object().unwrap().clone(),
                outputs: outputs.as_object().unwrap().clone(),
                dependencies: r.dependencies().into_iter().collect(),
                imported: false,
                address_tag: crate::state::AddressTag::Path,
            },
        );
    }
    s
}

/// The plan for `edit` of the sample blueprint, against the state of the unedited one applied.
fn plan_after_edit(edit: impl FnOnce(&mut crate::blueprint::Blueprint)) -> Plan {
    let reg = registry();
    let state = applied(&sample_graph(|_| {}), &reg);
    diff(&sample_graph(edit), &state, &reg, &[])
}

fn sample_graph(edit: impl FnOnce(&mut crate::blueprint::Blueprint)) -> ResourceGraph {
    let mut bp = crate::graph::compile::tests_support::sample();
    edit(&mut bp);
    compile(&bp).unwrap()
}

#[test]
fn empty_state_creates_every_supported_resource_and_defers_the_rest() {
    let g = sample_graph(|_| {});
    let plan = diff(&g, &State::new("demo", "us-west-2"), &registry(), &[]);
    assert!(plan.changes.iter().all(|c| c.action == Action::Create));
    assert!(plan.change(&addr("vpc.main")).is_some());
    assert!(plan.change(&addr("iam_role.karpenter_node")).is_some());
    assert!(plan.change(&addr("nat_gateway.main[\"us-west-2a\"]")).is_some());
    assert!(plan.deferred.iter().any(|d| d.address == addr("eks_cluster.main")));
    // The interruption policy references the queue, which has no provider here, so it waits with it.
    assert!(plan.deferred.iter().any(|d| d.address == addr("iam_policy.karpenter_controller[\"interruption\"]")));
    assert_eq!(plan.summary.add, plan.changes.len());
    let vpc = plan.change(&addr("vpc.main")).unwrap();
    assert!(vpc.attributes.iter().any(|a| a.path == "cidr_block" && a.after == Some(json!("10.0.0.0/16"))));
}

#[test]
fn applied_state_plans_nothing() {
    let g = sample_graph(|_| {});
    let reg = registry();
    let plan = diff(&g, &applied(&g, &reg), &reg, &[]);
    assert!(plan.changes.is_empty(), "{:#?}", plan.changes);
    assert!(plan.unchanged > 40);
}

#[test]
fn a_tag_change_updates_only_the_tagged_resources() {
    let reg = registry();
    let state = applied(&sample_graph(|_| {}), &reg);
    let g = sample_graph(|bp| {
        bp.vpc.private_subnet_tags.insert("tier".into(), "private".into());
    });
    let plan = diff(&g, &state, &reg, &[]);
    assert_eq!(plan.changes.len(), 3, "{:#?}", plan.changes);
    for c in &plan.changes {
        assert_eq!(c.action, Action::Update);
        assert!(c.address.to_string().starts_with("subnet.private"));
        assert_eq!(c.attributes[0].path, "tags.tier");
        assert_eq!(c.reason, "tags changed");
    }
}

#[test]
fn nat_mode_change_plans_only_nat_resources_and_routes() {
    let plan = plan_after_edit(|bp| managed(bp).nat_gateway = crate::blueprint::NatGatewayMode::PerAz);
    let mut got: Vec<(String, Action)> = plan.changes.iter().map(|c| (c.address.to_string(), c.action)).collect();
    got.sort();
    assert_eq!(
        got,
        vec![
            ("eip.nat[\"us-west-2b\"]".into(), Action::Create),
            ("eip.nat[\"us-west-2c\"]".into(), Action::Create),
            ("nat_gateway.main[\"us-west-2b\"]".into(), Action::Create),
            ("nat_gateway.main[\"us-west-2c\"]".into(), Action::Create),
            ("route.private_nat[\"us-west-2b\"]".into(), Action::Update),
            ("route.private_nat[\"us-west-2c\"]".into(), Action::Update),
        ]
    );
    let r = plan.change(&addr("route.private_nat[\"us-west-2b\"]")).unwrap();
    assert_eq!(r.attributes[0].after, Some(json!(UNKNOWN)));
}

#[test]
fn a_force_new_change_replaces_and_cascades_to_dependents_that_reference_it() {
    let plan = plan_after_edit(|bp| managed(bp).cidr = "10.1.0.0/16".parse().unwrap());
    let vpc = plan.change(&addr("vpc.main")).unwrap();
    assert_eq!(vpc.action, Action::Replace);
    assert_eq!(vpc.reason, "cidr_block forces replacement");
    // Subnets keep their CIDRs in this edit but their vpc_id is new, which they cannot take in place.
    let s = plan.change(&addr("subnet.public[\"us-west-2a\"]")).unwrap();
    assert_eq!(s.action, Action::Replace);
    assert!(s.reason.contains("vpc_id"));
}

#[test]
fn removed_resources_are_deleted_dependents_first_and_gone_ones_recreated() {
    let plan = plan_after_edit(|bp| managed(bp).nat_gateway = crate::blueprint::NatGatewayMode::None);
    let order: Vec<String> =
        plan.changes.iter().filter(|c| c.action == Action::Delete).map(|c| c.address.to_string()).collect();
    let pos = |a: &str| order.iter().position(|x| x == a).unwrap_or_else(|| panic!("{a} not deleted: {order:?}"));
    assert!(pos("route.private_nat[\"us-west-2a\"]") < pos("nat_gateway.main[\"us-west-2a\"]"));
    assert!(pos("nat_gateway.main[\"us-west-2a\"]") < pos("eip.nat[\"us-west-2a\"]"));

    let reg = registry();
    let mut gone_state = applied(&sample_graph(|_| {}), &reg);
    gone_state.resources.remove(&addr("route_table.public"));
    let plan = diff(&sample_graph(|_| {}), &gone_state, &reg, &[addr("route_table.public")]);
    let c = plan.change(&addr("route_table.public")).unwrap();
    assert_eq!((c.action, c.reason.as_str()), (Action::Create, "deleted outside kbp"));
}

#[test]
fn destroy_deletes_everything_but_forgets_the_spot_role() {
    let reg = registry();
    let g = sample_graph(|_| {});
    let state = applied(&g, &reg);
    let plan = diff_destroy(&g, &state, &reg);
    assert_eq!(plan.changes.len(), state.resources.len());
    assert_eq!(plan.change(&addr("iam_service_linked_role.spot")).unwrap().action, Action::Forget);
    let order: Vec<String> = plan.changes.iter().map(|c| c.address.to_string()).collect();
    let pos = |a: &str| order.iter().position(|x| x == a).unwrap();
    assert!(pos("subnet.private[\"us-west-2a\"]") < pos("vpc.main"));
    assert!(
        pos("iam_role_policy_attachment.karpenter_node[\"AmazonEKSWorkerNodePolicy\"]")
            < pos("iam_role.karpenter_node")
    );
}

#[test]
fn unchanged_resource_with_a_new_output_reference_is_not_touched() {
    // Only references to resources being created or replaced are unknown; others resolve from state.
    let reg = registry();
    let g = sample_graph(|_| {});
    let state = applied(&g, &reg);
    let _ = Resource::new(addr("vpc.main"), "aws_vpc", json!({}));
    let plan = diff(&g, &state, &reg, &[]);
    assert!(plan.change(&addr("subnet.private[\"us-west-2a\"]")).is_none());
}

#[test]
fn an_imported_resource_is_updated_to_carry_kbps_tags_and_nothing_else_changes() {
    let g = sample_graph(|_| {});
    let reg = registry();
    let mut state = applied(&g, &reg);
    let role = addr("iam_role.cluster");
    state.resources.get_mut(&role).unwrap().imported = true;
    let plan = diff(&g, &state, &reg, &[]);
    assert_eq!(plan.changes.len(), 1, "{:#?}", plan.changes);
    let c = plan.change(&role).unwrap();
    assert_eq!(c.action, Action::Update);
    assert!(c.reason.starts_with("imported, kbp's tags to add"), "{}", c.reason);
    let added: Vec<(&str, Option<&Value>)> = c.attributes.iter().map(|a| (a.path.as_str(), a.after.as_ref())).collect();
    assert_eq!(
        added,
        [("tags[\"kbp:address\"]", Some(&json!("iam_role.cluster"))), ("tags[\"kbp:stack\"]", Some(&json!("demo")))]
    );
    assert!(c.attributes.iter().all(|a| a.before.is_none() && !a.forces_replacement));
}

#[test]
fn state_of_an_earlier_kbp_rewrites_keyed_address_tags_in_place_and_nothing_else() {
    let reg = registry();
    let graph = sample_graph(|_| {});
    let mut state = applied(&graph, &reg);
    // State written before `address_tag` existed reads as the bracketed spelling.
    let old = serde_json::to_value(&state).unwrap();
    let mut old = old.clone();
    for r in old["resources"].as_array_mut().unwrap() {
        r.as_object_mut().unwrap().remove("address_tag");
    }
    state = serde_json::from_value(old).unwrap();
    let plan = diff(&graph, &state, &reg, &[]);
    assert!(!plan.changes.is_empty());
    for c in &plan.changes {
        assert_eq!(c.action, Action::Update, "{c:?}");
        assert!(c.address.key.is_some(), "only keyed addresses are spelt differently: {c:?}");
        let paths: Vec<&str> = c.attributes.iter().map(|a| a.path.as_str()).collect();
        assert_eq!(paths, ["tags[\"kbp:address\"]"], "{c:?}");
        let after = c.attributes[0].after.as_ref().unwrap().as_str().unwrap();
        assert_eq!(after, crate::providers::tags::address_value(&c.address));
        assert_eq!(c.attributes[0].before.as_ref().unwrap().as_str().unwrap(), c.address.to_string());
    }
    // Keyed resources without tags (routes, attachments) have nothing to rewrite.
    assert!(plan.changes.iter().all(|c| graph.get(&c.address).unwrap().attrs.contains_key("tags")));
}
