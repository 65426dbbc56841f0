//! CloudWatch Logs providers: the log group EKS writes a cluster's control-plane logs to. EKS creates it when
//! control-plane logging is on and leaves it behind when the cluster is deleted, so kbp never creates it;
//! teardown finds it by its name and deletes it.

pub(crate) mod log_group;
