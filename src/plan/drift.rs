//! Drift: what changed outside kbp since it last wrote state. It is the difference, attribute by attribute,
//! between what state recorded for each resource (the attributes as kbp last applied them) and what the refresh
//! read now, plus the resources deleted outside kbp. Pure: it compares two documents the refresh already made.
//!
//! Drift is not the plan. The plan compares the blueprint with what exists, so a normal plan repairs drift as
//! updates; drift compares state with what exists, so `kbp plan --refresh-only` can show it alone and
//! `kbp apply --refresh-only` can accept it into state ([`accept`]) without changing AWS.
//!
//! Only what kbp recorded is compared: an attribute state does not hold (one a newer kbp reads, or one a
//! provider cannot read back) is no drift, and in-cluster objects are already cut to the fields kbp applied by
//! their providers, so the API server's defaults and a controller's status never show.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::diff::attr_diff;
use super::Refreshed;
use crate::graph::Address;
use crate::state::{State, Status};

/// How a resource of state differs from what exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Drifted {
    /// It exists, with attributes other than state recorded.
    Changed,
    /// It no longer exists.
    Deleted,
    /// It was made outside kbp beside what kbp manages (an access entry of the cluster), and no blueprint
    /// declares it: kbp leaves it alone, and says so.
    Unmanaged,
}

/// One attribute, by its path inside the attributes (`scaling.desired_size`, `manifest.spec.limits.cpu`), as state
/// recorded it and as it is now; `None` where it is absent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DriftedAttr {
    /// Where in the attributes: dot-separated keys.
    pub path: String,
    /// The value state recorded.
    pub recorded: Option<Value>,
    /// The value AWS or the cluster reports now.
    pub now: Option<Value>,
}

/// A resource changed or deleted outside kbp.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Drift {
    /// The resource's address in the graph.
    pub address: Address,
    /// The resource's kind (`aws_eks_node_group`).
    pub kind: String,
    /// The provider's ID of the resource, where it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Whether it changed, was deleted, or is unmanaged.
    pub drifted: Drifted,
    /// The attributes that differ (empty for a deleted resource).
    pub attributes: Vec<DriftedAttr>,
}

/// The drift of every resource `prior` (state as stored) holds as made, against `refreshed` (the same state
/// after [`super::refresh()`]). Resources refresh adopted, and creates still pending, are not drift: the plan
/// lists them apart.
pub fn drift(prior: &State, refreshed: &Refreshed) -> Vec<Drift> {
    let mut out = Vec::new();
    for (address, recorded) in &prior.resources {
        if recorded.status != Status::Ready || recorded.id.is_none() {
            continue;
        }
        let drift = |drifted, attributes| Drift {
            address: address.clone(),
            kind: recorded.kind.clone(),
            id: recorded.id.clone(),
            drifted,
            attributes,
        };
        if refreshed.gone.contains(address) {
            out.push(drift(Drifted::Deleted, Vec::new()));
            continue;
        }
        let Some(now) = refreshed.state.get(address) else { continue };
        let mut changes = Vec::new();
        for (key, was) in &recorded.attributes {
            let is = now.attributes.get(key);
            if is != Some(was) {
                attr_diff(key, Some(was), is, false, &mut changes);
            }
        }
        if !changes.is_empty() {
            let attributes =
                changes.into_iter().map(|c| DriftedAttr { path: c.path, recorded: c.before, now: c.after }).collect();
            out.push(drift(Drifted::Changed, attributes));
        }
    }
    out
}

/// `prior` with the drift accepted: each resource it holds as made takes the attributes and outputs read now,
/// and those deleted outside kbp leave it. Creates still pending and resources refresh adopted are left to
/// `kbp apply`, which finishes or adopts them.
pub fn accept(prior: &State, refreshed: &Refreshed) -> State {
    let mut next = prior.clone();
    for address in &refreshed.gone {
        next.resources.remove(address);
    }
    for (address, r) in next.resources.iter_mut() {
        if r.status != Status::Ready {
            continue;
        }
        if let Some(now) = refreshed.state.get(address) {
            r.attributes = now.attributes.clone();
            r.outputs = now.outputs.clone();
        }
    }
    next
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::graph::Attrs;
    use crate::state::ResourceState;

    fn entry(address: Address, kind: &str, id: Option<&str>, status: Status, attrs: Value) -> ResourceState {
        ResourceState {
            address,
            kind: kind.into(),
            id: id.map(str::to_string),
            status,
            attributes: attrs.as_object().cloned().unwrap(),
            outputs: Attrs::new(),
            dependencies: vec![],
            imported: false,
            address_tag: crate::state::AddressTag::Path,
        }
    }

    fn group() -> Address {
        Address::new("eks_node_group", "system")
    }
    fn rule() -> Address {
        Address::new("event_rule", "health")
    }
    fn pool() -> Address {
        Address::keyed("node_pool", "main", "default")
    }
    fn vpc() -> Address {
        Address::new("vpc", "main")
    }

    /// State as kbp left it: a node group, a rule, a NodePool, a VPC, and a create still pending.
    fn prior() -> State {
        let mut s = State::new("demo", "us-west-2");
        let ready = |a: Address, kind, id, attrs| entry(a, kind, Some(id), Status::Ready, attrs);
        for r in [
            ready(
                group(),
                "aws_eks_node_group",
                "demo:system",
                json!({"name": "system", "scaling": {"min_size": 2, "max_size": 3, "desired_size": 2},
                       "tags": {"team": "a"}}),
            ),
            ready(rule(), "aws_eventbridge_rule", "demo-Health", json!({"name": "demo-Health", "state": "ENABLED"})),
            ready(
                pool(),
                "k8s_node_pool",
                "default",
                json!({"manifest": {"spec": {"limits": {"cpu": "1000"}, "weight": 10}}}),
            ),
            ready(vpc(), "aws_vpc", "vpc-1", json!({"cidr_block": "10.0.0.0/16"})),
            entry(
                Address::new("sqs_queue", "interruption"),
                "aws_sqs_queue",
                None,
                Status::Creating { client_token: "t".into(), started: None },
                json!({"name": "demo"}),
            ),
        ] {
            s.resources.insert(r.address.clone(), r);
        }
        s
    }

    /// What refresh makes of `prior` when the group was scaled, the rule disabled, the pool's CPU limit changed,
    /// the VPC deleted and the queue found by its tags.
    fn refreshed() -> Refreshed {
        let mut state = prior();
        fn attrs<'a>(a: &Address, s: &'a mut State) -> &'a mut Attrs {
            &mut s.resources.get_mut(a).unwrap().attributes
        }
        attrs(&group(), &mut state)["scaling"]["desired_size"] = json!(3);
        attrs(&group(), &mut state)["tags"]["owner"] = json!("someone");
        attrs(&rule(), &mut state)["state"] = json!("DISABLED");
        attrs(&pool(), &mut state)["manifest"]["spec"]["limits"]["cpu"] = json!("5");
        // A key state never recorded (a newer kbp reads it): not drift.
        attrs(&rule(), &mut state).insert("event_bus".into(), json!("default"));
        state.resources.get_mut(&group()).unwrap().outputs.insert("arn".into(), json!("arn:new"));
        state.resources.remove(&vpc());
        let queue = Address::new("sqs_queue", "interruption");
        let q = state.resources.get_mut(&queue).unwrap();
        (q.id, q.status) = (Some("https://queue".into()), Status::Ready);
        q.attributes.insert("name".into(), json!("renamed"));
        Refreshed { state, gone: vec![vpc()], adopted: vec![queue] }
    }

    fn paths(d: &Drift) -> Vec<(&str, Option<&Value>, Option<&Value>)> {
        d.attributes.iter().map(|a| (a.path.as_str(), a.recorded.as_ref(), a.now.as_ref())).collect()
    }

    #[test]
    fn names_each_changed_attribute_by_its_path_and_each_deleted_resource() {
        let d = drift(&prior(), &refreshed());
        let by = |a: &Address| d.iter().find(|x| &x.address == a).unwrap_or_else(|| panic!("{a} drifted: {d:#?}"));
        assert_eq!(d.len(), 4, "group, rule, pool and VPC; the pending queue is not drift: {d:#?}");
        assert_eq!(
            paths(by(&group())),
            [("scaling.desired_size", Some(&json!(2)), Some(&json!(3))), ("tags.owner", None, Some(&json!("someone")))]
        );
        assert_eq!(by(&group()).drifted, Drifted::Changed);
        assert_eq!(by(&group()).id.as_deref(), Some("demo:system"));
        assert_eq!(paths(by(&rule())), [("state", Some(&json!("ENABLED")), Some(&json!("DISABLED")))]);
        assert_eq!(paths(by(&pool())), [("manifest.spec.limits.cpu", Some(&json!("1000")), Some(&json!("5")))]);
        assert_eq!((by(&vpc()).drifted, by(&vpc()).attributes.len()), (Drifted::Deleted, 0));
    }

    #[test]
    fn a_refresh_that_read_what_state_recorded_is_no_drift() {
        let p = prior();
        let same = Refreshed { state: p.clone(), gone: vec![], adopted: vec![] };
        assert!(drift(&p, &same).is_empty());
    }

    #[test]
    fn accepting_takes_what_was_read_and_drops_what_was_deleted_but_adopts_nothing() {
        let (p, r) = (prior(), refreshed());
        let next = accept(&p, &r);
        assert_eq!(next.get(&group()).unwrap().attributes["scaling"]["desired_size"], 3);
        assert_eq!(next.get(&group()).unwrap().outputs["arn"], "arn:new");
        assert_eq!(next.get(&rule()).unwrap().attributes["state"], "DISABLED");
        assert_eq!(next.get(&pool()).unwrap().attributes["manifest"]["spec"]["limits"]["cpu"], "5");
        assert!(next.get(&vpc()).is_none(), "deleted outside kbp: out of state");
        let queue = next.get(&Address::new("sqs_queue", "interruption")).unwrap();
        assert!(matches!(queue.status, Status::Creating { .. }), "a pending create stays for apply to finish");
        assert_eq!(queue.attributes["name"], "demo");
        assert!(drift(&next, &Refreshed { state: next.clone(), gone: vec![], adopted: vec![] }).is_empty());
        assert_eq!((next.lineage, next.serial), (p.lineage, p.serial), "the handle bumps the serial when it writes");
    }
}
