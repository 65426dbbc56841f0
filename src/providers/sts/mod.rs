//! STS data sources: who kbp runs as, for ARNs and policies that name the account.

pub mod caller_identity;
