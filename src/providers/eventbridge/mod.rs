//! EventBridge providers: the rules on the default event bus that forward AWS Health and EC2 interruption
//! events to Karpenter's queue. One resource is a rule together with its one target, since a rule without its
//! target does nothing and AWS will not delete a rule that still has targets. `targets` owns the target calls.
//!
//! Not here: custom event buses, schedules, and targets other than one ARN without input transformation.

pub(crate) mod rule;
mod targets;
