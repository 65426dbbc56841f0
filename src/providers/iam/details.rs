//! IAM's account authorization details (`iam:GetAccountAuthorizationDetails`): every role of the account with
//! its trust policy, tags, inline policies and attached managed policies, and every customer-managed policy with
//! its versions, in one page for most accounts. The batched reads of roles, inline policies, attachments and
//! managed policies share one answer per refresh ([`crate::providers::answers`]) instead of a few calls per role.
//!
//! What it leaves out is read elsewhere: a role's description and session length (ListRoles), a managed
//! policy's tags (GetPolicy).

use std::sync::Arc;

use aws_sdk_iam::types::{EntityType, ManagedPolicyDetail, RoleDetail};

use super::common::send;
use crate::providers::{Context, Result};

const OP: &str = "iam:GetAccountAuthorizationDetails";
/// The most items IAM answers in one page.
const PAGE: i32 = 1000;

/// The account's roles and customer-managed policies.
#[derive(Debug, Default)]
pub(crate) struct Details {
    roles: Vec<RoleDetail>,
    policies: Vec<ManagedPolicyDetail>,
}

impl Details {
    /// The role named `name`, if it exists.
    pub(crate) fn role(&self, name: &str) -> Option<&RoleDetail> {
        self.roles.iter().find(|r| r.role_name() == Some(name))
    }

    /// The default version's document of the customer-managed policy `arn`, as IAM returns it (URL-encoded).
    pub(crate) fn default_document(&self, arn: &str) -> Option<&str> {
        let policy = self.policies.iter().find(|p| p.arn() == Some(arn))?;
        let default = policy.policy_version_list().iter().find(|v| v.is_default_version())?;
        default.document()
    }
}

/// The details, sent once per refresh whichever kind asks first.
pub(crate) async fn shared(cx: &Context) -> Result<Arc<Details>> {
    cx.answers.get(OP, || fetch(cx, &[EntityType::Role, EntityType::LocalManagedPolicy])).await
}

/// Every role of the account with its tags, asked now (discovery, which must see what is there at the moment
/// it looks, not what a refresh saw): one call for most accounts, where listing the roles and reading each
/// one's tags takes one call per role.
pub(crate) async fn roles(cx: &Context) -> Result<Vec<RoleDetail>> {
    Ok(fetch(cx, &[EntityType::Role]).await?.roles)
}

async fn fetch(cx: &Context, filters: &[EntityType]) -> Result<Details> {
    let pages = send(cx, OP, &[], || async {
        let call = cx.iam().get_account_authorization_details().set_filter(Some(filters.to_vec()));
        call.into_paginator().page_size(PAGE).send().collect::<Result<Vec<_>, _>>().await
    })
    .await?;
    let mut details = Details::default();
    for page in pages {
        details.roles.extend(page.role_detail_list.unwrap_or_default());
        details.policies.extend(page.policies.unwrap_or_default());
    }
    Ok(details)
}
