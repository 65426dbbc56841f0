//! STS data sources: who kbp runs as, for ARNs and policies that name the account.

pub mod caller_identity;

use super::Registry;

pub fn register(r: &mut Registry) {
    r.add(caller_identity::CallerIdentity);
}
