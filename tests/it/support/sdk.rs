//! Builders for what tests create or look up with the raw AWS SDK, in the shapes its builders want.

use aws_sdk_ec2::types::{Filter, ResourceType, Tag, TagSpecification};
use aws_sdk_elasticloadbalancingv2::types::Tag as LbTag;

/// An EC2 Describe* filter on one value.
pub(crate) fn filter(name: &str, value: &str) -> Filter {
    Filter::builder().name(name).values(value).build()
}

/// Tags to put on an EC2 resource of type `resource` as it is created.
pub(crate) fn tag_spec(resource: ResourceType, pairs: &[(&str, &str)]) -> TagSpecification {
    let tags = pairs.iter().map(|(k, v)| Tag::builder().key(*k).value(*v).build()).collect();
    TagSpecification::builder().resource_type(resource).set_tags(Some(tags)).build()
}

/// Tags for an ELBv2 create call.
pub(crate) fn lb_tags(pairs: &[(&str, &str)]) -> Option<Vec<LbTag>> {
    // ELBv2's tag list holds at least one tag when it is sent at all: none is no list.
    (!pairs.is_empty()).then(|| pairs.iter().map(|(k, v)| LbTag::builder().key(*k).value(*v).build()).collect())
}

/// The filter for what kbp tagged as stack `stack`'s.
pub(crate) fn of_stack(stack: &str) -> Filter {
    filter("tag:kbp:stack", stack)
}
