//! `aws_iam_openid_connect_provider`: registers the cluster's OIDC issuer with IAM so that IRSA roles can
//! trust its service-account tokens. The ID is its ARN, which IAM derives from the issuer URL.
//!
//! IAM stores the URL without its `https://` and hands it back that way; trust policies name the issuer the same
//! way (`oidc.eks.<region>.amazonaws.com/id/<ID>:sub`), which is the `issuer_host` output.

use std::collections::BTreeSet;

use async_trait::async_trait;
use aws_sdk_iam::operation::get_open_id_connect_provider::GetOpenIdConnectProviderOutput;
use serde_json::{json, Value};

use super::common::{absent_if_gone, explain_taken, object, ok_if_gone, required_str, send, vanished};
use super::tagging::{self, Tagged};
use crate::graph::Attrs;
use crate::providers::sts::caller_identity;
use crate::providers::tags::{merged, user_tags};
use crate::providers::{Applied, Context, Desired, Observed, Provider, ProviderError};

const KIND: &str = "aws_iam_openid_connect_provider";

pub struct OpenIdConnectProvider;

#[async_trait]
impl Provider for OpenIdConnectProvider {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn force_new(&self) -> &'static [&'static str] {
        &["url"]
    }

    async fn read(&self, cx: &Context, id: &str, prior: &Attrs) -> Result<Option<Observed>, ProviderError> {
        let Some(p) = get(cx, id).await? else { return Ok(None) };
        let host = p.url().unwrap_or_default();
        // Report the blueprint's spelling when it names the same issuer, so the diff sees no change.
        let url = match prior.get("url").and_then(Value::as_str) {
            Some(u) if issuer_host(u) == host => u.to_string(),
            _ => format!("https://{host}"),
        };
        let client_ids = p.client_id_list().to_vec();
        let client_ids = match prior.get("client_id_list") {
            Some(before) if same_set(&strings(Some(before)), &client_ids) => before.clone(),
            _ => json!(client_ids),
        };
        let mut attrs = object(json!({
            "url": url,
            "client_id_list": client_ids,
            "tags": user_tags(tagging::from_iam(p.tags())),
        }));
        if prior.contains_key("thumbprint_list") {
            attrs.insert("thumbprint_list".to_string(), json!(p.thumbprint_list()));
        }
        Ok(Some(Observed { attrs, outputs: applied(id, host).outputs }))
    }

    /// The ARN follows from the account and the issuer URL.
    async fn find(&self, cx: &Context, desired: &Desired<'_>) -> Result<Option<String>, ProviderError> {
        let host = issuer_host(required_str(KIND, desired.attrs, "url")?).to_string();
        let me = caller_identity::lookup(cx).await?;
        let arn = format!("arn:{}:iam::{}:oidc-provider/{host}", me.partition, me.account_id);
        let provider = get(cx, &arn).await?;
        Ok(provider.filter(|p| tagging::owned_by(p.tags(), &cx.stack)).map(|_| arn))
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied, ProviderError> {
        const OP: &str = "iam:CreateOpenIDConnectProvider";
        let a = desired.attrs;
        let url = required_str(KIND, a, "url")?;
        let client_ids = strings(a.get("client_id_list"));
        // Without thumbprints IAM trusts the issuer through its own CA store, which is what EKS issuers need.
        let thumbprints = a.get("thumbprint_list").map(|v| strings(Some(v)));
        let tags = tagging::to_iam(OP, &merged(a, &desired.kbp_tags))?;
        let out = send(cx, OP, &[], || {
            cx.iam()
                .create_open_id_connect_provider()
                .url(url)
                .set_client_id_list(Some(client_ids.clone()))
                .set_thumbprint_list(thumbprints.clone())
                .set_tags(Some(tags.clone()))
                .send()
        })
        .await
        .map_err(|e| explain_taken(e, "OIDC provider", url))?;
        let arn =
            out.open_id_connect_provider_arn().ok_or_else(|| ProviderError::new(OP, "", "IAM returned no ARN"))?;
        Ok(applied(arn, issuer_host(url)))
    }

    async fn update(
        &self,
        cx: &Context,
        id: &str,
        _prior: &Attrs,
        desired: &Desired<'_>,
    ) -> Result<Applied, ProviderError> {
        let a = desired.attrs;
        let p = get(cx, id).await?.ok_or_else(|| vanished("iam:GetOpenIDConnectProvider", "OIDC provider", id))?;
        let current: BTreeSet<&str> = p.client_id_list().iter().map(String::as_str).collect();
        let wanted = strings(a.get("client_id_list"));
        let wanted: BTreeSet<&str> = wanted.iter().map(String::as_str).collect();
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
        if let Some(thumbprints) = a.get("thumbprint_list").map(|v| strings(Some(v))) {
            if !same_set(&thumbprints, p.thumbprint_list()) {
                send(cx, "iam:UpdateOpenIDConnectProviderThumbprint", &[], || {
                    let call = cx.iam().update_open_id_connect_provider_thumbprint();
                    call.open_id_connect_provider_arn(id).set_thumbprint_list(Some(thumbprints.clone())).send()
                })
                .await?;
            }
        }
        tagging::reconcile(cx, Tagged::OpenIdConnectProvider(id), p.tags(), &merged(a, &desired.kbp_tags)).await?;
        Ok(applied(id, p.url().unwrap_or_default()))
    }

    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<(), ProviderError> {
        let r = send(cx, "iam:DeleteOpenIDConnectProvider", &[], || {
            cx.iam().delete_open_id_connect_provider().open_id_connect_provider_arn(id).send()
        });
        ok_if_gone(r.await.map(drop))
    }
}

async fn get(cx: &Context, arn: &str) -> Result<Option<GetOpenIdConnectProviderOutput>, ProviderError> {
    let r = send(cx, "iam:GetOpenIDConnectProvider", &[], || {
        cx.iam().get_open_id_connect_provider().open_id_connect_provider_arn(arn).send()
    });
    absent_if_gone(r.await)
}

/// `https://oidc.eks.us-west-2.amazonaws.com/id/X` → `oidc.eks.us-west-2.amazonaws.com/id/X`.
fn issuer_host(url: &str) -> &str {
    url.strip_prefix("https://").unwrap_or(url).trim_end_matches('/')
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

fn same_set(a: &[String], b: &[String]) -> bool {
    a.iter().collect::<BTreeSet<_>>() == b.iter().collect::<BTreeSet<_>>()
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
    fn client_lists_compare_as_sets() {
        let a = vec!["sts.amazonaws.com".to_string(), "x".to_string()];
        let b = vec!["x".to_string(), "sts.amazonaws.com".to_string()];
        assert!(same_set(&a, &b));
        assert!(!same_set(&a, &b[..1]));
    }
}
