//! CloudWatch Logs providers: the log group EKS writes a cluster's control-plane logs to. EKS creates it when
//! control-plane logging is on and leaves it behind when the cluster is deleted, so kbp never creates it;
//! teardown finds it by its name and deletes it.

mod log_group;

use super::Registry;

pub fn register(r: &mut Registry) {
    r.add(super::delete_only::DeleteOnly(log_group::LogGroup));
}
