//! Test doubles of kinds that unit tests of the plan stage only describe and read: the diff, refresh and import
//! never create, change or delete anything. A double implements [`ReadOnly`] and is registered wrapped in
//! [`Reads`], whose create, update and delete fail the test.

use async_trait::async_trait;

use super::{Applied, Context, Descriptor, Desired, Observed, Provider, Result};
use crate::graph::Attrs;

/// A test's kind that is only described and read; see the module documentation.
#[async_trait]
pub trait ReadOnly: Send + Sync {
    /// As [`Provider::descriptor`].
    fn descriptor(&self) -> Descriptor;

    /// As [`Provider::read`]; by default the test does not expect a read.
    async fn read(&self, _cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        panic!("this test reads nothing, yet {id} was read")
    }

    /// As [`Provider::read_many`]: by default [`ReadOnly::read`] for each.
    async fn read_many(&self, cx: &Context, items: &[(String, Attrs)]) -> Result<Vec<Option<Observed>>> {
        futures::future::try_join_all(items.iter().map(|(id, prior)| self.read(cx, id, prior))).await
    }

    /// As [`Provider::find`]; by default nothing is found.
    async fn find(&self, _cx: &Context, _desired: &Desired<'_>) -> Result<Option<String>> {
        Ok(None)
    }
}

/// The [`Provider`] of a [`ReadOnly`] test double.
pub struct Reads<T>(pub T);

#[async_trait]
impl<T: ReadOnly> Provider for Reads<T> {
    fn descriptor(&self) -> Descriptor {
        self.0.descriptor()
    }

    async fn read(&self, cx: &Context, id: &str, prior: &Attrs) -> Result<Option<Observed>> {
        self.0.read(cx, id, prior).await
    }

    async fn read_many(&self, cx: &Context, items: &[(String, Attrs)]) -> Result<Vec<Option<Observed>>> {
        self.0.read_many(cx, items).await
    }

    async fn find(&self, cx: &Context, desired: &Desired<'_>) -> Result<Option<String>> {
        self.0.find(cx, desired).await
    }

    async fn create(&self, _cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        panic!("the plan stage never creates, yet {} was created", desired.address)
    }

    async fn update(&self, _cx: &Context, id: &str, _prior: &Attrs, _desired: &Desired<'_>) -> Result<Applied> {
        panic!("the plan stage never updates, yet {id} was updated")
    }

    async fn delete(&self, _cx: &Context, id: &str, _prior: &Attrs) -> Result<()> {
        panic!("the plan stage never deletes, yet {id} was deleted")
    }
}
