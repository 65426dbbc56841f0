//! What every EC2 kind's [`Provider::tagged`](crate::providers::Provider::tagged) shares: one Describe call per
//! type, filtered by `kbp:stack`, whose answer is checked again against the stack's tags (not every EC2 API
//! implementation applies tag filters to every Describe call, DescribeNatGateways in some, and a filter ignored
//! must not widen the stack), and the names and edges of what it finds.

use aws_sdk_ec2::types::{Filter, Tag};

use crate::providers::tagged::{found, Search};
use crate::providers::tags::{ADDRESS, STACK};
use crate::providers::Found;

/// The filters of a Describe call for what is tagged with the stack's name.
pub(crate) fn filters(search: &Search<'_>) -> Vec<Filter> {
    vec![Filter::builder().name(format!("tag:{STACK}")).values(search.stack()).build()]
}

/// Whether an EC2 resource with `tags` is the stack's.
pub(crate) fn ours(search: &Search<'_>, tags: &[Tag]) -> bool {
    search.owner.owns(|k| tag(tags, k))
}

pub(crate) fn tag<'a>(tags: &'a [Tag], key: &str) -> Option<&'a str> {
    tags.iter().find(|t| t.key() == Some(key)).map(|t| t.value().unwrap_or_default())
}

/// The name to show for an EC2 resource: its `kbp:address`, else its `Name` tag.
pub(crate) fn name(tags: &[Tag]) -> Option<String> {
    tag(tags, ADDRESS).or_else(|| tag(tags, "Name")).map(str::to_string)
}

/// An EC2 resource that lives in a VPC, which goes after it.
pub(crate) fn in_vpc(kind: &'static str, id: Option<&str>, tags: &[Tag], vpc: Option<&str>) -> Found {
    let detail = format!("in {}", vpc.unwrap_or("?"));
    found(kind, id.unwrap_or_default(), name(tags), detail, vpc.map(str::to_string).into_iter().collect())
}
