//! Preflight: what kbp asks AWS (and the chart registry) before it plans or changes anything, so that a stack
//! that cannot be made fails in seconds, once, with every reason at once and what to do about each — not
//! half-way through an apply, after minutes of creates.
//!
//! [`identity`] asks only who is calling (every command that talks to AWS); [`stack`] adds what `plan` and
//! `apply` need: the region exists and is enabled ([`region`]), the unique names the stack will create are free
//! or already the stack's own ([`names`]), the Kubernetes version, the add-ons and the Spot service-linked role
//! are there ([`offers`]), the Karpenter CRDs can be read ([`crds`]), and a network someone else owns (`[vpc] id`)
//! has what the cluster needs ([`network`]). The checks run concurrently, each
//! call within `KBP_AWS_PREFLIGHT_TIMEOUT` (15 s, retries included), so a healthy endpoint answers them all in
//! well under a second or two.
//!
//! Owns no AWS resource and changes nothing: every call here is a read.

mod crds;
mod names;
mod network;
mod offers;

use std::fmt;
use std::future::Future;

use futures::future::{self, Either, FutureExt};
use serde_json::Value;

use crate::blueprint::Blueprint;
use crate::graph::Resource;
use crate::providers::{Context, ProviderError, Registry};
use crate::state::{State, Status};

/// One reason the stack cannot be planned or applied as it is, and what to do about it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Problem {
    pub message: String,
    pub hint: String,
}

/// Every problem preflight found (at least one).
#[derive(Debug)]
pub(super) struct Failed(pub Vec<Problem>);

/// Who kbp runs as.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Identity {
    pub account: String,
    pub arn: String,
    /// `aws`, `aws-cn` or `aws-us-gov`: the second field of every ARN in the account.
    pub partition: String,
}

impl Problem {
    pub(super) fn new(message: impl Into<String>, hint: impl Into<String>) -> Self {
        Problem { message: message.into(), hint: hint.into() }
    }

    /// A call that failed: `what` it was for, the call and AWS's answer, and its hint or `otherwise`.
    fn call(what: &str, e: ProviderError, otherwise: &str) -> Self {
        let hint = e.hint.clone().unwrap_or_else(|| otherwise.to_string());
        Problem::new(format!("{what}: {e}"), hint)
    }
}

impl fmt::Display for Failed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{}\n  hint: {}", p.message, p.hint)?;
        }
        Ok(())
    }
}

impl std::error::Error for Failed {}

impl From<Problem> for Failed {
    fn from(p: Problem) -> Self {
        Failed(vec![p])
    }
}

/// Who is calling AWS, and nothing else: missing credentials or an unreachable endpoint fail here, in seconds
/// and once, not once per operation after minutes of retries.
pub(super) async fn identity(cx: &Context) -> anyhow::Result<Identity> {
    caller(cx).await.map_err(|p| Failed::from(p).into())
}

/// [`identity`] and every check of the stack `bp` describes, given what `state` says it already holds. When
/// the caller or the region fails, that is the one problem reported: every other call would fail the same way.
pub(super) async fn stack(cx: &Context, bp: &Blueprint, state: &State) -> anyhow::Result<Identity> {
    let started = std::time::Instant::now();
    // The names to check are the graph's, as the providers read them.
    let graph = crate::graph::compile(bp).map_err(|e| {
        let hint = "this is a kbp bug; please report it with the blueprint";
        anyhow::anyhow!("the blueprint compiles to an invalid graph: {e}\n  hint: {hint}")
    })?;
    let me = caller(cx).shared();
    let registry = Registry::builtin();
    // What `[[import]]` blocks take over is meant to exist already under its name.
    let importing: Vec<String> = bp.import.iter().map(|i| i.to.clone()).collect();
    let basics = async {
        let region = async {
            match region(cx).await {
                Region::Unusable(p) => Err(p),
                Region::Usable(p) => Ok(p),
            }
        };
        future::try_join(me.clone(), region).await
    };
    let others = async {
        let (mut found, offered, crds, network) = tokio::join!(
            names::check(cx, &registry, &graph, state, me.clone(), &importing),
            offers::check(cx, bp, &graph, state),
            crds::check(bp),
            network::check(cx, bp)
        );
        found.extend(offered);
        found.extend(crds);
        found.extend(network);
        found
    };
    let (basics, others) = match future::select(Box::pin(basics), Box::pin(others)).await {
        Either::Left((Err(p), _)) => return Err(Failed::from(p).into()),
        Either::Left((Ok(basics), others)) => (basics, others.await),
        Either::Right((others, basics)) => (basics.await.map_err(Failed::from)?, others),
    };
    let (me, region_problem) = basics;
    let problems: Vec<Problem> = region_problem.into_iter().chain(others).collect();
    tracing::info!(took = ?started.elapsed(), problems = problems.len(), "preflight");
    if problems.is_empty() {
        Ok(me)
    } else {
        Err(Failed(problems).into())
    }
}

async fn caller(cx: &Context) -> Result<Identity, Problem> {
    const OP: &str = "sts:GetCallerIdentity";
    let me = crate::providers::sts::caller_identity::ask_quickly(cx).await.map_err(cannot_call_aws)?;
    let arn = me.arn().unwrap_or_default();
    // `arn:aws-cn:sts::123:assumed-role/x/y` → `aws-cn`.
    let partition = arn.split(':').nth(1).filter(|p| !p.is_empty() && arn.starts_with("arn:"));
    match (me.account(), partition) {
        (Some(account), Some(partition)) => {
            tracing::info!(account, arn, partition, "calling AWS as");
            cx.remember_caller(crate::providers::sts::caller_identity::Identity {
                account_id: account.to_string(),
                arn: arn.to_string(),
                user_id: me.user_id().unwrap_or_default().to_string(),
                partition: partition.to_string(),
            });
            let region = cx.region.as_str();
            crate::ui::json::emit(&crate::ui::json::Line::Identity { account, arn, partition, region });
            Ok(Identity { account: account.to_string(), arn: arn.to_string(), partition: partition.to_string() })
        }
        _ => Err(Problem::new(
            format!("cannot call AWS: {OP} answered without an account or a valid ARN (`{arn}`)"),
            "check AWS_ENDPOINT_URL: whatever answers there does not answer as AWS STS does",
        )),
    }
}

fn cannot_call_aws(e: ProviderError) -> Problem {
    let lower = e.message.to_lowercase();
    let hint = if lower.contains("credentials") {
        "no AWS credentials were found: set AWS_PROFILE (after `aws sso login` for SSO), or AWS_ACCESS_KEY_ID and \
         AWS_SECRET_ACCESS_KEY, or run where instance metadata provides a role"
            .to_string()
    } else if e.code.is_empty() {
        let endpoint = std::env::var("AWS_ENDPOINT_URL").map(|u| format!(" (AWS_ENDPOINT_URL is {u})"));
        format!(
            "AWS could not be reached{}: check the network, a proxy (HTTPS_PROXY), or the endpoint",
            endpoint.unwrap_or_default()
        )
    } else {
        e.hint.clone().unwrap_or_else(|| "check the credentials kbp runs with (`aws sts get-caller-identity`)".into())
    };
    Problem::new(format!("cannot call AWS: {e}"), hint)
}

/// What the region check concludes: the region cannot hold the stack at all (nothing else is worth asking), or
/// it can, perhaps with a problem of its own.
enum Region {
    Unusable(Problem),
    Usable(Option<Problem>),
}

/// The region exists, is enabled for the account and offers EC2: EC2's list of every region of the partition
/// says so. A region that does not exist has no endpoint (DNS fails, or the SDK cannot even build one), so when
/// the region itself does not answer, the list is asked for in a region of the same partition that every
/// account has enabled. EKS is asked in the region by [`offers`].
async fn region(cx: &Context) -> Region {
    use crate::providers::ec2::regions::{all, Asked};
    let region = cx.region.as_str();
    let failed = match all(cx, Asked::Here).await {
        Ok(regions) => return judge(region, &regions, None),
        Err(failed) => failed,
    };
    let elsewhere = anchor(region);
    if failed.timed_out || elsewhere == region {
        return Region::Usable(Some(unreachable_ec2(region, failed.error)));
    }
    match all(cx, Asked::In(elsewhere)).await {
        Ok(regions) => judge(region, &regions, Some(failed.error)),
        Err(_) => Region::Usable(Some(unreachable_ec2(region, failed.error))),
    }
}

/// A region of `region`'s partition that no account can disable (opt-in regions can be).
fn anchor(region: &str) -> &'static str {
    if region.starts_with("cn-") {
        "cn-north-1"
    } else if region.starts_with("us-gov-") {
        "us-gov-west-1"
    } else {
        "us-east-1"
    }
}

/// What EC2's list of regions says of `region`; `failed` is how asking in the region itself failed, if it did.
fn judge(region: &str, regions: &[aws_sdk_ec2::types::Region], failed: Option<ProviderError>) -> Region {
    let Some(found) = regions.iter().find(|r| r.region_name() == Some(region)) else {
        return Region::Unusable(Problem::new(
            format!("region {region} does not exist: EC2 lists no region of that name"),
            "set cluster.region to an AWS region, such as us-west-2 (`aws ec2 describe-regions --all-regions` lists them)",
        ));
    };
    if found.opt_in_status() == Some("not-opted-in") {
        return Region::Unusable(Problem::new(
            format!("region {region} is not enabled for this AWS account"),
            format!(
                "enable it (`aws account enable-region --region-name {region}`, or Account → AWS Regions in the \
                 console) and wait until it is, or choose another cluster.region"
            ),
        ));
    }
    let throttled = |e: &ProviderError| crate::providers::retry::THROTTLING.contains(&e.code.as_str());
    Region::Usable(failed.filter(|e| !throttled(e)).map(|e| unreachable_ec2(region, e)))
}

fn unreachable_ec2(region: &str, e: ProviderError) -> Problem {
    let otherwise = format!(
        "EC2 in {region} could not be asked; check the network path to it (a proxy, a VPC endpoint, a firewall)"
    );
    Problem::call(&format!("cannot ask EC2 in region {region} about the region"), e, &otherwise)
}

/// Whether state holds `r` as made, with the same `key` as the blueprint wants now: then preflight has nothing
/// to check about it (nothing is created, the value does not change).
fn unchanged(state: &State, r: &Resource, key: &str) -> bool {
    state.get(&r.address).is_some_and(|s| {
        s.status == Status::Ready
            && s.attributes.get(key).unwrap_or(&Value::Null) == r.attrs.get(key).unwrap_or(&Value::Null)
    })
}

/// The caller once known, for the checks that need the account (an IAM policy's ARN).
trait Caller: Future<Output = Result<Identity, Problem>> + Clone {}
impl<T: Future<Output = Result<Identity, Problem>> + Clone> Caller for T {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_problem_is_a_message_and_its_hint() {
        let failed = Failed(vec![Problem::new("a is wrong", "fix a"), Problem::new("b is wrong", "fix b")]);
        assert_eq!(failed.to_string(), "a is wrong\n  hint: fix a\nb is wrong\n  hint: fix b");
        let one: anyhow::Error = Failed::from(Problem::new("c", "d")).into();
        assert_eq!(format!("{one:#}"), "c\n  hint: d");
        assert_eq!(one.downcast_ref::<Failed>().map(|f| f.0.len()), Some(1));
    }

    #[test]
    fn a_missing_region_is_asked_for_in_one_every_account_has() {
        for (region, asked) in
            [("us-west-9", "us-east-1"), ("cn-northwest-1", "cn-north-1"), ("us-gov-east-1", "us-gov-west-1")]
        {
            assert_eq!(anchor(region), asked, "the partition of {region}");
        }
    }

    #[test]
    fn judges_a_region_by_ec2s_list() {
        let listed = |name: &str, opt_in: &str| {
            aws_sdk_ec2::types::Region::builder().region_name(name).opt_in_status(opt_in).build()
        };
        let regions = [listed("us-west-2", "opt-in-not-required"), listed("ap-east-1", "not-opted-in")];
        assert!(matches!(judge("us-west-2", &regions, None), Region::Usable(None)));
        let Region::Unusable(p) = judge("us-west-9", &regions, None) else { panic!("us-west-9 is not listed") };
        assert!(p.message.contains("region us-west-9 does not exist"), "{p:?}");
        let Region::Unusable(p) = judge("ap-east-1", &regions, None) else { panic!("ap-east-1 is not enabled") };
        assert!(p.hint.contains("enable-region --region-name ap-east-1"), "{p:?}");
        let throttled = ProviderError::new("ec2:DescribeRegions", "RequestLimitExceeded", "slow down");
        assert!(matches!(judge("us-west-2", &regions, Some(throttled)), Region::Usable(None)));
        let refused = ProviderError::new("ec2:DescribeRegions", "", "could not reach AWS: connection refused");
        let Region::Usable(Some(p)) = judge("us-west-2", &regions, Some(refused)) else {
            panic!("EC2 in the region failed")
        };
        assert!(p.message.contains("cannot ask EC2 in region us-west-2"), "{p:?}");
    }
}
