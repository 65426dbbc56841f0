//! Deleting an inventory in an order AWS accepts. Items run in phases (what holds something goes before what
//! it holds: instances before ENIs, security groups and subnets; NAT gateways before their Elastic IPs; the
//! cluster before its VPC); within a phase they run concurrently, at most [`PARALLELISM`] at once. Every
//! deleter treats "already gone" as done, so a run killed at any point is finished by running it again.
//!
//! The kinds kbp also manages in state reuse their provider's delete (which already detaches, waits and
//! retries as AWS needs); what is teardown's own (instances, launch templates, ENIs, rule revocation,
//! route table disassociation, KMS aliases) lives in [`ec2`] and [`others`].

mod ec2;
mod others;

use futures::StreamExt;

use super::{Item, Kind, Step};
use crate::graph::Attrs;
use crate::providers::{Context, ProviderError, Registry};

/// How many deletes run at once within a phase.
const PARALLELISM: usize = 8;

/// The phase an item of `kind` is deleted in; lower first.
fn phase(kind: Kind) -> u8 {
    match kind {
        Kind::Instance | Kind::EksNodegroup => 0,
        Kind::EksCluster => 1,
        Kind::LaunchTemplate
        | Kind::InstanceProfile
        | Kind::NatGateway
        | Kind::SqsQueue
        | Kind::EventRule
        | Kind::KmsKey
        | Kind::OidcProvider => 2,
        Kind::Address | Kind::NetworkInterface | Kind::IamRole | Kind::IamPolicy => 3,
        Kind::SecurityGroup | Kind::RouteTable | Kind::InternetGateway => 4,
        Kind::Subnet => 5,
        Kind::Vpc => 6,
    }
}

/// The network kinds that AWS refuses to delete while anything of an earlier phase is left in the VPC: after a
/// failure there, trying them would only wait out their budget for the same refusal.
fn blocked_by_earlier_failures(kind: Kind) -> bool {
    matches!(kind, Kind::SecurityGroup | Kind::RouteTable | Kind::InternetGateway | Kind::Subnet | Kind::Vpc)
}

/// Deletes `items` (see the module documentation), reporting each step through `on_event`. Returns the items
/// it could not delete, each with why; running it again on the same items retries exactly those.
pub async fn delete(
    cx: &Context,
    items: &[Item],
    on_event: &(dyn Fn(&Item, Step) + Sync),
) -> Vec<(Item, ProviderError)> {
    let registry = Registry::aws();
    let mut failed: Vec<(Item, ProviderError)> = Vec::new();
    let mut phases: Vec<u8> = items.iter().map(|i| phase(i.kind)).collect();
    phases.sort_unstable();
    phases.dedup();
    for p in phases {
        let (blocked, runnable): (Vec<&Item>, Vec<&Item>) = items
            .iter()
            .filter(|i| phase(i.kind) == p)
            .partition(|i| blocked_by_earlier_failures(i.kind) && !failed.is_empty());
        for item in blocked {
            let e = not_attempted(item, &failed[0].0);
            on_event(item, Step::Failed(e.to_string()));
            failed.push((item.clone(), e));
        }
        let results: Vec<(&Item, Result<Option<String>, ProviderError>)> = futures::stream::iter(runnable)
            .map(|item| {
                let registry = &registry;
                async move {
                    on_event(item, Step::Deleting);
                    (item, delete_one(cx, registry, item).await)
                }
            })
            .buffer_unordered(PARALLELISM)
            .collect()
            .await;
        for (item, result) in results {
            match result {
                Ok(None) => on_event(item, Step::Deleted),
                Ok(Some(note)) => on_event(&Item { detail: note, ..item.clone() }, Step::Deleted),
                Err(e) => {
                    on_event(item, Step::Failed(e.to_string()));
                    failed.push((item.clone(), e));
                }
            }
        }
    }
    failed
}

fn not_attempted(item: &Item, cause: &Item) -> ProviderError {
    ProviderError::new(
        "kbp:teardown",
        "",
        format!("did not try to delete {} {}: {} could not be deleted first", item.kind.label(), item.id, cause),
    )
    .with_hint("fix the error reported for that one, then run the same command again")
}

/// Deletes one item; `Some(note)` when AWS completes the deletion later or elsewhere, saying so.
async fn delete_one(cx: &Context, registry: &Registry, item: &Item) -> Result<Option<String>, ProviderError> {
    let id = item.id.as_str();
    match item.kind {
        Kind::Instance => ec2::terminate_instance(cx, id).await?,
        Kind::LaunchTemplate => ec2::delete_launch_template(cx, id).await?,
        Kind::NetworkInterface => ec2::delete_network_interface(cx, id).await?,
        Kind::SecurityGroup => {
            ec2::revoke_rules(cx, id).await?;
            by_provider(cx, registry, "aws_security_group", id).await?
        }
        Kind::Address => {
            ec2::disassociate_address(cx, id).await?;
            by_provider(cx, registry, "aws_eip", id).await?
        }
        Kind::RouteTable => {
            if ec2::disassociate_route_table(cx, id).await? == ec2::Table::Main {
                return Ok(Some("the VPC's main route table: deleted with the VPC".to_string()));
            }
            by_provider(cx, registry, "aws_route_table", id).await?
        }
        Kind::NatGateway => by_provider(cx, registry, "aws_nat_gateway", id).await?,
        Kind::InternetGateway => by_provider(cx, registry, "aws_internet_gateway", id).await?,
        Kind::Subnet => by_provider(cx, registry, "aws_subnet", id).await?,
        Kind::Vpc => by_provider(cx, registry, "aws_vpc", id).await?,
        Kind::EksNodegroup => by_provider(cx, registry, "aws_eks_node_group", id).await?,
        Kind::EksCluster => by_provider(cx, registry, "aws_eks_cluster", id).await?,
        Kind::InstanceProfile => by_provider(cx, registry, "aws_iam_instance_profile", id).await?,
        Kind::IamRole => by_provider(cx, registry, "aws_iam_role", id).await?,
        Kind::IamPolicy => by_provider(cx, registry, "aws_iam_policy", id).await?,
        Kind::OidcProvider => by_provider(cx, registry, "aws_iam_openid_connect_provider", id).await?,
        Kind::SqsQueue => by_provider(cx, registry, "aws_sqs_queue", id).await?,
        Kind::EventRule => by_provider(cx, registry, "aws_eventbridge_rule", id).await?,
        Kind::KmsKey => {
            others::schedule_key_deletion(cx, id).await?;
            return Ok(Some(format!("scheduled for deletion in {} days", others::KEY_PENDING_WINDOW_DAYS)));
        }
    }
    Ok(None)
}

/// The delete of the provider of `kind`, which needs no prior attributes for these kinds.
async fn by_provider(cx: &Context, registry: &Registry, kind: &str, id: &str) -> Result<(), ProviderError> {
    let provider = registry.get(kind).ok_or_else(|| {
        ProviderError::new("kbp:teardown", "", format!("this build of kbp has no provider for {kind}"))
            .with_hint("this is a bug in kbp; please report it")
    })?;
    provider.delete(cx, id, &Attrs::new()).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holders_go_before_what_they_hold() {
        assert!(phase(Kind::Instance) < phase(Kind::NetworkInterface));
        assert!(phase(Kind::NetworkInterface) < phase(Kind::SecurityGroup));
        assert!(phase(Kind::NatGateway) < phase(Kind::Address));
        assert!(phase(Kind::EksNodegroup) < phase(Kind::EksCluster));
        assert!(phase(Kind::EksCluster) < phase(Kind::SecurityGroup));
        assert!(phase(Kind::InternetGateway) < phase(Kind::Subnet));
        assert!(phase(Kind::Subnet) < phase(Kind::Vpc));
        assert!(phase(Kind::InstanceProfile) < phase(Kind::IamRole));
    }
}
