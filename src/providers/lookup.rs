//! Kinds kbp uses but does not own, such as the VPC and subnets `[vpc] id` names: a resource of such a kind is
//! a lookup. Create and update only check that the thing exists as the blueprint says; delete never touches it,
//! and destroy forgets it (the descriptor retains it). A kind implements [`Lookup`] (how to describe one, what
//! it reports) and is registered wrapped in [`Uses`], which is its [`Provider`]: the reads, the checks and the
//! errors are written once here.

use async_trait::async_trait;
use serde::de::DeserializeOwned;

use super::{spec, Applied, Context, Descriptor, Desired, Observed, Provider, ProviderError, Result, WithoutState};
use crate::graph::Attrs;

/// A kind kbp looks up and never changes; see the module documentation.
#[async_trait]
pub trait Lookup: Send + Sync {
    /// The kind, one of [`crate::graph::kinds`].
    const KIND: &'static str;
    /// The attribute naming what is looked up (`vpc_id`), whose value is the resource's ID: naming another is
    /// another resource.
    const NAMED_BY: &'static str;
    /// What messages call one: `VPC`, `subnet`.
    const NOUN: &'static str;
    /// The Describe operation, and the error code AWS gives for an ID it does not know.
    const DESCRIBE: &'static str;
    /// The error code of the Describe operation for an ID it does not know.
    const NOT_FOUND: &'static str;
    /// What to check in the blueprint when the ID is wrong.
    const HINT: &'static str;
    /// Why destroy leaves it in place, as the plan says.
    const KEPT_BECAUSE: &'static str;

    /// What the Describe call answers for one.
    type Found: Send + Sync;
    /// The attributes the compiler emits, references resolved ([`crate::graph::kinds`]).
    type Spec: DeserializeOwned + Send + Sync;

    /// The ID `spec` names, the value of its [`Self::NAMED_BY`].
    fn named(spec: &Self::Spec) -> &str;

    /// The one named `id`, or `None` when AWS does not know it.
    async fn describe(cx: &Context, id: &str) -> Result<Option<Self::Found>>;
    /// Its attributes, as the compiler emits them.
    fn attrs(found: &Self::Found) -> Attrs;
    /// What others build on it.
    fn outputs(found: &Self::Found) -> Attrs;
    /// Whether it is where the blueprint says, beyond existing (a subnet in the blueprint's VPC).
    fn check(_found: &Self::Found, _desired: &Self::Spec) -> Result<()> {
        Ok(())
    }

    /// The one named `id`, which must exist: a malformed ID or one AWS does not know is an error saying what to
    /// check in the blueprint.
    async fn existing(cx: &Context, id: &str) -> Result<Self::Found> {
        let found = Self::describe(cx, id).await.map_err(|e| malformed(e, Self::HINT))?;
        found.ok_or_else(|| {
            let message = format!("{} {id} does not exist in {}", Self::NOUN, cx.region);
            ProviderError::new(Self::DESCRIBE, Self::NOT_FOUND, message).with_hint(Self::HINT)
        })
    }
}

/// `e` with `hint` when AWS refused the ID as malformed (such as not `vpc-` and hex digits): a typo in the
/// blueprint.
fn malformed(e: ProviderError, hint: &str) -> ProviderError {
    if e.code.ends_with(".Malformed") {
        e.with_hint(hint)
    } else {
        e
    }
}

/// The [`Provider`] of a [`Lookup`] kind.
pub struct Uses<T>(pub T);

impl<T: Lookup> Uses<T> {
    /// The desired one's ID and outputs, or an error saying what to fix in the blueprint when it does not exist or
    /// is not where the blueprint says.
    async fn verify(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        let s: T::Spec = spec::parse(T::KIND, desired.attrs)?;
        let id = T::named(&s);
        let found = T::existing(cx, id).await?;
        T::check(&found, &s)?;
        Ok(Applied { id: id.to_string(), outputs: T::outputs(&found) })
    }
}

#[async_trait]
impl<T: Lookup> Provider for Uses<T> {
    fn descriptor(&self) -> Descriptor {
        Descriptor::new(T::KIND, WithoutState::Kept(T::KEPT_BECAUSE), &[])
            .force_new(const { &[T::NAMED_BY] })
            .looked_up()
    }

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        let found = T::describe(cx, id).await?;
        Ok(found.map(|f| Observed { attrs: T::attrs(&f), outputs: T::outputs(&f) }))
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        self.verify(cx, desired).await
    }

    async fn update(&self, cx: &Context, _id: &str, _prior: &Attrs, desired: &Desired<'_>) -> Result<Applied> {
        self.verify(cx, desired).await
    }

    /// kbp never deletes what it does not own.
    async fn delete(&self, _cx: &Context, _id: &str, _prior: &Attrs) -> Result<()> {
        Ok(())
    }
}
