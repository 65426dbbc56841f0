//! Kinds kbp uses but does not own, such as the VPC and subnets `[vpc] id` names: a resource of such a kind is
//! a lookup. Create and update only check that the thing exists as the blueprint says ([`Lookup::verify`]) and
//! report what others build on it; delete never touches it, and destroy forgets it (the descriptor retains it).
//! A kind implements [`Lookup`] and is registered wrapped in [`Uses`], which is its [`Provider`].

use async_trait::async_trait;

use super::{Applied, Context, Descriptor, Desired, Observed, Provider, Result};
use crate::graph::Attrs;

/// A kind kbp looks up and never changes; see the module documentation.
#[async_trait]
pub trait Lookup: Send + Sync {
    /// The kind, one of [`crate::graph::kinds`].
    const KIND: &'static str;

    /// The attributes naming what is looked up (`vpc_id`): naming another is another resource.
    const FORCE_NEW: &'static [&'static str];

    /// As [`Provider::read`].
    async fn read(&self, cx: &Context, id: &str, prior: &Attrs) -> Result<Option<Observed>>;

    /// The desired thing's ID and outputs, or an error saying what to fix in the blueprint when it does not
    /// exist or is not where the blueprint says.
    async fn verify(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied>;
}

/// The [`Provider`] of a [`Lookup`] kind.
pub struct Uses<T>(pub T);

#[async_trait]
impl<T: Lookup> Provider for Uses<T> {
    fn descriptor(&self) -> Descriptor {
        Descriptor::new(T::KIND).force_new(T::FORCE_NEW).retained_on_destroy().looked_up()
    }

    async fn read(&self, cx: &Context, id: &str, prior: &Attrs) -> Result<Option<Observed>> {
        self.0.read(cx, id, prior).await
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        self.0.verify(cx, desired).await
    }

    async fn update(&self, cx: &Context, _id: &str, _prior: &Attrs, desired: &Desired<'_>) -> Result<Applied> {
        self.0.verify(cx, desired).await
    }

    /// kbp never deletes what it does not own.
    async fn delete(&self, _cx: &Context, _id: &str, _prior: &Attrs) -> Result<()> {
        Ok(())
    }
}
