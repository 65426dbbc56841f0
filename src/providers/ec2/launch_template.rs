//! `aws_launch_template`: a launch template Karpenter made for an EC2NodeClass, tagged
//! `karpenter.k8s.aws/cluster=<cluster>`. Delete only; nothing blocks its deletion, not even running nodes.

use async_trait::async_trait;
use aws_sdk_ec2::types::{Filter, LaunchTemplate as AwsLaunchTemplate};
use serde_json::json;

use super::object;
use crate::graph::Attrs;
use crate::providers::attrs::{absent_if_gone, ok_if_gone};
use crate::providers::delete_only::Leftover;
use crate::providers::send::{all_pages, send};
use crate::providers::{Context, DiscoveryScope, Found, Observed, ProviderError};

pub struct LaunchTemplate;

const KIND: &str = "aws_launch_template";
const MADE_BY: &str = "Karpenter (for an EC2NodeClass)";
const CLUSTER_TAG: &str = "karpenter.k8s.aws/cluster";

#[async_trait]
impl Leftover for LaunchTemplate {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn made_by(&self) -> &'static str {
        MADE_BY
    }

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>, ProviderError> {
        let r = send(cx, "ec2:DescribeLaunchTemplates", &[], || {
            cx.ec2().describe_launch_templates().launch_template_ids(id).send()
        })
        .await;
        let found = absent_if_gone(r)?
            .and_then(|out| out.launch_templates().iter().find(|t| t.launch_template_id() == Some(id)).cloned());
        Ok(found.map(|t| Observed { attrs: attrs(&t), outputs: super::id_output(id) }))
    }

    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<(), ProviderError> {
        let r = send(cx, "ec2:DeleteLaunchTemplate", &[], || {
            cx.ec2().delete_launch_template().launch_template_id(id).send()
        })
        .await;
        ok_if_gone(r.map(drop))
    }

    async fn discover(&self, cx: &Context, scope: &DiscoveryScope<'_>) -> Result<Vec<Found>, ProviderError> {
        let f = &Filter::builder().name(format!("tag:{CLUSTER_TAG}")).values(scope.cluster).build();
        let all = all_pages(|token| async move {
            let page = send(cx, "ec2:DescribeLaunchTemplates", &[], || {
                cx.ec2().describe_launch_templates().filters(f.clone()).set_next_token(token.clone()).send()
            })
            .await?;
            Ok((page.launch_templates().to_vec(), page.next_token().map(str::to_string)))
        })
        .await?;
        let ours = |t: &&AwsLaunchTemplate| {
            // Checked again: a tag filter an implementation ignores must not widen the match.
            t.tags().iter().any(|tag| tag.key() == Some(CLUSTER_TAG) && tag.value() == Some(scope.cluster))
        };
        Ok(all
            .iter()
            .filter(ours)
            .filter_map(|t| {
                let id = t.launch_template_id()?;
                let kept = scope.keep.contains(id) || t.launch_template_name().is_some_and(|n| scope.keep.contains(n));
                (!kept).then(|| Found {
                    kind: KIND,
                    id: id.to_string(),
                    name: t.launch_template_name().map(str::to_string),
                    detail: format!("tagged {CLUSTER_TAG}={}", scope.cluster),
                    uses: Vec::new(),
                    after: Vec::new(),
                    attrs: attrs(t),
                })
            })
            .collect())
    }
}

fn attrs(t: &AwsLaunchTemplate) -> Attrs {
    object(json!({ "name": t.launch_template_name() }))
}
