//! `aws_caller_identity`: a data source for the account, ARN and partition of the identity kbp runs as, and the
//! partition's URL suffix (what service principals such as `ec2.<suffix>` end in). It owns nothing in AWS, so
//! create and read are the same lookup and delete does nothing.

use async_trait::async_trait;
use serde_json::json;

use crate::graph::{kinds, Attrs};
use crate::providers::preflight::quick;
use crate::providers::{
    Applied, Context, Descriptor, Desired, Observed, Provider, ProviderError, Result, WithoutState,
};

const OP: &str = "sts:GetCallerIdentity";

/// Who kbp runs as.
#[derive(Debug, Clone, PartialEq)]
pub struct Identity {
    /// The 12-digit account ID.
    pub account_id: String,
    /// The ARN of the calling user or assumed role.
    pub arn: String,
    /// The unique ID of the calling principal.
    pub user_id: String,
    /// `aws`, `aws-cn` or `aws-us-gov`: the second field of every ARN in this account.
    pub partition: String,
}

/// The provider of `aws_caller_identity`: read, never made.
pub struct CallerIdentity;

#[async_trait]
impl Provider for CallerIdentity {
    fn descriptor(&self) -> Descriptor {
        Descriptor::new(
            kinds::CALLER_IDENTITY,
            WithoutState::Untraced("who kbp runs as: nothing in AWS to delete"),
            &[],
        )
    }

    async fn read(&self, cx: &Context, _id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        let applied = applied(lookup(cx).await?);
        Ok(Some(Observed { attrs: Attrs::new(), outputs: applied.outputs }))
    }

    async fn create(&self, cx: &Context, _desired: &Desired<'_>) -> Result<Applied> {
        Ok(applied(lookup(cx).await?))
    }

    async fn update(&self, cx: &Context, _id: &str, _prior: &Attrs, _desired: &Desired<'_>) -> Result<Applied> {
        Ok(applied(lookup(cx).await?))
    }

    async fn delete(&self, _cx: &Context, _id: &str, _prior: &Attrs) -> Result<()> {
        Ok(())
    }
}

/// Who the credentials belong to: STS's answer, asked once per run.
pub async fn lookup(cx: &Context) -> Result<Identity> {
    if let Some(me) = cx.caller() {
        return Ok(me.clone());
    }
    let me = ask(cx).await?;
    cx.remember_caller(me.clone());
    Ok(me)
}

/// Asks STS who the credentials belong to.
async fn ask(cx: &Context) -> Result<Identity> {
    let out = cx
        .retry
        .run(&[], || async { cx.sts().get_caller_identity().send().await.map_err(|e| ProviderError::from_sdk(OP, e)) })
        .await?;
    let missing = |what: &str| ProviderError::new(OP, "", format!("STS returned no {what}"));
    let arn = out.arn().ok_or_else(|| missing("ARN"))?.to_string();
    Ok(Identity {
        account_id: out.account().ok_or_else(|| missing("account"))?.to_string(),
        user_id: out.user_id().unwrap_or_default().to_string(),
        partition: partition_of(&arn).ok_or_else(|| missing(&format!("partition in ARN `{arn}`")))?.to_string(),
        arn,
    })
}

/// `arn:aws-cn:sts::123:assumed-role/x/y` → `aws-cn`.
fn partition_of(arn: &str) -> Option<&str> {
    let mut fields = arn.split(':');
    (fields.next() == Some("arn")).then_some(())?;
    fields.next().filter(|p| !p.is_empty())
}

/// The domain names of `partition` end in (CloudFormation's `AWS::URLSuffix`; `dnsSuffix` in the SDK's
/// partition table): `amazonaws.com`, or `amazonaws.com.cn` in China, and the isolated partitions' own.
fn url_suffix(partition: &str) -> &'static str {
    match partition {
        "aws-cn" => "amazonaws.com.cn",
        "aws-eusc" => "amazonaws.eu",
        "aws-iso" => "c2s.ic.gov",
        "aws-iso-b" => "sc2s.sgov.gov",
        "aws-iso-e" => "cloud.adc-e.uk",
        "aws-iso-f" => "csp.hci.ic.gov",
        _ => "amazonaws.com",
    }
}

fn applied(me: Identity) -> Applied {
    let outputs = json!({
        "id": me.account_id,
        "account_id": me.account_id,
        "arn": me.arn,
        "user_id": me.user_id,
        "url_suffix": url_suffix(&me.partition),
        "partition": me.partition,
    });
    let outputs = match outputs {
        serde_json::Value::Object(m) => m,
        _ => Attrs::new(),
    };
    Applied { id: me.account_id, outputs }
}

/// Who is calling AWS (GetCallerIdentity), for preflight, under its short timeout.
pub(crate) async fn ask_quickly(
    cx: &Context,
) -> Result<aws_sdk_sts::operation::get_caller_identity::GetCallerIdentityOutput> {
    let asked = cx.sts().get_caller_identity().customize().config_override(quick!(aws_sdk_sts)).send().await;
    asked.map_err(|e| ProviderError::from_sdk("sts:GetCallerIdentity", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_partition_of_every_aws_partition() {
        assert_eq!(partition_of("arn:aws:iam::123456789012:user/alice"), Some("aws"));
        assert_eq!(partition_of("arn:aws-cn:sts::123456789012:assumed-role/r/s"), Some("aws-cn"));
        assert_eq!(partition_of("arn:aws-us-gov:iam::123456789012:root"), Some("aws-us-gov"));
        assert_eq!(partition_of("not-an-arn"), None);
        assert_eq!(partition_of("arn::iam::1:root"), None);
    }

    #[test]
    fn the_url_suffix_follows_the_partition() {
        assert_eq!(url_suffix("aws"), "amazonaws.com");
        assert_eq!(url_suffix("aws-us-gov"), "amazonaws.com");
        assert_eq!(url_suffix("aws-cn"), "amazonaws.com.cn");
        let me = |partition: &str| Identity {
            account_id: "123456789012".into(),
            arn: format!("arn:{partition}:iam::123456789012:root"),
            user_id: "AIDA".into(),
            partition: partition.into(),
        };
        assert_eq!(applied(me("aws-cn")).outputs["url_suffix"], "amazonaws.com.cn");
        assert_eq!(applied(me("aws-iso")).outputs["url_suffix"], "c2s.ic.gov");
    }
}
