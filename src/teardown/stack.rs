//! Finding a stack by its tags alone (`kbp destroy --from-tags`, `kbp gc`): everything tagged
//! `kbp:stack=<name>` (and, when the stack's ID is known, not tagged with another `kbp:stack-id`), as
//! [`Found`] entries of the providers' kinds, each naming what it uses so the engine orders the deletes.
//! EC2 resources are found with one tag-filtered Describe call per type, which also says whether each still
//! exists (tags can outlive a terminated instance or a deleted NAT gateway); IAM is global and lists no tags, so
//! each role, policy, OIDC provider and instance profile's tags are read, concurrently.

use std::collections::{BTreeMap, HashMap};

use aws_sdk_ec2::types::{Filter, InstanceStateName, NatGatewayState, Tag};
use futures::{StreamExt, TryStreamExt};

use aws_sdk_iam::operation::get_open_id_connect_provider::GetOpenIdConnectProviderOutput;

use crate::graph::kinds;
use crate::providers::attrs::absent_if_gone;
use crate::providers::iam::common::Entity;
use crate::providers::send::{send, send_pages};
use crate::providers::tags::{ADDRESS, STACK, STACK_ID};
use crate::providers::{Context, Found, ProviderError, Result};

pub(super) const PARALLEL_LOOKUPS: usize = 8;
/// Service-linked roles (the account-wide Spot role among them) live under this path and are never a
/// stack's to delete.
const SERVICE_ROLE_PATH: &str = "/aws-service-role/";

/// Which stack: its name, and its ID (the state lineage) when known.
#[derive(Debug, Clone, Copy)]
pub struct Identity<'a> {
    pub name: &'a str,
    pub id: Option<&'a str>,
}

impl Identity<'_> {
    /// Whether `tags` say the resource is this stack's: `kbp:stack` is the name, and `kbp:stack-id`, when both
    /// sides know one, is the ID (stacks made before the ID tag existed carry none, and still count).
    pub fn owns<'t>(&self, tag: impl Fn(&str) -> Option<&'t str>) -> bool {
        tag(STACK) == Some(self.name)
            && match (self.id, tag(STACK_ID)) {
                (Some(id), Some(theirs)) => id == theirs,
                _ => true,
            }
    }
}

fn found(kind: &'static str, id: &str, name: Option<String>, detail: String, uses: Vec<String>) -> Found {
    // A `kbp:address` tag of either form is shown (and matched against state) as the address itself.
    let name = name.map(|n| crate::providers::tags::display_address(&n));
    Found { kind, id: id.to_string(), name, detail, uses, after: Vec::new(), attrs: Default::default() }
}

/// An EC2 resource that lives in a VPC, which goes after it.
fn found_in_vpc(kind: &'static str, id: Option<&str>, tags: &[Tag], vpc: Option<&str>) -> Found {
    let detail = format!("in {}", vpc.unwrap_or("?"));
    found(kind, id.unwrap_or_default(), ec2_name(tags), detail, vpc.map(str::to_string).into_iter().collect())
}

fn ec2_tag<'a>(tags: &'a [Tag], key: &str) -> Option<&'a str> {
    tags.iter().find(|t| t.key() == Some(key)).map(|t| t.value().unwrap_or_default())
}

/// The name to show for an EC2 resource: its `kbp:address`, else its `Name` tag.
fn ec2_name(tags: &[Tag]) -> Option<String> {
    ec2_tag(tags, ADDRESS).or_else(|| ec2_tag(tags, "Name")).map(str::to_string)
}

/// The last segment of an ARN's resource (`arn:aws:iam::1:role/x` → `x`), which is how teardown names IAM roles
/// and KMS keys.
fn arn_name(arn: &str) -> String {
    arn.rsplit('/').next().unwrap_or(arn).to_string()
}

/// Everything of the stack in the region (and in IAM, which is global); only reads.
pub async fn stack(cx: &Context, who: Identity<'_>) -> Result<Vec<Found>> {
    // Boxed: the four lookups' futures together are too big for a test thread's stack in a debug build.
    let (ec2, eks, iam, others) = futures::try_join!(
        Box::pin(ec2_items(cx, who)),
        Box::pin(eks_items(cx, who)),
        Box::pin(iam_items(cx, who)),
        Box::pin(other_items(cx, who))
    )?;
    let mut all: Vec<Found> =
        ec2.into_iter().chain(eks).chain(iam).chain(others).filter(|f| !f.id.is_empty()).collect();
    all.sort_by(|a, b| (a.kind, &a.id).cmp(&(b.kind, &b.id)));
    all.dedup_by(|a, b| a.kind == b.kind && a.id == b.id);
    Ok(all)
}

async fn ec2_items(cx: &Context, who: Identity<'_>) -> Result<Vec<Found>> {
    let tagged = Filter::builder().name(format!("tag:{STACK}")).values(who.name).build();
    let f = || Some(vec![tagged.clone()]);
    // The tags are checked again on what comes back: not every EC2 API implementation applies tag filters to
    // every Describe call (DescribeNatGateways in some), and a filter ignored must not widen the stack.
    let ours = |tags: &[Tag]| who.owns(|k| ec2_tag(tags, k));
    let mut items = Vec::new();

    // One Describe per type, all at once.
    let ec2 = cx.ec2();
    let (vpcs, subnets, igws, nats, addresses, tables, groups, instances) = futures::try_join!(
        send(cx, "ec2:DescribeVpcs", &[], || ec2.describe_vpcs().set_filters(f()).send()),
        send(cx, "ec2:DescribeSubnets", &[], || ec2.describe_subnets().set_filters(f()).send()),
        send(cx, "ec2:DescribeInternetGateways", &[], || ec2.describe_internet_gateways().set_filters(f()).send()),
        send(cx, "ec2:DescribeNatGateways", &[], || ec2.describe_nat_gateways().set_filter(f()).send()),
        send(cx, "ec2:DescribeAddresses", &[], || ec2.describe_addresses().set_filters(f()).send()),
        send(cx, "ec2:DescribeRouteTables", &[], || ec2.describe_route_tables().set_filters(f()).send()),
        send(cx, "ec2:DescribeSecurityGroups", &[], || ec2.describe_security_groups().set_filters(f()).send()),
        send(cx, "ec2:DescribeInstances", &[], || ec2.describe_instances().set_filters(f()).send()),
    )?;

    for v in vpcs.vpcs().iter().filter(|v| ours(v.tags())) {
        items.push(found(kinds::VPC, v.vpc_id().unwrap_or_default(), ec2_name(v.tags()), String::new(), Vec::new()));
    }
    for s in subnets.subnets().iter().filter(|s| ours(s.tags())) {
        items.push(found_in_vpc(kinds::SUBNET, s.subnet_id(), s.tags(), s.vpc_id()));
    }
    // A NAT gateway's public address keeps the internet gateway from detaching: the gateways go first.
    let mut igw_of_vpc: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for g in igws.internet_gateways().iter().filter(|g| ours(g.tags())) {
        let id = g.internet_gateway_id().unwrap_or_default();
        let vpcs: Vec<String> = g.attachments().iter().filter_map(|a| a.vpc_id().map(str::to_string)).collect();
        for v in &vpcs {
            igw_of_vpc.entry(v.clone()).or_default().push(id.to_string());
        }
        let detail = if vpcs.is_empty() { String::new() } else { format!("attached to {}", vpcs.join(", ")) };
        items.push(found(kinds::INTERNET_GATEWAY, id, ec2_name(g.tags()), detail, vpcs));
    }
    for n in nats.nat_gateways().iter().filter(|n| ours(n.tags())) {
        if matches!(n.state(), Some(NatGatewayState::Deleted | NatGatewayState::Failed)) {
            continue;
        }
        let mut uses: Vec<String> = n.subnet_id().map(str::to_string).into_iter().collect();
        uses.extend(n.nat_gateway_addresses().iter().filter_map(|a| a.allocation_id().map(str::to_string)));
        uses.extend(n.vpc_id().and_then(|v| igw_of_vpc.get(v)).cloned().unwrap_or_default());
        let detail = format!("in {}", n.subnet_id().unwrap_or("?"));
        items.push(found(kinds::NAT_GATEWAY, n.nat_gateway_id().unwrap_or_default(), ec2_name(n.tags()), detail, uses));
    }
    for a in addresses.addresses().iter().filter(|a| ours(a.tags())) {
        let Some(id) = a.allocation_id() else { continue };
        let detail = a.public_ip().unwrap_or_default().to_string();
        items.push(found(kinds::EIP, id, ec2_name(a.tags()), detail, Vec::new()));
    }
    for t in tables.route_tables().iter().filter(|t| ours(t.tags())) {
        items.push(found_in_vpc(kinds::ROUTE_TABLE, t.route_table_id(), t.tags(), t.vpc_id()));
    }
    // By the tag, like the rest: the node group kbp makes in a VPC it does not own (`[vpc] id`) is the stack's too.
    for sg in groups.security_groups().iter().filter(|g| ours(g.tags()) && g.group_name() != Some("default")) {
        let name = ec2_tag(sg.tags(), ADDRESS).or(sg.group_name()).map(str::to_string);
        let uses: Vec<String> = sg.vpc_id().map(str::to_string).into_iter().collect();
        items.push(found(kinds::SECURITY_GROUP, sg.group_id().unwrap_or_default(), name, String::new(), uses));
    }
    for i in instances.reservations().iter().flat_map(|r| r.instances()).filter(|i| ours(i.tags())) {
        if matches!(i.state().and_then(|s| s.name()), Some(InstanceStateName::Terminated)) {
            continue;
        }
        let mut uses: Vec<String> = i.subnet_id().map(str::to_string).into_iter().collect();
        uses.extend(i.security_groups().iter().filter_map(|g| g.group_id().map(str::to_string)));
        items.push(found(
            kinds::INSTANCE,
            i.instance_id().unwrap_or_default(),
            ec2_name(i.tags()),
            String::new(),
            uses,
        ));
    }
    Ok(items)
}

/// The cluster named after the stack if it is this stack's, and its node groups (their ID is
/// `<cluster>:<name>`), each naming the subnets, groups, roles and key it uses.
async fn eks_items(cx: &Context, who: Identity<'_>) -> Result<Vec<Found>> {
    let stack = who.name;
    let r = send(cx, "eks:DescribeCluster", &[], || cx.eks().describe_cluster().name(stack).send()).await;
    let Some(cluster) = absent_if_gone(r)?.and_then(|o| o.cluster) else { return Ok(Vec::new()) };
    let tags = cluster.tags();
    if !who.owns(|k| tags.and_then(|t| t.get(k)).map(String::as_str)) {
        return Ok(Vec::new());
    }
    let name = tags.and_then(|t| t.get(ADDRESS)).cloned();
    let status = cluster.status().map(|s| s.as_str().to_string()).unwrap_or_default();
    let mut uses: Vec<String> = Vec::new();
    if let Some(vpc) = cluster.resources_vpc_config() {
        uses.extend(vpc.subnet_ids().iter().cloned());
        uses.extend(vpc.security_group_ids().iter().cloned());
    }
    uses.extend(cluster.role_arn().map(arn_name));
    let keys = cluster.encryption_config().iter().filter_map(|e| e.provider().and_then(|p| p.key_arn()));
    uses.extend(keys.map(arn_name));
    let mut items = vec![found(kinds::EKS_CLUSTER, stack, name, status, uses)];
    let groups = send_pages(
        cx,
        "eks:ListNodegroups",
        |token| cx.eks().list_nodegroups().cluster_name(stack).set_next_token(token).send(),
        |page| (page.nodegroups.unwrap_or_default(), page.next_token),
    );
    let names = absent_if_gone(groups.await)?.unwrap_or_default();
    let described = futures::future::try_join_all(names.iter().map(|ng| async move {
        let r = send(cx, "eks:DescribeNodegroup", &[], || {
            cx.eks().describe_nodegroup().cluster_name(stack).nodegroup_name(ng).send()
        })
        .await;
        Ok::<_, ProviderError>(absent_if_gone(r)?.and_then(|o| o.nodegroup))
    }))
    .await?;
    for (ng, described) in names.iter().zip(described) {
        let mut uses = vec![stack.to_string()];
        if let Some(d) = &described {
            uses.extend(d.subnets().iter().cloned());
            uses.extend(d.node_role().map(arn_name));
        }
        items.push(found(kinds::EKS_NODE_GROUP, &format!("{stack}:{ng}"), Some(ng.clone()), String::new(), uses));
    }
    Ok(items)
}

/// IAM roles (but service-linked ones), customer managed policies, OIDC providers and instance profiles tagged
/// `kbp:stack=<stack>`.
async fn iam_items(cx: &Context, who: Identity<'_>) -> Result<Vec<Found>> {
    let iam = cx.iam();
    let list_policies = send_pages(
        cx,
        "iam:ListPolicies",
        |marker| iam.list_policies().scope(aws_sdk_iam::types::PolicyScopeType::Local).set_marker(marker).send(),
        |page| (page.policies().to_vec(), page.marker().filter(|_| page.is_truncated()).map(str::to_string)),
    );
    let list_oidc = send(cx, "iam:ListOpenIDConnectProviders", &[], || iam.list_open_id_connect_providers().send());
    // Roles come with their tags (the account details); the others' tags are read one by one.
    let (roles, policies, oidc, profiles) = futures::try_join!(
        crate::providers::iam::details::roles(cx),
        list_policies,
        list_oidc,
        crate::providers::iam::instance_profile::all(cx)
    )?;
    let mut items: Vec<Found> = roles
        .iter()
        .filter(|r| !r.path().unwrap_or_default().starts_with(SERVICE_ROLE_PATH))
        .filter_map(|r| {
            let tags: HashMap<&str, &str> = r.tags().iter().map(|t| (t.key(), t.value())).collect();
            let (name, address) = (r.role_name()?, tags.get(ADDRESS).map(|a| a.to_string()));
            who.owns(|k| tags.get(k).copied()).then(|| found(kinds::IAM_ROLE, name, address, String::new(), Vec::new()))
        })
        .collect();
    let mut candidates: Vec<(&'static str, String)> = Vec::new();
    candidates.extend(policies.iter().filter_map(|p| Some((kinds::IAM_POLICY, p.arn()?.to_string()))));
    candidates.extend(
        oidc.open_id_connect_provider_list()
            .iter()
            .filter_map(|p| Some((kinds::IAM_OIDC_PROVIDER, p.arn()?.to_string()))),
    );
    candidates.extend(profiles.into_iter().map(|n| (kinds::IAM_INSTANCE_PROFILE, n)));

    let listed: Vec<Option<Found>> = futures::stream::iter(candidates)
        .map(|(kind, id)| async move {
            let tags = match kind {
                kinds::IAM_POLICY => entity_tags::<aws_sdk_iam::types::Policy>(cx, &id).await?,
                kinds::IAM_OIDC_PROVIDER => entity_tags::<GetOpenIdConnectProviderOutput>(cx, &id).await?,
                _ => crate::providers::iam::instance_profile::tags_of(cx, &id).await?,
            };
            let ours = who.owns(|k| tags.get(k).map(String::as_str));
            Ok::<_, ProviderError>(
                ours.then(|| found(kind, &id, tags.get(ADDRESS).cloned(), String::new(), Vec::new())),
            )
        })
        .buffer_unordered(PARALLEL_LOOKUPS)
        .try_collect()
        .await?;
    items.extend(listed.into_iter().flatten());
    Ok(items)
}

/// An IAM entity's tags as a map, from its Get call; empty when the entity vanished since it was listed.
async fn entity_tags<T: Entity>(cx: &Context, id: &str) -> Result<HashMap<String, String>> {
    let entity = T::get(cx, id).await?;
    Ok(entity.iter().flat_map(|e| (T::TAGS)(e)).map(|t| (t.key.clone(), t.value.clone())).collect())
}

/// SQS queues, EventBridge rules (kbp names both after the stack) and KMS keys tagged for the stack.
/// One tag query (Resource Groups Tagging API) finds them where the caller may send it; otherwise each service
/// is listed and each candidate's tags read.
async fn other_items(cx: &Context, who: Identity<'_>) -> Result<Vec<Found>> {
    if let Some(tagged) = crate::providers::stack_tags::find(cx, who.name).await {
        return from_tag_query(cx, who, tagged).await;
    }
    let (queues, rules, keys) = futures::try_join!(queues(cx, who), rules(cx, who), kms_keys(cx, who))?;
    Ok(queues.into_iter().chain(rules).chain(keys).collect())
}

/// The queues, rules and keys among `tagged` (by ARN, with their tags) that are the stack's and still there: a
/// queue's URL is asked for (it is gone if SQS knows none), a key must be a customer key not pending deletion.
/// Rules on other buses than the default one are not kbp's.
async fn from_tag_query(
    cx: &Context,
    who: Identity<'_>,
    tagged: crate::providers::stack_tags::ByArn,
) -> Result<Vec<Found>> {
    let ours = tagged.into_iter().filter(|(_, tags)| who.owns(|k| tags.get(k).map(String::as_str)));
    let lookups = ours.map(|(arn, tags)| async move {
        let address = tags.get(ADDRESS).cloned();
        let fields: Vec<&str> = arn.splitn(6, ':').collect();
        let (service, resource) = match fields.as_slice() {
            [_, _, service, _, _, resource] => (*service, *resource),
            _ => return Ok(None),
        };
        Ok::<_, ProviderError>(match service {
            "events" => match resource.strip_prefix("rule/") {
                Some(name) if !name.contains('/') => {
                    Some(found(kinds::EVENT_RULE, name, address, String::new(), vec![]))
                }
                _ => None,
            },
            "sqs" => {
                let r = send(cx, "sqs:GetQueueUrl", &[], || cx.sqs().get_queue_url().queue_name(resource).send()).await;
                let url = absent_if_gone(r)?.and_then(|o| o.queue_url);
                let address = address.or_else(|| Some(resource.to_string()));
                url.map(|url| found(kinds::SQS_QUEUE, &url, address, String::new(), vec![]))
            }
            "kms" => match resource.strip_prefix("key/") {
                Some(id) if live_customer_key(cx, id).await? => {
                    Some(found(kinds::KMS_KEY, id, address, String::new(), vec![]))
                }
                _ => None,
            },
            _ => None,
        })
    });
    let found: Vec<Option<Found>> =
        futures::stream::iter(lookups).buffer_unordered(PARALLEL_LOOKUPS).try_collect().await?;
    Ok(found.into_iter().flatten().collect())
}

/// Whether KMS key `id` is a customer key, not pending deletion (a key pending deletion keeps its tags).
async fn live_customer_key(cx: &Context, id: &str) -> Result<bool> {
    let r = send(cx, "kms:DescribeKey", &[], || cx.kms().describe_key().key_id(id).send()).await;
    let Some(meta) = absent_if_gone(r)?.and_then(|o| o.key_metadata) else { return Ok(false) };
    let customer = meta.key_manager() == Some(&aws_sdk_kms::types::KeyManagerType::Customer);
    let pending = matches!(
        meta.key_state(),
        Some(aws_sdk_kms::types::KeyState::PendingDeletion | aws_sdk_kms::types::KeyState::PendingReplicaDeletion)
    );
    Ok(customer && !pending)
}

async fn queues(cx: &Context, who: Identity<'_>) -> Result<Vec<Found>> {
    let urls = send_pages(
        cx,
        "sqs:ListQueues",
        |token| cx.sqs().list_queues().queue_name_prefix(who.name).set_next_token(token).send(),
        |page| (page.queue_urls().to_vec(), page.next_token().map(str::to_string)),
    );
    let listed = urls.await?.into_iter().map(|url| {
        let name = url.rsplit('/').next().map(str::to_string);
        Listed { id: url.clone(), tags_at: url, name }
    });
    owned_by_tags(who, kinds::SQS_QUEUE, listed, |url| async move {
        let r = send(cx, "sqs:ListQueueTags", &[], || cx.sqs().list_queue_tags().queue_url(&url).send()).await;
        Ok(absent_if_gone(r)?.map(|o| o.tags.unwrap_or_default().into_iter().collect()))
    })
    .await
}

async fn rules(cx: &Context, who: Identity<'_>) -> Result<Vec<Found>> {
    let rules = send_pages(
        cx,
        "events:ListRules",
        |token| cx.eventbridge().list_rules().name_prefix(who.name).set_next_token(token).send(),
        |page| {
            let rules = page.rules().iter().filter_map(|r| Some((r.name()?.to_string(), r.arn()?.to_string())));
            (rules.collect::<Vec<_>>(), page.next_token().map(str::to_string))
        },
    );
    let listed = rules.await?.into_iter().map(|(name, arn)| Listed { id: name, tags_at: arn, name: None });
    owned_by_tags(who, kinds::EVENT_RULE, listed, |arn| async move {
        let r = send(cx, "events:ListTagsForResource", &[], || {
            cx.eventbridge().list_tags_for_resource().resource_arn(&arn).send()
        })
        .await;
        Ok(absent_if_gone(r)?.map(|o| o.tags().iter().map(|t| (t.key().to_string(), t.value().to_string())).collect()))
    })
    .await
}

/// An item a List call named: its provider ID, what its tags are read by (a URL, an ARN), and the name to show
/// when it has no `kbp:address` tag.
struct Listed {
    id: String,
    tags_at: String,
    name: Option<String>,
}

/// Those of the `listed` items whose tags, read one after another with `tags_of` (`None` when the item is gone
/// since it was listed), say they are the stack's, as `kind`.
async fn owned_by_tags<F, Fut>(
    who: Identity<'_>,
    kind: &'static str,
    listed: impl Iterator<Item = Listed>,
    tags_of: F,
) -> Result<Vec<Found>>
where
    F: Fn(String) -> Fut,
    Fut: std::future::Future<Output = Result<Option<BTreeMap<String, String>>>>,
{
    let mut items = Vec::new();
    for item in listed {
        let Some(tags) = tags_of(item.tags_at).await? else { continue };
        if who.owns(|k| tags.get(k).map(String::as_str)) {
            let name = tags.get(ADDRESS).cloned().or(item.name);
            items.push(found(kind, &item.id, name, String::new(), Vec::new()));
        }
    }
    Ok(items)
}

/// Customer managed keys tagged for the stack, but not those already pending deletion.
async fn kms_keys(cx: &Context, who: Identity<'_>) -> Result<Vec<Found>> {
    let ids = crate::providers::kms::key::all_ids(cx).await?;
    let listed: Vec<Option<Found>> = futures::stream::iter(ids)
        .map(|id| async move {
            if !live_customer_key(cx, &id).await? {
                return Ok(None);
            }
            let r = send(cx, "kms:ListResourceTags", &[], || cx.kms().list_resource_tags().key_id(&id).send()).await;
            let Some(out) = absent_if_gone(r)? else { return Ok(None) };
            let tags: BTreeMap<&str, &str> = out.tags().iter().map(|t| (t.tag_key(), t.tag_value())).collect();
            let address = tags.get(ADDRESS).map(|a| a.to_string());
            Ok::<_, ProviderError>(
                who.owns(|k| tags.get(k).copied())
                    .then(|| found(kinds::KMS_KEY, &id, address, String::new(), Vec::new())),
            )
        })
        .buffer_unordered(PARALLEL_LOOKUPS)
        .try_collect()
        .await?;
    Ok(listed.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stack_is_its_name_and_its_id_when_both_sides_know_one() {
        let tags = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(key, _)| *key == k).map(|(_, v)| *v)
        };
        let by_name = Identity { name: "sbx", id: None };
        let by_id = Identity { name: "sbx", id: Some("L1") };
        assert!(by_name.owns(tags(&[(STACK, "sbx"), (STACK_ID, "L2")])));
        assert!(by_id.owns(tags(&[(STACK, "sbx"), (STACK_ID, "L1")])));
        assert!(!by_id.owns(tags(&[(STACK, "sbx"), (STACK_ID, "L2")])), "another stack of the same name");
        assert!(by_id.owns(tags(&[(STACK, "sbx")])), "made before stacks had IDs");
        assert!(!by_id.owns(tags(&[(STACK, "other"), (STACK_ID, "L1")])));
    }

    #[test]
    fn iam_names_come_from_arns() {
        assert_eq!(arn_name("arn:aws:iam::123456789012:role/sbx-cluster"), "sbx-cluster");
        assert_eq!(arn_name("arn:aws:kms:us-west-2:123456789012:key/abcd"), "abcd");
    }
}
