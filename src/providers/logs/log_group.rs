//! `aws_cloudwatch_log_group`: `/aws/eks/<cluster>/cluster`, where EKS writes the control-plane logs of a
//! cluster with logging enabled. Delete only; its ID is its name.
//!
//! EKS writes to it for as long as the cluster runs, so it is best deleted after the cluster; its `uses` cannot
//! say so (they order it before what they name), which is the engine's to arrange.

use async_trait::async_trait;
use aws_sdk_cloudwatchlogs::types::LogGroup as AwsLogGroup;
use serde_json::json;

use crate::graph::{kinds, Attrs};
use crate::providers::attrs::absent_if_gone;
use crate::providers::delete_only::Leftover;
use crate::providers::ec2::object;
use crate::providers::send::{remove, send_pages};
use crate::providers::{Context, DiscoveryScope, Found, Observed, Result};

pub(crate) struct LogGroup;

/// The log group EKS writes `cluster`'s control-plane logs to.
fn control_plane_group(cluster: &str) -> String {
    format!("/aws/eks/{cluster}/cluster")
}

#[async_trait]
impl Leftover for LogGroup {
    const KIND: &'static str = kinds::LOG_GROUP;
    const MADE_BY: &'static str = "EKS (control-plane logging)";

    async fn read(&self, cx: &Context, name: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        let Some(g) = describe(cx, name).await? else { return Ok(None) };
        let attrs = object(json!({ "name": name, "retention_in_days": g.retention_in_days() }));
        let outputs = object(json!({ "id": name, "arn": g.log_group_arn().or(g.arn()) }));
        Ok(Some(Observed { attrs, outputs }))
    }

    /// Synchronous in AWS: the group and its streams are gone when the call returns.
    async fn delete(&self, cx: &Context, name: &str, _prior: &Attrs) -> Result<()> {
        // OperationAborted: another call changed the group at the same moment (EKS creating a stream).
        let r = remove(cx, "logs:DeleteLogGroup", &["OperationAbortedException"], || {
            cx.logs().delete_log_group().log_group_name(name).send()
        })
        .await;
        let Err(e) = r else { return Ok(()) };
        let protected = describe(cx, name).await.ok().flatten().and_then(|g| g.deletion_protection_enabled());
        Err(match protected {
            Some(true) => e.with_hint(format!(
                "deletion protection is on for log group {name}; turn it off (`aws logs \
                 put-log-group-deletion-protection --log-group-identifier {name} --no-deletion-protection-enabled`), \
                 then run kbp again"
            )),
            _ => e,
        })
    }

    async fn discover(&self, cx: &Context, scope: &DiscoveryScope<'_>) -> Result<Vec<Found>> {
        let name = control_plane_group(scope.cluster);
        let Some(g) = describe(cx, &name).await? else { return Ok(Vec::new()) };
        let arns = [g.log_group_arn(), g.arn()];
        if scope.keep.contains(&name) || arns.into_iter().flatten().any(|a| scope.keep.contains(a)) {
            return Ok(Vec::new());
        }
        Ok(vec![Found {
            kind: Self::KIND,
            id: name.clone(),
            name: None,
            detail: detail(&g, scope.cluster),
            uses: Vec::new(),
            // EKS writes to it until the cluster is gone, and would make it again.
            after: vec![scope.cluster.to_string()],
            attrs: object(json!({ "name": name })),
        }])
    }
}

/// The log group named exactly `name`, if it exists.
async fn describe(cx: &Context, name: &str) -> Result<Option<AwsLogGroup>> {
    // A prefix query: groups whose names extend this one (another cluster's `/aws/eks/<name>/cluster-x`) are
    // listed too and skipped.
    let r = send_pages(
        cx,
        "logs:DescribeLogGroups",
        |token| cx.logs().describe_log_groups().log_group_name_prefix(name).set_next_token(token).send(),
        |page| (page.log_groups.unwrap_or_default(), page.next_token),
    )
    .await;
    Ok(absent_if_gone(r)?.unwrap_or_default().into_iter().find(|g| g.log_group_name() == Some(name)))
}

fn detail(g: &AwsLogGroup, cluster: &str) -> String {
    let retention = g.retention_in_days().map_or("kept forever".to_string(), |d| format!("kept {d} days"));
    let stored = g.stored_bytes().unwrap_or(0);
    format!("control-plane logs of EKS cluster {cluster}, {}, {retention}", bytes(stored))
}

/// A byte count the way people read it.
fn bytes(n: i64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_group_is_named_after_the_cluster() {
        assert_eq!(control_plane_group("sbx"), "/aws/eks/sbx/cluster");
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(3 * 1024 * 1024 * 1024), "3.0 GiB");
    }

    #[test]
    fn detail_says_how_long_it_keeps_logs() {
        let g = AwsLogGroup::builder().log_group_name("/aws/eks/sbx/cluster").retention_in_days(7).build();
        assert_eq!(detail(&g, "sbx"), "control-plane logs of EKS cluster sbx, 0 B, kept 7 days");
    }
}
