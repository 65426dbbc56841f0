//! EC2's list of every region of the partition, which says whether a region exists and is enabled for the
//! account: what preflight asks first, under its short timeout.

use aws_sdk_ec2::error::SdkError;
use aws_sdk_ec2::types::Region;

use crate::providers::preflight::quick;
use crate::providers::{Context, ProviderError};

/// Where to ask.
pub enum Asked {
    /// In the context's region, with few attempts: a region that does not exist fails every one of them (a DNS
    /// error counts as transient), and the answer is asked for elsewhere right after.
    Here,
    /// In another region of the same partition.
    In(&'static str),
}

/// Why the list did not come: the error, and whether the request timed out.
pub struct Unanswered {
    /// What the call failed with.
    pub error: ProviderError,
    /// Whether it failed because the time allowed ran out (rather than an answer that refused it).
    pub timed_out: bool,
}

/// Every region of the partition (DescribeRegions with `AllRegions`), asked where `asked` says.
pub async fn all(cx: &Context, asked: Asked) -> Result<Vec<Region>, Unanswered> {
    const OP: &str = "ec2:DescribeRegions";
    let request = cx.ec2().describe_regions().all_regions(true).customize();
    let overrides = match asked {
        Asked::Here => quick!(aws_sdk_ec2).retry_config(crate::aws::retry_config().with_max_attempts(3)),
        Asked::In(region) => quick!(aws_sdk_ec2).region(aws_config::Region::new(region)),
    };
    match request.config_override(overrides).send().await {
        Ok(out) => Ok(out.regions().to_vec()),
        Err(e) => {
            let timed_out = match &e {
                SdkError::TimeoutError(_) => true,
                SdkError::DispatchFailure(d) => d.is_timeout(),
                _ => false,
            };
            Err(Unanswered { error: ProviderError::from_sdk(OP, e), timed_out })
        }
    }
}
