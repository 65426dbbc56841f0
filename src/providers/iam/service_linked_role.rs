//! `aws_iam_service_linked_role`: a role an AWS service uses on the account's behalf, such as the EC2 Spot role
//! Karpenter needs to launch Spot instances. It exists once per account, may predate kbp, and other stacks may
//! rely on it, so kbp adopts an existing one and never deletes it. The ID is the role name.

use async_trait::async_trait;
use serde_json::json;

use super::common::{absent_if_gone, object, send, vanished, Entity};
use super::role::Described as Role;
use crate::graph::{kinds, Attrs};
use crate::providers::preflight::{quick, read};
use crate::providers::spec;
use crate::providers::{
    Applied, Context, Descriptor, Desired, Observed, Provider, ProviderError, Result, WithoutState,
};

const KIND: &str = kinds::IAM_SERVICE_LINKED_ROLE;

/// The names AWS gives the service-linked roles kbp may ask for; they do not follow one rule
/// (`spot.amazonaws.com` → `AWSServiceRoleForEC2Spot`).
const CONVENTIONAL_NAMES: &[(&str, &str)] = &[
    ("spot.amazonaws.com", "AWSServiceRoleForEC2Spot"),
    ("spotfleet.amazonaws.com", "AWSServiceRoleForEC2SpotFleet"),
    ("eks.amazonaws.com", "AWSServiceRoleForAmazonEKS"),
    ("eks-nodegroup.amazonaws.com", "AWSServiceRoleForAmazonEKSNodegroup"),
    ("autoscaling.amazonaws.com", "AWSServiceRoleForAutoScaling"),
];

/// The provider of `aws_iam_service_linked_role`.
pub struct ServiceLinkedRole;

/// The attributes the compiler emits ([`crate::graph::kinds`]).
type Spec = crate::graph::kinds::iam_service_linked_role::ServiceLinkedRole;

#[async_trait]
impl Provider for ServiceLinkedRole {
    fn descriptor(&self) -> Descriptor {
        Descriptor::new(KIND, WithoutState::Kept("account-wide; kbp never deletes it"), &[])
            .force_new(&["aws_service_name"])
    }

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        let Some(role) = Role::get(cx, id).await? else { return Ok(None) };
        let mut attrs = Attrs::new();
        if let Some(service) = service_of_path(role.path()) {
            attrs.insert("aws_service_name".to_string(), json!(service));
        }
        Ok(Some(Observed { attrs, outputs: applied(&role).outputs }))
    }

    async fn find(&self, cx: &Context, desired: &Desired<'_>) -> Result<Option<String>> {
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        Ok(existing(cx, &s.aws_service_name).await?.map(|r| r.role_name().to_string()))
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        const OP: &str = "iam:CreateServiceLinkedRole";
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        let service = s.aws_service_name.as_str();
        if let Some(role) = existing(cx, service).await? {
            return Ok(applied(&role));
        }
        let created = send(cx, OP, &[], || cx.iam().create_service_linked_role().aws_service_name(service).send());
        match created.await {
            Ok(out) => out.role.map(|r| applied(&r)).ok_or_else(|| ProviderError::new(OP, "", "IAM returned no role")),
            // Made meanwhile by someone else, or invisible to the lookup above (which may lack permission).
            Err(e) if already_exists(&e) => match existing(cx, service).await? {
                Some(role) => Ok(applied(&role)),
                None => Err(e.with_hint(format!(
                    "the service-linked role for {service} exists but kbp cannot read it; grant iam:GetRole and \
                     iam:ListRoles"
                ))),
            },
            Err(e) if not_permitted(&e) => Err(e.with_hint(permission_hint(service))),
            Err(e) => Err(e),
        }
    }

    /// Its only attribute forces a replacement; there is nothing to change in place.
    async fn update(&self, cx: &Context, id: &str, _prior: &Attrs, _desired: &Desired<'_>) -> Result<Applied> {
        let role = Role::get(cx, id).await?.ok_or_else(|| vanished(Role::GET, "service-linked role", id))?;
        Ok(applied(&role))
    }

    /// Never deleted: it is account-wide and other stacks or tools may depend on it.
    async fn delete(&self, _cx: &Context, id: &str, _prior: &Attrs) -> Result<()> {
        tracing::debug!(role = id, "leaving the service-linked role in place");
        Ok(())
    }
}

/// The service-linked role of `service` if the account has one: by its conventional name, else by the path
/// every service-linked role lives under. A lookup the caller may not make counts as "not found", so that
/// create gets to try (and explain) instead.
async fn existing(cx: &Context, service: &str) -> Result<Option<Role>> {
    if let Some((_, name)) = CONVENTIONAL_NAMES.iter().find(|(s, _)| *s == service) {
        match Role::get(cx, name).await {
            Ok(Some(role)) => return Ok(Some(role)),
            Ok(None) => {}
            Err(e) if not_permitted(&e) => {}
            Err(e) => return Err(e),
        }
    }
    let listed = send(cx, "iam:ListRoles", &[], || async {
        let prefix = format!("/aws-service-role/{service}/");
        let pages = cx.iam().list_roles().path_prefix(prefix).into_paginator().items().send();
        pages.collect::<Result<Vec<_>, _>>().await
    })
    .await;
    match absent_if_gone(listed) {
        Ok(roles) => Ok(roles.and_then(|r| r.into_iter().next())),
        Err(e) if not_permitted(&e) => Ok(None),
        Err(e) => Err(e),
    }
}

/// IAM says `InvalidInput: Service role name … has been taken in this account`; some implementations say
/// `EntityAlreadyExists`.
fn already_exists(e: &ProviderError) -> bool {
    e.is("EntityAlreadyExists") || (e.is("InvalidInput") && e.message.contains("has been taken"))
}

/// IAM's AccessDenied, or EC2's spelling of it when it would have created the Spot role itself on launch.
fn not_permitted(e: &ProviderError) -> bool {
    e.is("AccessDenied") || e.is("AccessDeniedException") || e.is("AuthFailure.ServiceLinkedRoleCreationNotPermitted")
}

fn permission_hint(service: &str) -> String {
    let command = format!("`aws iam create-service-linked-role --aws-service-name {service}`");
    if service == "spot.amazonaws.com" {
        format!(
            "the EC2 Spot service-linked role `AWSServiceRoleForEC2Spot` is needed once per account before Spot \
             instances can launch, and this identity may not create it: ask an account admin to run {command} \
             once, or grant kbp's identity iam:CreateServiceLinkedRole"
        )
    } else {
        format!(
            "the service-linked role for {service} is needed once per account and this identity may not create \
             it: ask an account admin to run {command} once, or grant kbp's identity iam:CreateServiceLinkedRole"
        )
    }
}

/// `/aws-service-role/spot.amazonaws.com/` → `spot.amazonaws.com`.
fn service_of_path(path: &str) -> Option<&str> {
    path.strip_prefix("/aws-service-role/")?.strip_suffix('/').filter(|s| !s.is_empty() && !s.contains('/'))
}

fn applied(role: &Role) -> Applied {
    let name = role.role_name();
    Applied { id: name.to_string(), outputs: object(json!({"id": name, "name": name, "arn": role.arn()})) }
}

/// Whether the account has the IAM role `name` (a service-linked role's, such as `AWSServiceRoleForEC2Spot`);
/// for preflight, under its short timeout.
pub(crate) async fn exists(cx: &Context, name: &str) -> Result<bool> {
    let r = cx.iam().get_role().role_name(name).customize().config_override(quick!(aws_sdk_iam)).send().await;
    Ok(read("iam:GetRole", r)?.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_service_from_the_role_path() {
        assert_eq!(service_of_path("/aws-service-role/spot.amazonaws.com/"), Some("spot.amazonaws.com"));
        assert_eq!(service_of_path("/"), None);
        assert_eq!(service_of_path("/aws-service-role/"), None);
    }

    #[test]
    fn recognises_taken_names_and_missing_permissions() {
        let taken = ProviderError::new(
            "iam:CreateServiceLinkedRole",
            "InvalidInput",
            "Service role name AWSServiceRoleForEC2Spot has been taken in this account, please try a different suffix.",
        );
        assert!(already_exists(&taken));
        assert!(!already_exists(&ProviderError::new("iam:CreateServiceLinkedRole", "InvalidInput", "bad name")));
        let denied = ProviderError::new("ec2:RunInstances", "AuthFailure.ServiceLinkedRoleCreationNotPermitted", "");
        assert!(not_permitted(&denied));
        let hint = permission_hint("spot.amazonaws.com");
        assert!(hint.contains("AWSServiceRoleForEC2Spot"));
        assert!(hint.contains("aws iam create-service-linked-role --aws-service-name spot.amazonaws.com"));
        assert!(hint.contains("iam:CreateServiceLinkedRole"));
    }
}
