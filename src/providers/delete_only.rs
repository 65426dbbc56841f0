//! Kinds kbp only ever finds and deletes: what Karpenter and in-cluster controllers make for a cluster (nodes,
//! their launch templates and network interfaces, load balancers, volumes, log groups). A blueprint never
//! declares one, so such a kind implements [`Leftover`] (read, delete, discover) and is registered wrapped in
//! [`DeleteOnly`], which answers create and update with [`delete_only`](super::delete_only()).

use async_trait::async_trait;

use super::tagged::Search;
use super::{Applied, Context, Descriptor, Desired, DiscoveryScope, Found, Observed, Provider, Result, WithoutState};
use crate::graph::Attrs;

/// A kind teardown finds outside state and deletes; see the module documentation.
#[async_trait]
pub trait Leftover: Send + Sync {
    /// The kind, one of [`crate::graph::kinds`], such as `aws_lb`.
    const KIND: &'static str;

    /// Who makes it, for the error a create or update would get ("the EBS CSI driver").
    const MADE_BY: &'static str;

    /// As [`Provider::read`].
    async fn read(&self, cx: &Context, id: &str, prior: &Attrs) -> Result<Option<Observed>>;

    /// As [`Provider::delete`].
    async fn delete(&self, cx: &Context, id: &str, prior: &Attrs) -> Result<()>;

    /// As [`Provider::discover`].
    async fn discover(&self, cx: &Context, scope: &DiscoveryScope<'_>) -> Result<Vec<Found>>;

    /// Whether kbp's own tags also find it ([`Leftover::tagged`]), besides [`Leftover::discover`].
    const FOUND_BY_TAGS: bool = false;

    /// As [`Provider::tagged`], for a kind that says [`Leftover::FOUND_BY_TAGS`].
    async fn tagged(&self, _cx: &Context, _search: &Search<'_>) -> Result<Vec<Found>> {
        Ok(Vec::new())
    }
}

/// The [`Provider`] of a [`Leftover`] kind.
pub struct DeleteOnly<T>(pub T);

#[async_trait]
impl<T: Leftover> Provider for DeleteOnly<T> {
    fn descriptor(&self) -> Descriptor {
        let found = if T::FOUND_BY_TAGS { WithoutState::Tags } else { WithoutState::Discovered };
        Descriptor::new(T::KIND, found, &[])
    }

    async fn read(&self, cx: &Context, id: &str, prior: &Attrs) -> Result<Option<Observed>> {
        self.0.read(cx, id, prior).await
    }

    async fn create(&self, _cx: &Context, _desired: &Desired<'_>) -> Result<Applied> {
        Err(super::delete_only(T::KIND, T::MADE_BY))
    }

    async fn update(&self, _cx: &Context, _id: &str, _prior: &Attrs, _desired: &Desired<'_>) -> Result<Applied> {
        Err(super::delete_only(T::KIND, T::MADE_BY))
    }

    async fn delete(&self, cx: &Context, id: &str, prior: &Attrs) -> Result<()> {
        self.0.delete(cx, id, prior).await
    }

    async fn discover(&self, cx: &Context, scope: &DiscoveryScope<'_>) -> Result<Vec<Found>> {
        self.0.discover(cx, scope).await
    }

    async fn tagged(&self, cx: &Context, search: &Search<'_>) -> Result<Vec<Found>> {
        self.0.tagged(cx, search).await
    }
}
