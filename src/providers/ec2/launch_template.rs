//! `aws_launch_template`: a launch template Karpenter made for an EC2NodeClass, tagged
//! `karpenter.k8s.aws/cluster=<cluster>`. Delete only; nothing blocks its deletion, not even running nodes.

use async_trait::async_trait;
use aws_sdk_ec2::types::{Filter, LaunchTemplate as AwsLaunchTemplate};
use serde_json::json;

use super::object;
use crate::graph::{kinds, Attrs};
use crate::providers::delete_only::Leftover;
use crate::providers::send::describe_one;
use crate::providers::send::{remove, send_pages};
use crate::providers::{Context, DiscoveryScope, Found, Observed, Result};

pub(crate) struct LaunchTemplate;

const CLUSTER_TAG: &str = "karpenter.k8s.aws/cluster";

#[async_trait]
impl Leftover for LaunchTemplate {
    const KIND: &'static str = kinds::LAUNCH_TEMPLATE;
    const MADE_BY: &'static str = "Karpenter (for an EC2NodeClass)";

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        let found = describe(cx, id).await?;
        Ok(found.map(|t| Observed { attrs: attrs(&t), outputs: super::id_output(id) }))
    }

    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<()> {
        remove(cx, "ec2:DeleteLaunchTemplate", &[], || cx.ec2().delete_launch_template().launch_template_id(id).send())
            .await
    }

    async fn discover(&self, cx: &Context, scope: &DiscoveryScope<'_>) -> Result<Vec<Found>> {
        let f = &Filter::builder().name(format!("tag:{CLUSTER_TAG}")).values(scope.cluster).build();
        let all = send_pages(
            cx,
            "ec2:DescribeLaunchTemplates",
            |token| cx.ec2().describe_launch_templates().filters(f.clone()).set_next_token(token).send(),
            |page| (page.launch_templates.unwrap_or_default(), page.next_token),
        )
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
                    kind: Self::KIND,
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

async fn describe(cx: &Context, id: &str) -> Result<Option<AwsLaunchTemplate>> {
    let request = || cx.ec2().describe_launch_templates().launch_template_ids(id).send();
    let op = "ec2:DescribeLaunchTemplates";
    describe_one(cx, op, &[], id, request, |out| out.launch_templates(), |t| t.launch_template_id()).await
}

fn attrs(t: &AwsLaunchTemplate) -> Attrs {
    object(json!({ "name": t.launch_template_name() }))
}
