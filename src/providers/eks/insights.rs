//! EKS upgrade insights (`ListInsights`, `DescribeInsight`): the readiness checks EKS runs before a cluster's
//! next Kubernetes version (kubelet skew, add-on compatibility, deprecated APIs in use). A plan that upgrades the
//! cluster shows them with their status; they are advice, so a failure to read them is one line, not an error.

use aws_sdk_eks::types::{Category, InsightStatusValue, InsightsFilter};

use crate::providers::send::{all_pages, send};
use crate::providers::{Context, ProviderError};

/// One line per upgrade insight EKS holds for `cluster` at Kubernetes `target`: the passing ones together, each
/// other one with its status, reason and (from `DescribeInsight`) recommendation as a hint.
pub async fn upgrade_lines(cx: &Context, cluster: &str, target: &str) -> Vec<String> {
    match read(cx, cluster, target).await {
        Ok(lines) => lines,
        Err(e) => vec![format!(
            "could not read EKS's upgrade insights for Kubernetes {target}: {}\n  hint: allow eks:ListInsights and \
             eks:DescribeInsight to see them in the plan, or read them in the EKS console before applying",
            e.message
        )],
    }
}

async fn read(cx: &Context, cluster: &str, target: &str) -> Result<Vec<String>, ProviderError> {
    const OP: &str = "eks:ListInsights";
    let filter = InsightsFilter::builder().categories(Category::UpgradeReadiness).kubernetes_versions(target).build();
    let insights = all_pages(|token| {
        let filter = filter.clone();
        async move {
            let request = || {
                cx.eks()
                    .list_insights()
                    .cluster_name(cluster)
                    .filter(filter.clone())
                    .set_next_token(token.clone())
                    .send()
            };
            let page = send(cx, OP, &[], request).await?;
            Ok((page.insights().to_vec(), page.next_token().map(str::to_string)))
        }
    })
    .await?;
    let status = |i: &aws_sdk_eks::types::InsightSummary| i.insight_status().and_then(|s| s.status()).cloned();
    let (passing, other): (Vec<_>, Vec<_>) =
        insights.iter().partition(|i| status(i) == Some(InsightStatusValue::Passing));
    let mut lines = Vec::new();
    for i in other {
        let name = i.name().unwrap_or("an upgrade insight");
        let state = status(i).map_or("UNKNOWN".to_string(), |s| s.as_str().to_string());
        let reason = i.insight_status().and_then(|s| s.reason()).unwrap_or_default();
        let recommendation = match i.id() {
            Some(id) => {
                let request = || cx.eks().describe_insight().cluster_name(cluster).id(id).send();
                let described = send(cx, "eks:DescribeInsight", &[], request).await?;
                described.insight().and_then(|d| d.recommendation()).map(str::to_string)
            }
            None => None,
        };
        let hint = recommendation.map_or(String::new(), |r| format!("\n  hint: {r}"));
        lines.push(format!("EKS upgrade insight for Kubernetes {target}, {name}: {state}: {reason}{hint}"));
    }
    if !passing.is_empty() {
        let names: Vec<&str> = passing.iter().filter_map(|i| i.name()).collect();
        lines.push(format!("EKS upgrade insights for Kubernetes {target} passing: {}", names.join(", ")));
    }
    Ok(lines)
}
