//! `aws_iam_openid_connect_provider`: registers the cluster's OIDC issuer with IAM so that IRSA roles can
//! trust its service-account tokens. The ID is its ARN, which IAM derives from the issuer URL.
//!
//! IAM stores the URL without its `https://` and hands it back that way; trust policies name the issuer the same
//! way (`oidc.eks.<region>.amazonaws.com/id/<ID>:sub`), which is the `issuer_host` output.

use std::collections::BTreeSet;

use async_trait::async_trait;
use aws_sdk_iam::operation::get_open_id_connect_provider::GetOpenIdConnectProviderOutput;
use serde_json::{json, Value};

use super::common::entity_tags;
use super::common::{self, explain_taken, object, remove, send, Entity};
use super::tagging::{self, Tagged};
use crate::graph::{kinds, Attrs};
use crate::providers::spec;
use crate::providers::sts::caller_identity;
use crate::providers::tagged::{owned_among, Search};
use crate::providers::tags::user_tags;
use crate::providers::Found;
use crate::providers::{contract, contract::Constraint};
use crate::providers::{
    Applied, Context, Descriptor, Desired, Observed, Provider, ProviderError, Result, WithoutState,
};

const KIND: &str = kinds::IAM_OIDC_PROVIDER;

/// The provider of `aws_iam_openid_connect_provider`: the cluster's OIDC issuer, registered for IRSA.
pub struct OpenIdConnectProvider;

/// The attributes the compiler emits, references resolved ([`crate::graph::kinds`]).
type Spec = crate::graph::kinds::iam_openid_connect_provider::OpenIdConnectProvider<String>;

/// What AWS accepts of what this kind sends ([`contract`]).
const SENDS: &[Constraint] = &[contract::tags_of("IAM OIDC provider")];

#[async_trait]
impl Provider for OpenIdConnectProvider {
    fn descriptor(&self) -> Descriptor {
        Descriptor::new(KIND, WithoutState::Tags, SENDS)
            .force_new(&["url"])
            .imported_by("its ARN, `arn:aws:iam::<account>:oidc-provider/…`")
    }

    /// The account's OIDC providers tagged for the stack, each one's tags read from its Get call.
    async fn tagged(&self, cx: &Context, search: &Search<'_>) -> Result<Vec<Found>> {
        let listed =
            send(cx, "iam:ListOpenIDConnectProviders", &[], || cx.iam().list_open_id_connect_providers().send())
                .await?;
        let arns = listed.open_id_connect_provider_list().iter().filter_map(|p| p.arn().map(str::to_string)).collect();
        owned_among(
            search,
            KIND,
            arns,
            |arn| async move { entity_tags::<GetOpenIdConnectProviderOutput>(cx, &arn).await },
        )
        .await
    }

    /// The URL with its scheme and the lists sorted, as `read` reports them.
    fn canonical(&self, mut desired: Attrs) -> Attrs {
        if let Some(url) = desired.get("url").and_then(Value::as_str) {
            let url = format!("https://{}", issuer_host(url));
            desired.insert("url".to_string(), json!(url));
        }
        for key in ["client_id_list", "thumbprint_list"] {
            if let Some(list) = desired.get(key).filter(|v| v.is_array()) {
                desired.insert(key.to_string(), json!(sorted(&strings(Some(list)))));
            }
        }
        desired
    }

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        let Some(p) = Described::get(cx, id).await? else { return Ok(None) };
        let host = p.url().unwrap_or_default();
        let attrs = object(json!({
            "url": format!("https://{host}"),
            "client_id_list": sorted(p.client_id_list()),
            "thumbprint_list": sorted(p.thumbprint_list()),
            "tags": user_tags(tagging::from_iam(p.tags())),
        }));
        Ok(Some(Observed { attrs, outputs: applied(id, host).outputs }))
    }

    /// The ARN follows from the account and the issuer URL.
    async fn find(&self, cx: &Context, desired: &Desired<'_>) -> Result<Option<String>> {
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        let host = issuer_host(&s.url).to_string();
        let me = caller_identity::lookup(cx).await?;
        let arn = format!("arn:{}:iam::{}:oidc-provider/{host}", me.partition, me.account_id);
        Ok(common::owned::<Described>(cx, &arn).await?.map(|_| arn))
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        const OP: &str = "iam:CreateOpenIDConnectProvider";
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        let url = s.url.as_str();
        let tags = tagging::to_iam(OP, &desired.tags())?;
        let out = send(cx, OP, &[], || {
            cx.iam()
                .create_open_id_connect_provider()
                .url(url)
                .set_client_id_list(Some(s.client_id_list.clone()))
                .set_thumbprint_list(s.thumbprint_list.clone())
                .set_tags(Some(tags.clone()))
                .send()
        })
        .await
        .map_err(|e| explain_taken(e, "OIDC provider", url))?;
        let arn =
            out.open_id_connect_provider_arn().ok_or_else(|| ProviderError::new(OP, "", "IAM returned no ARN"))?;
        Ok(applied(arn, issuer_host(url)))
    }

    async fn update(&self, cx: &Context, id: &str, _prior: &Attrs, desired: &Desired<'_>) -> Result<Applied> {
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        let p: Described = common::existing(cx, id).await?;
        let current: BTreeSet<&str> = p.client_id_list().iter().map(String::as_str).collect();
        let wanted: BTreeSet<&str> = s.client_id_list.iter().map(String::as_str).collect();
        for client in wanted.difference(&current) {
            send(cx, "iam:AddClientIDToOpenIDConnectProvider", &[], || {
                cx.iam()
                    .add_client_id_to_open_id_connect_provider()
                    .open_id_connect_provider_arn(id)
                    .client_id(*client)
                    .send()
            })
            .await?;
        }
        for client in current.difference(&wanted) {
            send(cx, "iam:RemoveClientIDFromOpenIDConnectProvider", &[], || {
                let call = cx.iam().remove_client_id_from_open_id_connect_provider();
                call.open_id_connect_provider_arn(id).client_id(*client).send()
            })
            .await?;
        }
        if let Some(thumbprints) = &s.thumbprint_list {
            if sorted(thumbprints) != sorted(p.thumbprint_list()) {
                send(cx, "iam:UpdateOpenIDConnectProviderThumbprint", &[], || {
                    let call = cx.iam().update_open_id_connect_provider_thumbprint();
                    call.open_id_connect_provider_arn(id).set_thumbprint_list(Some(thumbprints.clone())).send()
                })
                .await?;
            }
        }
        tagging::reconcile(cx, Tagged::OpenIdConnectProvider(id), p.tags(), &desired.tags()).await?;
        Ok(applied(id, p.url().unwrap_or_default()))
    }

    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<()> {
        remove(cx, "iam:DeleteOpenIDConnectProvider", &[], || {
            cx.iam().delete_open_id_connect_provider().open_id_connect_provider_arn(id).send()
        })
        .await
    }
}

/// IAM has no type for an OIDC provider: the Get call's answer is it.
type Described = GetOpenIdConnectProviderOutput;

common::entity!(
    Described,
    "OIDC provider",
    "iam:GetOpenIDConnectProvider",
    |cx, arn| cx.iam().get_open_id_connect_provider().open_id_connect_provider_arn(arn),
    |out| Some(out)
);

/// `https://oidc.eks.us-west-2.amazonaws.com/id/X` → `oidc.eks.us-west-2.amazonaws.com/id/X`.
fn issuer_host(url: &str) -> &str {
    url.strip_prefix("https://").unwrap_or(url).trim_end_matches('/')
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

/// Client IDs and thumbprints are sets to IAM.
fn sorted(items: &[String]) -> Vec<String> {
    items.iter().collect::<BTreeSet<_>>().into_iter().cloned().collect()
}

fn applied(arn: &str, host: &str) -> Applied {
    let outputs = json!({"id": arn, "arn": arn, "url": format!("https://{host}"), "issuer_host": host});
    Applied { id: arn.to_string(), outputs: object(outputs) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issuer_host_is_the_url_without_scheme() {
        let url = "https://oidc.eks.us-west-2.amazonaws.com/id/EXAMPLED539D4633E53DE1B71EXAMPLE";
        assert_eq!(issuer_host(url), "oidc.eks.us-west-2.amazonaws.com/id/EXAMPLED539D4633E53DE1B71EXAMPLE");
        assert_eq!(issuer_host("oidc.example.com/"), "oidc.example.com");
    }

    #[test]
    fn canonical_form_has_the_scheme_and_sorted_sets() {
        let desired = object(json!({"url": "oidc.example.com/id/1/", "client_id_list": ["b", "a", "b"], "tags": {}}));
        let c = OpenIdConnectProvider.canonical(desired);
        assert_eq!(c["url"], "https://oidc.example.com/id/1");
        assert_eq!(c["client_id_list"], json!(["a", "b"]));
        assert!(!c.contains_key("thumbprint_list"));
    }
}
