//! What `kbp gc` costs to find the region's stacks (issue 15): the same AWS calls for 1 stack as for 10, and none
//! per cluster of the region that is not kbp's. The stacks are made directly with the SDK, as kbp tags them (a
//! VPC and an EKS cluster with `kbp:stack`, `kbp:stack-id`, and for sandboxes `kbp:owner` and `kbp:expires`),
//! next to two clusters that are not kbp's; `gc --dry-run --json` runs through the counting proxy (the fault
//! proxy with no faults), and what it lists is compared with the tags written. Only `--older-than` needs when
//! a cluster was made, which the tag query does not say: then kbp describes its own clusters, and no others.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use crate::support::events::{self, of_type};
use crate::support::fault_proxy::FaultProxy;
use crate::support::*;
use aws_sdk_ec2::types::ResourceType;
use aws_sdk_eks::types::VpcConfigRequest;
use serde_json::{json, Value};

const EXPIRED: &str = "2020-01-01T00:00:00Z";
const LATER: &str = "2099-01-01T00:00:00Z";

/// Sandbox stack `i` as kbp would have tagged it: every third without a TTL (no owner, no expiry), the others
/// expired or not by turns.
struct Stack {
    name: String,
    id: String,
    ttl: Option<(String, &'static str)>,
}

impl Stack {
    fn new(i: usize) -> Stack {
        let ttl = match i % 3 {
            0 => None,
            1 => Some((format!("arn:aws:iam::{ACCOUNT_ID}:user/dev-{i}"), EXPIRED)),
            _ => Some((format!("arn:aws:iam::{ACCOUNT_ID}:user/dev-{i}"), LATER)),
        };
        Stack { name: format!("sbx-{i:02}"), id: format!("lineage-{i:02}"), ttl }
    }

    fn tags(&self) -> Vec<(&str, &str)> {
        let mut tags = vec![("kbp:stack", self.name.as_str()), ("kbp:stack-id", self.id.as_str())];
        if let Some((owner, expires)) = &self.ttl {
            tags.extend([("kbp:owner", owner.as_str()), ("kbp:expires", *expires)]);
        }
        tags
    }

    /// The row `gc --json` should list for it; `age` is not known without `--older-than`.
    fn row(&self) -> Value {
        let owner = self.ttl.as_ref().map(|(owner, _)| owner.as_str());
        let expires = self.ttl.as_ref().map(|(_, expires)| *expires);
        let action = if expires == Some(EXPIRED) { "destroy (expired)" } else { "keep" };
        json!({"name": self.name, "id": self.id, "owner": owner, "age": null, "expires": expires, "action": action})
    }
}

/// A VPC with a subnet in each of two zones, tagged with `tags`; returns the subnets.
async fn network(em: &Emulator, octet: usize, tags: &[(&str, &str)]) -> Vec<String> {
    let ec2 = em.ec2().await;
    // EC2 refuses a tag specification without tags.
    let tagged = |kind| (!tags.is_empty()).then(|| vec![tag_spec(kind, tags)]);
    let vpc = ec2.create_vpc().cidr_block(format!("10.{octet}.0.0/16"));
    let vpc = vpc.set_tag_specifications(tagged(ResourceType::Vpc)).send().await.unwrap();
    let vpc = vpc.vpc.and_then(|v| v.vpc_id).unwrap();
    let mut subnets = Vec::new();
    for (n, zone) in ["us-west-2a", "us-west-2b"].into_iter().enumerate() {
        let subnet =
            ec2.create_subnet().vpc_id(&vpc).cidr_block(format!("10.{octet}.{n}.0/24")).availability_zone(zone);
        let subnet = subnet.set_tag_specifications(tagged(ResourceType::Subnet)).send().await.unwrap();
        subnets.push(subnet.subnet.and_then(|s| s.subnet_id).unwrap());
    }
    subnets
}

async fn cluster(em: &Emulator, name: &str, subnets: Vec<String>, tags: &[(&str, &str)]) {
    let vpc = VpcConfigRequest::builder().set_subnet_ids(Some(subnets)).build();
    let mut create = em.eks().await.create_cluster().name(name).role_arn(format!("arn:aws:iam::{ACCOUNT_ID}:role/eks"));
    for (k, v) in tags {
        create = create.tags(*k, *v);
    }
    create.resources_vpc_config(vpc).send().await.unwrap_or_else(|e| panic!("CreateCluster {name}: {e:?}"));
}

/// A kbp stack: its VPC and its cluster, both with the stack's tags (subnets too, which gc does not look at).
async fn make_stack(em: &Emulator, i: usize) -> Stack {
    let stack = Stack::new(i);
    let subnets = network(em, i, &stack.tags()).await;
    cluster(em, &stack.name, subnets, &stack.tags()).await;
    stack
}

/// What `kbp gc --dry-run --json ARGS` lists through `proxy`, and the AWS calls it made per operation.
fn gc(em: &Emulator, proxy: &FaultProxy, dir: &Path, args: &[&str]) -> (Vec<Value>, BTreeMap<String, u64>) {
    proxy.reset();
    let mut all = vec!["gc", "--region", "us-west-2", "--dry-run", "--json"];
    all.extend(args);
    let out = kbp_command(em, &all, dir).envs(proxy.env()).output().expect("run kbp gc");
    assert_exit_code(&out, 0, &all.join(" "));
    let events = events::events(&out);
    let listed = of_type(&events, "stacks");
    assert_eq!(listed.len(), 1, "one stacks event: {events:?}");
    let rows = listed[0]["stacks"].as_array().expect("stacks is a list").clone();
    let stats = proxy.stats();
    let calls = stats["operations"].as_object().expect("operations in the proxy's stats");
    (rows, calls.iter().map(|(op, n)| (op.clone(), n.as_u64().unwrap_or(0))).collect())
}

fn shown(calls: &BTreeMap<String, u64>) -> String {
    calls.iter().map(|(op, n)| format!("{n} {op}")).collect::<Vec<_>>().join(", ")
}

#[tokio::test(flavor = "multi_thread")]
async fn gc_finds_1_or_10_stacks_with_the_same_calls_and_describes_no_cluster() {
    // Twelve clusters, none with a control plane: gc never talks to one.
    let em = Emulator::start_without_kubernetes();
    let dir = tempfile::tempdir().unwrap();
    let not_kbp = network(&em, 200, &[]).await;
    cluster(&em, "not-kbp", not_kbp.clone(), &[]).await;
    cluster(&em, "not-kbp-tagged", not_kbp, &[("team", "data")]).await;
    let mut stacks = vec![make_stack(&em, 1).await];
    let proxy = FaultProxy::start(&em, json!({}));

    let (rows_1, calls_1) = gc(&em, &proxy, dir.path(), &[]);
    for i in 2..=10 {
        stacks.push(make_stack(&em, i).await);
    }
    let (rows_10, calls_10) = gc(&em, &proxy, dir.path(), &[]);
    eprintln!("gc --dry-run, 1 stack: {}\ngc --dry-run, 10 stacks: {}", shown(&calls_1), shown(&calls_10));

    assert_eq!(rows_1, [stacks[0].row()], "the one stack, as tagged; the other clusters are not kbp's");
    let expected: Vec<Value> = stacks.iter().map(Stack::row).collect();
    assert_eq!(rows_10, expected, "every stack once (its VPC and cluster are one stack), sorted by name");
    assert_eq!(calls_10, calls_1, "finding 10 stacks costs what finding 1 does");
    assert_eq!(calls_1.get("tagging:GetResources"), Some(&1), "one page of tagged VPCs and clusters: {calls_1:?}");
    assert!(calls_1.keys().all(|op| !op.starts_with("eks:")), "no cluster is listed or described: {calls_1:?}");

    // The text table has no AGE column when no age was read.
    let text = stdout(&kbp_ok(&em, &["gc", "--region", "us-west-2", "--dry-run"], dir.path()));
    let header = text.lines().next().unwrap_or_default();
    assert!(header.starts_with("STACK") && !header.contains("AGE"), "{text}");

    // --older-than needs each stack's age: its cluster's creation time, read from kbp's clusters only.
    std::thread::sleep(Duration::from_secs(2));
    let (rows, calls) = gc(&em, &proxy, dir.path(), &["--older-than", "1s"]);
    eprintln!("gc --dry-run --older-than 1s, 10 stacks: {}", shown(&calls));
    assert_eq!(calls.get("eks:DescribeCluster"), Some(&10), "one per kbp cluster: {calls:?}");
    assert_eq!(calls.get("eks:ListClusters"), None, "{calls:?}");
    assert_eq!(rows.len(), stacks.len(), "{rows:?}");
    for (row, stack) in rows.iter().zip(&stacks) {
        let age = row["age"].as_str().and_then(|a| humantime::parse_duration(a).ok());
        assert!(age.is_some_and(|a| a >= Duration::from_secs(2)), "the cluster's age: {row}");
        assert_eq!(row["action"], stack.row()["action"], "old enough: expired stacks go ({row})");
    }
    let (rows, _) = gc(&em, &proxy, dir.path(), &["--older-than", "1h"]);
    assert!(rows.iter().all(|r| r["action"] == "keep"), "expired, but younger than an hour: kept: {rows:?}");
    let text = stdout(&kbp_ok(&em, &["gc", "--region", "us-west-2", "--dry-run", "--older-than", "1h"], dir.path()));
    assert!(text.lines().next().is_some_and(|h| h.contains(" AGE ")), "{text}");
}
