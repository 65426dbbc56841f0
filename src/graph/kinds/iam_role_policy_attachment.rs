//! `aws_iam_role_policy_attachment`: the attributes the compiler emits for a managed policy attached to a role
//! and its provider reads ([`super`]).

use serde::{Deserialize, Serialize};

/// A managed policy attached to a role. Both may be other resources' outputs (the stack's roles, its own
/// Karpenter policies), so both are `R`; together they are the attachment, and a change to either replaces it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RolePolicyAttachment<R> {
    /// The name (not the ARN) of the role IAM attaches the policy to: the role resource's `name` output.
    pub role: R,
    /// The managed policy's ARN: one of AWS's (`arn:<partition>:iam::aws:policy/…`, its partition the caller's)
    /// or the `arn` output of one of the stack's own policies.
    pub policy_arn: R,
}
