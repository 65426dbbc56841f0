//! `aws_launch_template`: a launch template Karpenter made for an EC2NodeClass, tagged
//! `karpenter.k8s.aws/cluster=<cluster>`. Delete only; nothing blocks its deletion, not even running nodes.

use async_trait::async_trait;
use aws_sdk_ec2::types::{Filter, LaunchTemplate as AwsLaunchTemplate};
use serde_json::json;

use super::object;
use crate::graph::{kinds, Attrs};
use crate::providers::delete_only::Leftover;
use crate::providers::send::remove;
use crate::providers::{Context, DiscoveryScope, Found, Observed, Result};

pub(crate) struct LaunchTemplate;

const CLUSTER_TAG: &str = "karpenter.k8s.aws/cluster";

#[async_trait]
impl Leftover for LaunchTemplate {
    const KIND: &'static str = kinds::LAUNCH_TEMPLATE;
    const MADE_BY: &'static str = "Karpenter (for an EC2NodeClass)";

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        let found = super::describe::one::<AwsLaunchTemplate>(cx, id, &[]).await?;
        Ok(found.map(|t| Observed { attrs: attrs(&t), outputs: super::id_output(id) }))
    }

    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<()> {
        remove(cx, "ec2:DeleteLaunchTemplate", &[], || cx.ec2().delete_launch_template().launch_template_id(id).send())
            .await
    }

    async fn discover(&self, cx: &Context, scope: &DiscoveryScope<'_>) -> Result<Vec<Found>> {
        let f = Filter::builder().name(format!("tag:{CLUSTER_TAG}")).values(scope.cluster).build();
        let all = super::describe::all::<AwsLaunchTemplate>(cx, vec![f]).await?;
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

fn attrs(t: &AwsLaunchTemplate) -> Attrs {
    object(json!({ "name": t.launch_template_name() }))
}
