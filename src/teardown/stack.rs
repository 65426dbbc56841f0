//! Finding a stack by its tags alone (`kbp destroy --from-tags`).
//! EC2 resources are found with one tag-filtered Describe call per type, which also says whether each still
//! exists (tags can outlive a terminated instance or a deleted NAT gateway); IAM is global and lists no tags, so
//! each role, policy, OIDC provider and instance profile's tags are read, concurrently.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;

use aws_sdk_ec2::types::{InstanceStateName, NatGatewayState};
use futures::{StreamExt, TryStreamExt};

use super::leftovers::{describe_instances, network_interfaces, security_groups};
use super::{ec2_name, ec2_tag, filter, Inventory, Item, Kind};
use crate::providers::attrs::absent_if_gone;
use crate::providers::send::{all_pages, send};
use crate::providers::tags::{ADDRESS, STACK};
use crate::providers::{Context, ProviderError};

pub(super) const PARALLEL_LOOKUPS: usize = 8;
/// Service-linked roles (the account-wide Spot role among them) live under this path and are never a
/// stack's to delete.
const SERVICE_ROLE_PATH: &str = "/aws-service-role/";

/// Everything tagged `kbp:stack=<stack>` in the region (and in IAM, which is global); only reads.
pub async fn stack(cx: &Context, stack: &str) -> Result<Inventory, ProviderError> {
    let (ec2, eks, iam, others) =
        futures::try_join!(ec2_items(cx, stack), eks_items(cx, stack), iam_items(cx, stack), other_items(cx, stack))?;
    let mut inv = Inventory::default();
    for item in ec2.into_iter().chain(eks).chain(iam).chain(others) {
        inv.push(item);
    }
    inv.sort();
    Ok(inv)
}

async fn ec2_items(cx: &Context, stack: &str) -> Result<Vec<Item>, ProviderError> {
    let tagged = filter(&format!("tag:{STACK}"), stack);
    let f = || Some(vec![tagged.clone()]);
    // The tag is checked again on what comes back: not every EC2 API implementation applies tag filters to
    // every Describe call (DescribeNatGateways in some), and a filter ignored must not widen the stack.
    let ours = |tags: &[aws_sdk_ec2::types::Tag]| ec2_tag(tags, STACK) == Some(stack);
    let mut items = Vec::new();

    let vpcs = send(cx, "ec2:DescribeVpcs", &[], || cx.ec2().describe_vpcs().set_filters(f()).send()).await?;
    let vpc_ids: Vec<String> =
        vpcs.vpcs().iter().filter(|v| ours(v.tags())).filter_map(|v| v.vpc_id().map(str::to_string)).collect();
    for v in vpcs.vpcs().iter().filter(|v| ours(v.tags())) {
        items.push(Item::new(Kind::Vpc, v.vpc_id().unwrap_or_default(), ec2_name(v.tags()), ""));
    }
    let subnets = send(cx, "ec2:DescribeSubnets", &[], || cx.ec2().describe_subnets().set_filters(f()).send()).await?;
    for s in subnets.subnets().iter().filter(|s| ours(s.tags())) {
        let detail = format!("in {}", s.vpc_id().unwrap_or("?"));
        items.push(Item::new(Kind::Subnet, s.subnet_id().unwrap_or_default(), ec2_name(s.tags()), detail));
    }
    let igws =
        send(cx, "ec2:DescribeInternetGateways", &[], || cx.ec2().describe_internet_gateways().set_filters(f()).send())
            .await?;
    for g in igws.internet_gateways().iter().filter(|g| ours(g.tags())) {
        let vpcs: Vec<&str> = g.attachments().iter().filter_map(|a| a.vpc_id()).collect();
        let detail = if vpcs.is_empty() { String::new() } else { format!("attached to {}", vpcs.join(", ")) };
        items.push(Item::new(
            Kind::InternetGateway,
            g.internet_gateway_id().unwrap_or_default(),
            ec2_name(g.tags()),
            detail,
        ));
    }
    let nats =
        send(cx, "ec2:DescribeNatGateways", &[], || cx.ec2().describe_nat_gateways().set_filter(f()).send()).await?;
    for n in nats.nat_gateways().iter().filter(|n| ours(n.tags())) {
        if matches!(n.state(), Some(NatGatewayState::Deleted | NatGatewayState::Failed)) {
            continue;
        }
        let detail = format!("in {}", n.subnet_id().unwrap_or("?"));
        items.push(Item::new(Kind::NatGateway, n.nat_gateway_id().unwrap_or_default(), ec2_name(n.tags()), detail));
    }
    let addresses =
        send(cx, "ec2:DescribeAddresses", &[], || cx.ec2().describe_addresses().set_filters(f()).send()).await?;
    for a in addresses.addresses().iter().filter(|a| ours(a.tags())) {
        let Some(id) = a.allocation_id() else { continue };
        items.push(Item::new(Kind::Address, id, ec2_name(a.tags()), a.public_ip().unwrap_or_default()));
    }
    let tables =
        send(cx, "ec2:DescribeRouteTables", &[], || cx.ec2().describe_route_tables().set_filters(f()).send()).await?;
    for t in tables.route_tables().iter().filter(|t| ours(t.tags())) {
        let detail = format!("in {}", t.vpc_id().unwrap_or("?"));
        items.push(Item::new(Kind::RouteTable, t.route_table_id().unwrap_or_default(), ec2_name(t.tags()), detail));
    }
    for i in describe_instances(cx, vec![tagged.clone()]).await?.iter().filter(|i| ours(i.tags())) {
        if matches!(i.state().and_then(|s| s.name()), Some(InstanceStateName::Terminated)) {
            continue;
        }
        items.push(Item::new(Kind::Instance, i.instance_id().unwrap_or_default(), ec2_name(i.tags()), ""));
    }
    let lts =
        send(cx, "ec2:DescribeLaunchTemplates", &[], || cx.ec2().describe_launch_templates().set_filters(f()).send())
            .await?;
    for t in lts.launch_templates().iter().filter(|t| ours(t.tags())) {
        let name = t.launch_template_name().map(str::to_string);
        items.push(Item::new(Kind::LaunchTemplate, t.launch_template_id().unwrap_or_default(), name, ""));
    }
    // Security groups and ENIs are looked for in the stack's VPCs (a group kbp made outside them would be a
    // bug), then matched on the tag: fewer calls than another tag filter per type, and the same answer.
    for sg in security_groups(cx, &vpc_ids).await? {
        if ec2_tag(sg.tags(), STACK) == Some(stack) && sg.group_name() != Some("default") {
            let name = ec2_tag(sg.tags(), ADDRESS).or(sg.group_name()).map(str::to_string);
            items.push(Item::new(Kind::SecurityGroup, sg.group_id().unwrap_or_default(), name, ""));
        }
    }
    for eni in network_interfaces(cx, &vpc_ids).await? {
        if ec2_tag(eni.tag_set(), STACK) == Some(stack) {
            let detail = eni.status().map(|s| s.as_str().to_string()).unwrap_or_default();
            items.push(Item::new(
                Kind::NetworkInterface,
                eni.network_interface_id().unwrap_or_default(),
                ec2_name(eni.tag_set()),
                detail,
            ));
        }
    }
    items.retain(|i| !i.id.is_empty());
    Ok(items)
}

/// The cluster named `stack` if it is this stack's, and its node groups (their ID is `<cluster>:<name>`).
async fn eks_items(cx: &Context, stack: &str) -> Result<Vec<Item>, ProviderError> {
    let r = send(cx, "eks:DescribeCluster", &[], || cx.eks().describe_cluster().name(stack).send()).await;
    let Some(cluster) = absent_if_gone(r)?.and_then(|o| o.cluster) else { return Ok(Vec::new()) };
    let tags = cluster.tags();
    if tags.and_then(|t| t.get(STACK)).map(String::as_str) != Some(stack) {
        return Ok(Vec::new());
    }
    let name = tags.and_then(|t| t.get(ADDRESS)).cloned();
    let status = cluster.status().map(|s| s.as_str().to_string()).unwrap_or_default();
    let mut items = vec![Item::new(Kind::EksCluster, stack, name, status)];
    let mut token: Option<String> = None;
    loop {
        let r = send(cx, "eks:ListNodegroups", &[], || {
            cx.eks().list_nodegroups().cluster_name(stack).set_next_token(token.clone()).send()
        })
        .await;
        let Some(page) = absent_if_gone(r)? else { break };
        for ng in page.nodegroups() {
            items.push(Item::new(Kind::EksNodegroup, format!("{stack}:{ng}"), Some(ng.clone()), ""));
        }
        token = page.next_token().filter(|t| !t.is_empty()).map(str::to_string);
        if token.is_none() {
            break;
        }
    }
    Ok(items)
}

/// IAM roles (but service-linked ones), customer managed policies, OIDC providers and instance profiles tagged
/// `kbp:stack=<stack>`.
async fn iam_items(cx: &Context, stack: &str) -> Result<Vec<Item>, ProviderError> {
    let iam = cx.iam();
    let mut candidates: Vec<(Kind, String)> = Vec::new();
    let roles = all_pages(|marker| async move {
        let page = send(cx, "iam:ListRoles", &[], || iam.list_roles().set_marker(marker.clone()).send()).await?;
        let next = page.marker().filter(|_| page.is_truncated()).map(str::to_string);
        Ok((page.roles().to_vec(), next))
    })
    .await?;
    for r in roles.iter().filter(|r| !r.path().starts_with(SERVICE_ROLE_PATH)) {
        candidates.push((Kind::IamRole, r.role_name().to_string()));
    }
    let policies = all_pages(|marker| async move {
        let page = send(cx, "iam:ListPolicies", &[], || {
            iam.list_policies().scope(aws_sdk_iam::types::PolicyScopeType::Local).set_marker(marker.clone()).send()
        })
        .await?;
        let next = page.marker().filter(|_| page.is_truncated()).map(str::to_string);
        Ok((page.policies().to_vec(), next))
    })
    .await?;
    candidates.extend(policies.iter().filter_map(|p| Some((Kind::IamPolicy, p.arn()?.to_string()))));
    let oidc = send(cx, "iam:ListOpenIDConnectProviders", &[], || iam.list_open_id_connect_providers().send()).await?;
    candidates.extend(
        oidc.open_id_connect_provider_list().iter().filter_map(|p| Some((Kind::OidcProvider, p.arn()?.to_string()))),
    );
    candidates.extend(all_instance_profiles(cx).await?.into_iter().map(|n| (Kind::InstanceProfile, n)));

    let found: Vec<Option<Item>> = futures::stream::iter(candidates)
        .map(|(kind, id)| async move {
            let tags = match kind {
                Kind::IamRole => {
                    iam_tags(
                        cx,
                        "iam:ListRoleTags",
                        || iam.list_role_tags().role_name(&id).send(),
                        |o| o.tags().to_vec(),
                    )
                    .await?
                }
                Kind::IamPolicy => {
                    iam_tags(
                        cx,
                        "iam:ListPolicyTags",
                        || iam.list_policy_tags().policy_arn(&id).send(),
                        |o| o.tags().to_vec(),
                    )
                    .await?
                }
                Kind::OidcProvider => {
                    iam_tags(
                        cx,
                        "iam:ListOpenIDConnectProviderTags",
                        || iam.list_open_id_connect_provider_tags().open_id_connect_provider_arn(&id).send(),
                        |o| o.tags().to_vec(),
                    )
                    .await?
                }
                _ => instance_profile_tags(cx, &id).await?,
            };
            Ok::<_, ProviderError>(
                (tags.get(STACK).map(String::as_str) == Some(stack))
                    .then(|| Item::new(kind, id.clone(), tags.get(ADDRESS).cloned(), "")),
            )
        })
        .buffer_unordered(PARALLEL_LOOKUPS)
        .try_collect()
        .await?;
    Ok(found.into_iter().flatten().collect())
}

/// An IAM entity's tags as a map; empty when the entity vanished since it was listed.
async fn iam_tags<O, E, F, Fut>(
    cx: &Context,
    op: &str,
    request: F,
    tags: impl Fn(&O) -> Vec<aws_sdk_iam::types::Tag>,
) -> Result<HashMap<String, String>, ProviderError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<O, aws_sdk_iam::error::SdkError<E>>>,
    E: aws_sdk_iam::error::ProvideErrorMetadata + std::error::Error + 'static,
{
    let out = absent_if_gone(send(cx, op, &[], request).await)?;
    Ok(out.map(|o| tags(&o).into_iter().map(|t| (t.key, t.value)).collect()).unwrap_or_default())
}

pub(super) async fn instance_profile_tags(cx: &Context, name: &str) -> Result<HashMap<String, String>, ProviderError> {
    let iam = cx.iam();
    iam_tags(
        cx,
        "iam:ListInstanceProfileTags",
        || iam.list_instance_profile_tags().instance_profile_name(name).send(),
        |o| o.tags().to_vec(),
    )
    .await
}

pub(super) async fn all_instance_profiles(cx: &Context) -> Result<Vec<String>, ProviderError> {
    all_pages(|marker| async move {
        let page = send(cx, "iam:ListInstanceProfiles", &[], || {
            cx.iam().list_instance_profiles().set_marker(marker.clone()).send()
        })
        .await?;
        let names = page.instance_profiles().iter().map(|p| p.instance_profile_name().to_string()).collect();
        Ok((names, page.marker().filter(|_| page.is_truncated()).map(str::to_string)))
    })
    .await
}

/// SQS queues, EventBridge rules (kbp names both after the stack) and KMS keys tagged for the stack.
async fn other_items(cx: &Context, stack: &str) -> Result<Vec<Item>, ProviderError> {
    let (queues, rules, keys) = futures::try_join!(queues(cx, stack), rules(cx, stack), kms_keys(cx, stack))?;
    Ok(queues.into_iter().chain(rules).chain(keys).collect())
}

async fn queues(cx: &Context, stack: &str) -> Result<Vec<Item>, ProviderError> {
    let urls = all_pages(|token| async move {
        let page = send(cx, "sqs:ListQueues", &[], || {
            cx.sqs().list_queues().queue_name_prefix(stack).set_next_token(token.clone()).send()
        })
        .await?;
        Ok((page.queue_urls().to_vec(), page.next_token().map(str::to_string)))
    })
    .await?;
    let mut items = Vec::new();
    for url in urls {
        let r = send(cx, "sqs:ListQueueTags", &[], || cx.sqs().list_queue_tags().queue_url(&url).send()).await;
        let Some(tags) = absent_if_gone(r)?.and_then(|o| o.tags) else { continue };
        if tags.get(STACK).map(String::as_str) == Some(stack) {
            let name = url.rsplit('/').next().map(str::to_string);
            items.push(Item::new(Kind::SqsQueue, url.clone(), tags.get(ADDRESS).cloned().or(name), ""));
        }
    }
    Ok(items)
}

async fn rules(cx: &Context, stack: &str) -> Result<Vec<Item>, ProviderError> {
    let rules = all_pages(|token| async move {
        let page = send(cx, "events:ListRules", &[], || {
            cx.eventbridge().list_rules().name_prefix(stack).set_next_token(token.clone()).send()
        })
        .await?;
        let rules = page.rules().iter().filter_map(|r| Some((r.name()?.to_string(), r.arn()?.to_string()))).collect();
        Ok((rules, page.next_token().map(str::to_string)))
    })
    .await?;
    let mut items = Vec::new();
    for (name, arn) in rules {
        let r = send(cx, "events:ListTagsForResource", &[], || {
            cx.eventbridge().list_tags_for_resource().resource_arn(&arn).send()
        })
        .await;
        let Some(out) = absent_if_gone(r)? else { continue };
        let tags: BTreeMap<&str, &str> = out.tags().iter().map(|t| (t.key(), t.value())).collect();
        if tags.get(STACK) == Some(&stack) {
            items.push(Item::new(Kind::EventRule, name, tags.get(ADDRESS).map(|a| a.to_string()), ""));
        }
    }
    Ok(items)
}

/// Customer managed keys tagged for the stack, but not those already pending deletion.
async fn kms_keys(cx: &Context, stack: &str) -> Result<Vec<Item>, ProviderError> {
    let mut ids = Vec::new();
    let mut marker: Option<String> = None;
    loop {
        let page = send(cx, "kms:ListKeys", &[], || cx.kms().list_keys().set_marker(marker.clone()).send()).await?;
        ids.extend(page.keys().iter().filter_map(|k| k.key_id().map(str::to_string)));
        marker = page.next_marker().filter(|_| page.truncated()).map(str::to_string);
        if marker.is_none() {
            break;
        }
    }
    let found: Vec<Option<Item>> = futures::stream::iter(ids)
        .map(|id| async move {
            let r = send(cx, "kms:DescribeKey", &[], || cx.kms().describe_key().key_id(&id).send()).await;
            let Some(meta) = absent_if_gone(r)?.and_then(|o| o.key_metadata) else { return Ok(None) };
            let customer = meta.key_manager() == Some(&aws_sdk_kms::types::KeyManagerType::Customer);
            let pending = matches!(
                meta.key_state(),
                Some(
                    aws_sdk_kms::types::KeyState::PendingDeletion
                        | aws_sdk_kms::types::KeyState::PendingReplicaDeletion
                )
            );
            if !customer || pending {
                return Ok(None);
            }
            let r = send(cx, "kms:ListResourceTags", &[], || cx.kms().list_resource_tags().key_id(&id).send()).await;
            let Some(out) = absent_if_gone(r)? else { return Ok(None) };
            let tags: BTreeMap<&str, &str> = out.tags().iter().map(|t| (t.tag_key(), t.tag_value())).collect();
            Ok::<_, ProviderError>(
                (tags.get(STACK) == Some(&stack))
                    .then(|| Item::new(Kind::KmsKey, id.clone(), tags.get(ADDRESS).map(|a| a.to_string()), "")),
            )
        })
        .buffer_unordered(PARALLEL_LOOKUPS)
        .try_collect()
        .await?;
    Ok(found.into_iter().flatten().collect())
}
