//! `aws_eks_cluster`: the EKS control plane. Created with access entries as its only authentication and without
//! EKS's implicit admin for the creator (kbp adds its own admin access entry, which state tracks), then waited
//! for until ACTIVE. The ID is the cluster name. What can change in place, and how, is in [`cluster_update`];
//! the name and the cluster IAM role cannot change: those force a new cluster.
//!
//! [`cluster_update`]: super::cluster_update

use async_trait::async_trait;
use aws_sdk_eks::types::{AuthenticationMode, CreateAccessConfigRequest, VpcConfigRequest};
use serde_json::{json, Value};

use super::cluster_spec::{enabled_log_types, secrets_encryption, secrets_key, Described, Spec};
use super::cluster_update::{self, logging};
use super::lifecycle::{Target, Tracked, Tracking};
use super::{send_naming_role, sort_sets, sorted, tagging};
use crate::graph::{kinds, Address, Attrs};
use crate::providers::attrs::absent_if_gone;
use crate::providers::ec2::object;
use crate::providers::preflight::{quick, read, Holder};
use crate::providers::send::send;
use crate::providers::spec;
use crate::providers::tagged::{arn_name, found, Search};
use crate::providers::tags::ADDRESS;
use crate::providers::wait::Budget;
use crate::providers::Found;
use crate::providers::{contract, contract::Constraint, contract::Rule};
use crate::providers::{
    Applied, Context, Descriptor, Desired, Observed, Provider, ProviderError, Result, Typical, WithoutState,
};
use std::sync::Arc;

pub(crate) struct Cluster;

const KIND: &str = kinds::EKS_CLUSTER;
/// Its typical times, which its waits expect too ([`Budget::expecting`]).
const TYPICAL: Typical = Typical { create: 600, update: 300, delete: 300 };
/// A new cluster takes about ten minutes to become ACTIVE; thirty leaves a margin.
const CREATE_BUDGET: Budget = Budget::long_minutes(30).expecting(TYPICAL.create);
/// A version upgrade takes up to about twenty-five minutes; a configuration update a few.
const UPDATE_BUDGET: Budget = Budget::long_minutes(45).expecting(TYPICAL.update);
/// Deleting takes a few minutes; within the same budget, the delete is retried while node groups still hold it.
const DELETE_BUDGET: Budget = Budget::long_minutes(20).expecting(TYPICAL.delete);
/// Lists AWS treats as sets.
const SETS: &[&str] = &["subnet_ids", "security_group_ids", "public_access_cidrs", "log_types"];

/// What AWS accepts of what this kind sends ([`contract`]).
const SENDS: &[Constraint] = &[
    Constraint::new(
        "name",
        Rule::Name {
            api: "EKS cluster name",
            max: 100,
            chars: contract::EKS_NAME,
            unique: contract::Unique::InAccount("EKS cluster"),
        },
    ),
    contract::tags_of("EKS cluster"),
];

#[async_trait]
impl Provider for Cluster {
    fn descriptor(&self) -> Descriptor {
        Descriptor::new(KIND, WithoutState::Tags, SENDS)
            .force_new(&["name", "role_arn"])
            .imported_by("its cluster name")
            .takes(TYPICAL)
    }

    async fn name_holder(&self, cx: &Context, name: &str, _attrs: &Attrs) -> Result<Holder> {
        let r = cx.eks().describe_cluster().name(name).customize().config_override(quick!(aws_sdk_eks));
        let found = read("eks:DescribeCluster", r.send().await)?;
        Ok(found.map_or(Holder::Nobody, |out| Holder::tagged(out.cluster.and_then(|c| c.tags).unwrap_or_default())))
    }

    /// The cluster named after the stack, if it is this stack's, naming the subnets, groups, role and key it uses.
    async fn tagged(&self, cx: &Context, search: &Search<'_>) -> Result<Vec<Found>> {
        let Some(cluster) = stack_cluster(cx, search).await?.as_ref().clone() else { return Ok(Vec::new()) };
        let name = cluster.tags().and_then(|t| t.get(ADDRESS)).cloned();
        let status = cluster.status().map(|s| s.as_str().to_string()).unwrap_or_default();
        let mut uses: Vec<String> = Vec::new();
        if let Some(vpc) = cluster.resources_vpc_config() {
            uses.extend(vpc.subnet_ids().iter().cloned());
            uses.extend(vpc.security_group_ids().iter().cloned());
        }
        uses.extend(cluster.role_arn().map(arn_name));
        let keys = cluster.encryption_config().iter().filter_map(|e| e.provider().and_then(|p| p.key_arn()));
        uses.extend(keys.map(arn_name));
        Ok(vec![found(KIND, search.stack(), name, status, uses)])
    }

    fn canonical(&self, desired: Attrs) -> Attrs {
        sort_sets(desired, SETS)
    }

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        let Some(c) = tracking(cx, id, CREATE_BUDGET).read().await? else { return Ok(None) };
        Ok(Some(Observed { attrs: attrs(&c), outputs: outputs(&c) }))
    }

    async fn find(&self, cx: &Context, desired: &Desired<'_>) -> Result<Option<String>> {
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        Ok(tracking(cx, &s.name, CREATE_BUDGET).find().await?.map(|_| s.name))
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        const OP: &str = "eks:CreateCluster";
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        let vpc = VpcConfigRequest::builder()
            .set_subnet_ids(Some(s.subnet_ids.clone()))
            .set_security_group_ids(Some(s.security_group_ids.clone()))
            .endpoint_public_access(s.endpoint_public_access)
            .endpoint_private_access(s.endpoint_private_access)
            .set_public_access_cidrs(Some(s.public_access_cidrs.clone()))
            .build();
        let access = CreateAccessConfigRequest::builder()
            .authentication_mode(AuthenticationMode::from(s.authentication_mode.as_str()))
            .bootstrap_cluster_creator_admin_permissions(false)
            .build();
        let logs = s.log_types.as_deref().filter(|t| !t.is_empty()).map(|t| logging(t, &[]));
        let encryption = s.encryption_key_arn.as_deref().map(|k| vec![secrets_encryption(k)]);
        let (tags, token) = (Some(tagging::on_create(desired)), desired.token());
        send_naming_role(cx, OP, &[], || {
            cx.eks()
                .create_cluster()
                .name(&s.name)
                .version(&s.version)
                .role_arn(&s.role_arn)
                .resources_vpc_config(vpc.clone())
                .access_config(access.clone())
                .set_logging(logs.clone())
                .set_encryption_config(encryption.clone())
                .set_tags(tags.clone())
                .set_client_request_token(token.clone())
                .send()
        })
        .await
        .map_err(|e| explain_taken(e, &s.name))?;
        let c = tracking(cx, &s.name, CREATE_BUDGET).wait_active(Some(desired.address)).await?;
        Ok(Applied { id: s.name, outputs: outputs(&c) })
    }

    async fn update(&self, cx: &Context, id: &str, _prior: &Attrs, desired: &Desired<'_>) -> Result<Applied> {
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        // EKS refuses a change while another update runs, so start from an ACTIVE cluster.
        let cluster = tracking(cx, id, UPDATE_BUDGET);
        let current = cluster.wait_active(Some(desired.address)).await?;
        cluster_update::apply(&cluster, desired.address, &current, &s).await?;
        let c = cluster.retag(&current, desired).await?;
        Ok(Applied { id: id.to_string(), outputs: outputs(&c) })
    }

    async fn wait_ready(&self, cx: &Context, address: &Address, id: &str) -> Result<()> {
        tracking(cx, id, CREATE_BUDGET).wait_active(Some(address)).await.map(drop)
    }

    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<()> {
        const OP: &str = "eks:DeleteCluster";
        let hint = format!(
            "the cluster still has node groups or Fargate profiles (perhaps not made by kbp), or an update running; \
             list them with `aws eks list-nodegroups --cluster-name {id}`, delete them, then run kbp again"
        );
        let request = || cx.eks().delete_cluster().name(id).send();
        tracking(cx, id, DELETE_BUDGET).delete(OP, Some(&hint), request).await
    }
}

#[async_trait]
impl Tracked for Described {
    const NOUN: &'static str = "cluster";
    const DESCRIBE: &'static str = "eks:DescribeCluster";
    const FAILURE_HINT: &'static str = "fix what AWS names (often the cluster role's trust policy or permissions, \
        or subnets in fewer than two availability zones), delete the failed cluster (`aws eks delete-cluster`), \
        then run kbp again";

    async fn describe(cx: &Context, at: Target<'_>) -> Result<Option<Self>> {
        let r = send(cx, Self::DESCRIBE, &[], || cx.eks().describe_cluster().name(at.cluster).send()).await;
        Ok(absent_if_gone(r)?.and_then(|out| out.cluster))
    }
}

/// The cluster `name`, whose waits may each take `budget`.
/// The cluster named after the stack `search` looks for, if its tags say it is that stack's: asked once per
/// search, by the cluster's kind and its node groups'.
pub(super) async fn stack_cluster(
    cx: &Context,
    search: &Search<'_>,
) -> Result<Arc<Option<aws_sdk_eks::types::Cluster>>> {
    search
        .shared("eks:DescribeCluster", || async {
            let stack = search.stack();
            let r = send(cx, "eks:DescribeCluster", &[], || cx.eks().describe_cluster().name(stack).send()).await;
            let cluster = absent_if_gone(r)?.and_then(|o| o.cluster);
            let ours = |c: &aws_sdk_eks::types::Cluster| {
                search.owner.owns(|k| c.tags().and_then(|t| t.get(k)).map(String::as_str))
            };
            Ok(cluster.filter(ours))
        })
        .await
}

pub(super) fn tracking<'a>(cx: &'a Context, name: &'a str, budget: Budget) -> Tracking<'a, Described> {
    Tracking::new(cx, Target::cluster(name), budget)
}

/// Names are deterministic, so a name already taken is a cluster kbp did not record.
fn explain_taken(e: ProviderError, name: &str) -> ProviderError {
    if e.is("ResourceInUseException") {
        e.with_hint(format!(
            "a cluster named `{name}` already exists (or is still being deleted) but is not in this stack's state; \
             if it carries this stack's kbp:stack tag, run kbp again to adopt it, otherwise delete or rename it"
        ))
    } else {
        e
    }
}

/// The attributes in the compiler's shape. The authentication mode is left out when EKS does not report it,
/// so the diff trusts the last applied value rather than planning a change it cannot check.
fn attrs(c: &Described) -> Attrs {
    let vpc = c.resources_vpc_config();
    let list =
        |f: fn(&aws_sdk_eks::types::VpcConfigResponse) -> &[String]| vpc.map(|v| sorted(f(v))).unwrap_or_default();
    let mut a = object(json!({
        "name": c.name(),
        "version": c.version(),
        "role_arn": c.role_arn(),
        "subnet_ids": list(|v| v.subnet_ids()),
        "security_group_ids": list(|v| v.security_group_ids()),
        "endpoint_public_access": vpc.map(|v| v.endpoint_public_access()),
        "endpoint_private_access": vpc.map(|v| v.endpoint_private_access()),
        "public_access_cidrs": list(|v| v.public_access_cidrs()),
        "log_types": enabled_log_types(c),
        "encryption_key_arn": secrets_key(c),
        "tags": tagging::attr(c.tags()),
    }));
    if let Some(mode) = c.access_config().and_then(|a| a.authentication_mode()) {
        a.insert("authentication_mode".to_string(), Value::String(mode.as_str().to_string()));
    }
    a
}

fn outputs(c: &Described) -> Attrs {
    object(json!({
        "id": c.name(),
        "name": c.name(),
        "arn": c.arn(),
        "endpoint": c.endpoint(),
        "certificate_authority_data": c.certificate_authority().and_then(|ca| ca.data()),
        "oidc_issuer": c.identity().and_then(|i| i.oidc()).and_then(|o| o.issuer()),
        "cluster_security_group_id": c.resources_vpc_config().and_then(|v| v.cluster_security_group_id()),
        "platform_version": c.platform_version(),
        "version": c.version(),
    }))
}

/// The Kubernetes versions EKS offers for new clusters in the region, newest first as EKS lists them; for
/// preflight, under its short timeout.
pub(crate) async fn offered_versions(cx: &Context) -> Result<Vec<String>> {
    crate::providers::send::all_pages(|token| async move {
        let r = cx.eks().describe_cluster_versions().set_next_token(token).customize();
        let page = r.config_override(quick!(aws_sdk_eks)).send().await;
        let page = page.map_err(|e| ProviderError::from_sdk("eks:DescribeClusterVersions", e))?;
        let unsupported = |s: Option<&aws_sdk_eks::types::VersionStatus>| {
            matches!(s, Some(aws_sdk_eks::types::VersionStatus::Unsupported))
        };
        let versions = page
            .cluster_versions()
            .iter()
            .filter(|v| !unsupported(v.version_status()))
            .filter_map(|v| v.cluster_version().map(str::to_string))
            .collect();
        Ok((versions, page.next_token().map(str::to_string)))
    })
    .await
}

/// When cluster `name` was created, if it exists and says.
pub(crate) async fn created_at(cx: &Context, name: &str) -> Result<Option<aws_smithy_types::DateTime>> {
    let r = send(cx, "eks:DescribeCluster", &[], || cx.eks().describe_cluster().name(name).send()).await;
    Ok(absent_if_gone(r)?.and_then(|o| o.cluster).and_then(|c| c.created_at))
}
