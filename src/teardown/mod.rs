//! Teardown by tags: finding and deleting what a stack left in AWS whether or not kbp's state knows about it.
//!
//! State-driven destroy (`exec`) deletes what is in state. This module covers the rest:
//! - [`leftovers`]: what Karpenter and in-cluster controllers made for the cluster (nodes, their launch templates
//!   and instance profiles, detached ENIs, load-balancer security groups), which would otherwise block deleting
//!   the subnets, security groups and VPC with `DependencyViolation`;
//! - [`stack()`]: everything tagged `kbp:stack=<name>`, for a stack whose state file is lost;
//! - [`stacks`]: the kbp stacks in a region with their owner and expiry, for `kbp gc`;
//! - [`orphans`]: second resources at one address of a stack (creates whose outcome was unknown), to remove;
//! - [`delete()`]: deleting any such inventory in an order AWS accepts, idempotently and resumably.
//!
//! It does not decide what to delete (the CLI asks and filters) nor print anything (it reports [`Step`]s).

mod delete;
pub mod discover;
mod leftovers;
mod orphans;
mod stack;
mod stacks;

use std::collections::BTreeSet;
use std::fmt;

use serde::Serialize;
use time::OffsetDateTime;

pub use delete::delete;
pub use leftovers::leftovers;
pub use orphans::{held_ids, orphans};
pub use stack::stack;
pub use stacks::stacks;

/// What [`leftovers`] looks at, and what it must not touch.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// The stack's name, which is also the EKS cluster's name.
    pub stack: String,
    /// The stack's VPC(s) if known (from state); when empty, the VPC tagged `kbp:stack=<stack>` is used.
    pub vpc_ids: Vec<String>,
    /// IAM role names Karpenter's nodes may use, whose instance profiles Karpenter creates.
    pub node_roles: Vec<String>,
    /// IDs, ARNs and names in kbp's state: never listed by [`leftovers`].
    pub keep: BTreeSet<String>,
}

/// One AWS resource to delete.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Item {
    pub kind: Kind,
    /// What the delete call takes: an EC2 ID, an IAM name (roles, instance profiles) or ARN (policies, OIDC
    /// providers), `<cluster>:<node group>` for node groups, a queue URL, a rule name, a KMS key ID.
    pub id: String,
    /// Its `kbp:address` or `Name` tag, when it has one.
    pub name: Option<String>,
    /// Why it is listed or what it holds, for the user.
    pub detail: String,
}

/// The kinds of resource teardown knows how to find and delete. The order of the variants is the order
/// [`Inventory`]'s display groups them in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Instance,
    LaunchTemplate,
    InstanceProfile,
    NetworkInterface,
    SecurityGroup,
    NatGateway,
    Address,
    InternetGateway,
    RouteTable,
    Subnet,
    Vpc,
    EksNodegroup,
    EksCluster,
    IamRole,
    IamPolicy,
    OidcProvider,
    SqsQueue,
    EventRule,
    KmsKey,
}

impl Kind {
    pub fn label(self) -> &'static str {
        match self {
            Kind::Instance => "ec2 instance",
            Kind::LaunchTemplate => "ec2 launch template",
            Kind::InstanceProfile => "iam instance profile",
            Kind::NetworkInterface => "ec2 network interface",
            Kind::SecurityGroup => "ec2 security group",
            Kind::NatGateway => "ec2 nat gateway",
            Kind::Address => "ec2 elastic ip",
            Kind::InternetGateway => "ec2 internet gateway",
            Kind::RouteTable => "ec2 route table",
            Kind::Subnet => "ec2 subnet",
            Kind::Vpc => "ec2 vpc",
            Kind::EksNodegroup => "eks node group",
            Kind::EksCluster => "eks cluster",
            Kind::IamRole => "iam role",
            Kind::IamPolicy => "iam policy",
            Kind::OidcProvider => "iam oidc provider",
            Kind::SqsQueue => "sqs queue",
            Kind::EventRule => "eventbridge rule",
            Kind::KmsKey => "kms key",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

impl Item {
    pub fn new(kind: Kind, id: impl Into<String>, name: Option<String>, detail: impl Into<String>) -> Self {
        Item { kind, id: id.into(), name, detail: detail.into() }
    }
}

impl fmt::Display for Item {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.kind.label(), self.id)?;
        if let Some(name) = &self.name {
            write!(f, " ({name})")?;
        }
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

/// What was found: each resource once, in the order found until [`Inventory::sort`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Inventory {
    pub items: Vec<Item>,
}

impl Inventory {
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Adds `item` unless an item of the same kind and ID is already there.
    pub fn push(&mut self, item: Item) {
        if !self.items.iter().any(|i| i.kind == item.kind && i.id == item.id) {
            self.items.push(item);
        }
    }

    /// Groups the items by kind, then by ID, so output and tests are stable.
    pub fn sort(&mut self) {
        self.items.sort_by(|a, b| (a.kind, &a.id).cmp(&(b.kind, &b.id)));
    }

    pub fn ids(&self, kind: Kind) -> Vec<&str> {
        self.items.iter().filter(|i| i.kind == kind).map(|i| i.id.as_str()).collect()
    }
}

/// One line per item, grouped by kind.
impl fmt::Display for Inventory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut items: Vec<&Item> = self.items.iter().collect();
        items.sort_by(|a, b| (a.kind, &a.id).cmp(&(b.kind, &b.id)));
        for item in items {
            writeln!(f, "{item}")?;
        }
        Ok(())
    }
}

/// What [`delete()`] reports about one item. An item AWS finishes with later (a KMS key waits out its pending
/// window) is reported `Deleted` with an item whose `detail` says so ("scheduled for deletion in 7 days").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Deleting,
    Deleted,
    Failed(String),
}

/// A kbp stack found in the region by its tags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackInfo {
    pub name: String,
    /// `kbp:owner`: who applied it (sandbox stacks).
    pub owner: Option<String>,
    /// `kbp:expires` (sandbox stacks); `None` when absent or not RFC 3339.
    pub expires: Option<OffsetDateTime>,
    /// The EKS cluster's creation time; `None` without a cluster (EC2 does not say when a VPC was made).
    pub created: Option<OffsetDateTime>,
}

impl StackInfo {
    /// Whether it has an expiry that has passed at `now`.
    pub fn expired_at(&self, now: OffsetDateTime) -> bool {
        self.expires.is_some_and(|e| e <= now)
    }
}

/// The value of EC2 tag `key`.
fn ec2_tag<'a>(tags: &'a [aws_sdk_ec2::types::Tag], key: &str) -> Option<&'a str> {
    tags.iter().find(|t| t.key() == Some(key)).map(|t| t.value().unwrap_or_default())
}

/// The name to show for an EC2 resource: its `kbp:address`, else its `Name` tag.
fn ec2_name(tags: &[aws_sdk_ec2::types::Tag]) -> Option<String> {
    ec2_tag(tags, crate::providers::tags::ADDRESS).or_else(|| ec2_tag(tags, "Name")).map(str::to_string)
}

/// An EC2 filter on `name` with one value.
fn filter(name: &str, value: &str) -> aws_sdk_ec2::types::Filter {
    aws_sdk_ec2::types::Filter::builder().name(name).values(value).build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inventory_lists_one_line_per_item_grouped_by_kind() {
        let mut inv = Inventory::default();
        inv.push(Item::new(Kind::Vpc, "vpc-1", None, ""));
        inv.push(Item::new(Kind::Instance, "i-2", None, "nodepool default"));
        inv.push(Item::new(Kind::Instance, "i-1", Some("node".into()), ""));
        inv.push(Item::new(Kind::Instance, "i-1", None, "duplicate"));
        assert_eq!(inv.to_string(), "ec2 instance i-1 (node)\nec2 instance i-2: nodepool default\nec2 vpc vpc-1\n");
        assert_eq!(inv.len(), 3);
    }

    #[test]
    fn expiry_is_compared_with_now() {
        let now = OffsetDateTime::now_utc();
        let info = |expires| StackInfo { name: "s".into(), owner: None, expires, created: None };
        assert!(info(Some(now - time::Duration::hours(1))).expired_at(now));
        assert!(!info(Some(now + time::Duration::hours(1))).expired_at(now));
        assert!(!info(None).expired_at(now));
    }
}
