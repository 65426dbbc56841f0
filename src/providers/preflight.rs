//! What preflight asks of the providers before anything is made: who holds each account- or region-unique name
//! the stack will create ([`UniqueName`], [`Provider::name_holder`](super::Provider::name_holder)), and the
//! reads of the region, the caller and what EKS offers that each service's module answers. Every such request
//! carries the short preflight timeout (`quick!`), so a stack that cannot be made fails in seconds.

use std::collections::BTreeMap;

use aws_sdk_ec2::error::{ProvideErrorMetadata, SdkError};

use super::attrs::absent_if_gone;
use super::tags::STACK;
use super::ProviderError;

/// The per-call settings of every preflight request of service `$svc`: the short preflight timeout.
macro_rules! quick {
    ($svc:ident) => {
        $svc::config::Builder::default().timeout_config($crate::aws::preflight_timeout_config())
    };
}
pub(crate) use quick;

/// A name unique in the account or the region that a kind's create claims: preflight asks who holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UniqueName {
    /// What it is, for people: `IAM role`.
    pub what: &'static str,
    /// The attribute holding it (`name`; a KMS key's `alias`).
    pub attr: &'static str,
}

/// Whoever holds a unique name: nobody, or a resource tagged with this `kbp:stack` (`None`: untagged).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Holder {
    /// No resource holds the name: it is free.
    Nobody,
    /// A resource holds it, tagged as the stack named (`None`: without a `kbp:stack` tag).
    Stack(Option<String>),
}

impl Holder {
    /// The holder of a name whose resource has `tags` (all of them, kbp's included).
    pub fn tagged(tags: impl IntoIterator<Item = (String, String)>) -> Self {
        let mut tags: BTreeMap<String, String> = tags.into_iter().collect();
        Holder::Stack(tags.remove(STACK))
    }
}

/// The answer of a preflight read, `None` when what it reads does not exist.
pub fn read<O, E>(op: &str, r: Result<O, SdkError<E>>) -> Result<Option<O>, ProviderError>
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    absent_if_gone(r.map_err(|e| ProviderError::from_sdk(op, e)))
}
