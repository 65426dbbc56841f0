//! `aws_eks_pod_identity_association`: gives a Kubernetes service account (Karpenter's) an IAM role through EKS
//! Pod Identity. EKS names an association by an ID it assigns, so the ID is `<cluster>:<association ID>`, and an
//! interrupted create is found again by its namespace and service account (EKS allows one association per pair).
//! Only the role can change in place; EKS applies it to pods started afterwards.

use async_trait::async_trait;
use serde_json::json;

use super::{join_id, missing, send_naming_role, split_id, tagging, vanished};
use crate::graph::{kinds, Attrs};
use crate::providers::attrs::absent_if_gone;
use crate::providers::ec2::object;
use crate::providers::send::{remove, send};
use crate::providers::spec;
use crate::providers::{contract, contract::Constraint};
use crate::providers::{
    Applied, Context, Descriptor, Desired, Observed, Provider, ProviderError, Result, WithoutState,
};

pub(crate) struct PodIdentityAssociation;

const KIND: &str = kinds::EKS_POD_IDENTITY_ASSOCIATION;

/// The attributes the compiler emits, references resolved ([`crate::graph::kinds`]).
type Spec = crate::graph::kinds::eks_pod_identity_association::PodIdentityAssociation<String>;

/// What AWS accepts of what this kind sends ([`contract`]).
const SENDS: &[Constraint] = &[contract::tags_of("EKS Pod Identity association")];

#[async_trait]
impl Provider for PodIdentityAssociation {
    fn descriptor(&self) -> Descriptor {
        Descriptor::new(KIND, WithoutState::GoesWith(kinds::EKS_CLUSTER), SENDS)
            .force_new(&["cluster_name", "namespace", "service_account"])
            .imported_by("`<cluster name>:<association ID>`, such as `demo:a-…`")
    }

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        let (cluster, association_id) = split_id(KIND, id, "association ID")?;
        let Some(a) = describe(cx, cluster, association_id).await? else { return Ok(None) };
        let attrs = json!({
            "cluster_name": a.cluster_name(),
            "namespace": a.namespace(),
            "service_account": a.service_account(),
            "role_arn": a.role_arn(),
            "tags": tagging::attr(a.tags()),
        });
        Ok(Some(Observed { attrs: object(attrs), outputs: outputs(id, &a) }))
    }

    async fn find(&self, cx: &Context, desired: &Desired<'_>) -> Result<Option<String>> {
        const OP: &str = "eks:ListPodIdentityAssociations";
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        let r = send(cx, OP, &[], || async {
            let list = cx.eks().list_pod_identity_associations().cluster_name(&s.cluster_name);
            let list = list.namespace(&s.namespace).service_account(&s.service_account);
            list.into_paginator().items().send().collect::<Result<Vec<_>, _>>().await
        })
        .await;
        // The list has no tags: each candidate is described to see whether it is this stack's.
        for summary in absent_if_gone(r)?.unwrap_or_default() {
            let Some(association_id) = summary.association_id() else { continue };
            let found = describe(cx, &s.cluster_name, association_id).await?;
            if found.is_some_and(|a| tagging::owned_by(a.tags(), &cx.stack)) {
                return Ok(Some(join_id(&s.cluster_name, association_id)));
            }
        }
        Ok(None)
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        const OP: &str = "eks:CreatePodIdentityAssociation";
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        let (tags, token) = (Some(tagging::on_create(desired)), desired.token());
        let created = send_naming_role(cx, OP, &[], || {
            cx.eks()
                .create_pod_identity_association()
                .cluster_name(&s.cluster_name)
                .namespace(&s.namespace)
                .service_account(&s.service_account)
                .role_arn(&s.role_arn)
                .set_tags(tags.clone())
                .set_client_request_token(token.clone())
                .send()
        })
        .await
        .map_err(|e| explain_taken(e, &s))?;
        let a = created.association.ok_or_else(|| missing(OP, "association"))?;
        let association_id = a.association_id().ok_or_else(|| missing(OP, "association ID"))?;
        let id = join_id(&s.cluster_name, association_id);
        Ok(Applied { outputs: outputs(&id, &a), id })
    }

    async fn update(&self, cx: &Context, id: &str, _prior: &Attrs, desired: &Desired<'_>) -> Result<Applied> {
        const OP: &str = "eks:UpdatePodIdentityAssociation";
        let (cluster, association_id) = split_id(KIND, id, "association ID")?;
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        let what = format!("Pod Identity association {association_id}");
        let mut a = describe(cx, cluster, association_id)
            .await?
            .ok_or_else(|| vanished("eks:DescribePodIdentityAssociation", &what))?;
        if a.role_arn() != Some(s.role_arn.as_str()) {
            let updated = send_naming_role(cx, OP, &[], || {
                let call = cx.eks().update_pod_identity_association().cluster_name(cluster);
                call.association_id(association_id).role_arn(&s.role_arn).send()
            })
            .await?;
            let tags = a.tags.clone();
            a = updated.association.ok_or_else(|| missing(OP, "association"))?;
            // Tags are what reconcile compares; keep the described ones if the answer leaves them out.
            if a.tags.is_none() {
                a.tags = tags;
            }
        }
        let arn = a.association_arn().ok_or_else(|| missing(OP, "association ARN"))?;
        tagging::reconcile(cx, arn, a.tags(), desired).await?;
        Ok(Applied { id: id.to_string(), outputs: outputs(id, &a) })
    }

    /// Associations have no status: once the delete returns, new pods get no credentials from it.
    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<()> {
        let (cluster, association_id) = split_id(KIND, id, "association ID")?;
        remove(cx, "eks:DeletePodIdentityAssociation", &[], || {
            cx.eks().delete_pod_identity_association().cluster_name(cluster).association_id(association_id).send()
        })
        .await
    }
}

type Described = aws_sdk_eks::types::PodIdentityAssociation;

async fn describe(cx: &Context, cluster: &str, association_id: &str) -> Result<Option<Described>> {
    let r = send(cx, "eks:DescribePodIdentityAssociation", &[], || {
        cx.eks().describe_pod_identity_association().cluster_name(cluster).association_id(association_id).send()
    })
    .await;
    Ok(absent_if_gone(r)?.and_then(|out| out.association))
}

fn explain_taken(e: ProviderError, s: &Spec) -> ProviderError {
    if e.is("ResourceInUseException") {
        e.with_hint(format!(
            "service account {}/{} in cluster `{}` already has a Pod Identity association that is not in this \
             stack's state; if it carries this stack's kbp:stack tag, run kbp again to adopt it, otherwise delete it \
             with `aws eks delete-pod-identity-association`",
            s.namespace, s.service_account, s.cluster_name
        ))
    } else {
        e
    }
}

fn outputs(id: &str, a: &Described) -> Attrs {
    object(json!({ "id": id, "arn": a.association_arn(), "association_id": a.association_id() }))
}
