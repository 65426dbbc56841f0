//! Refresh: read every resource in state from AWS, concurrently, and return the state as it really is. A resource
//! that is gone drops out (the diff will create it again); an interrupted create is looked up by its kbp tags and
//! adopted when found. Refreshing never writes state; apply persists what it learns as it goes.

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::graph::{value, Address, ResourceGraph};
use crate::providers::{tags, Context, Desired, Observed, ProviderError, Registry};
use crate::state::{State, Status};

#[derive(Debug, Clone)]
pub struct Refreshed {
    pub state: State,
    /// In state but no longer in AWS.
    pub gone: Vec<Address>,
    /// Interrupted creates found in AWS by their kbp tags and adopted.
    pub adopted: Vec<Address>,
}

enum Outcome {
    Found(Observed),
    Adopted(String, Observed),
    Gone,
    StillPending,
}

/// Reads every resource of `state` whose kind has a provider; `graph` supplies the desired attributes needed to
/// look up interrupted creates.
pub async fn refresh(
    cx: Arc<Context>,
    registry: &Registry,
    state: &State,
    graph: Option<&ResourceGraph>,
    parallelism: usize,
) -> Result<Refreshed, (Address, ProviderError)> {
    let permits = Arc::new(Semaphore::new(parallelism.max(1)));
    let mut tasks = JoinSet::new();
    for r in state.resources.values() {
        let Some(provider) = registry.get(&r.kind) else { continue };
        let r = r.clone();
        let cx = cx.clone();
        let permits = permits.clone();
        let desired = graph.and_then(|g| g.get(&r.address)).map(|d| {
            let (attrs, _) = value::resolve(&serde_json::Value::Object(d.attrs.clone()), &|a, o| state.output(a, o));
            attrs.as_object().cloned().unwrap_or_default()
        });
        tasks.spawn(async move {
            let _permit = permits.acquire().await.expect("invariant: the semaphore is never closed");
            let outcome = match (&r.status, &r.id) {
                (Status::Ready, Some(id)) => match provider.read(&cx, id, &r.attributes).await {
                    Ok(Some(o)) => Ok(Outcome::Found(o)),
                    Ok(None) => Ok(Outcome::Gone),
                    Err(e) => Err(e),
                },
                (Status::Creating { client_token }, _) => {
                    let attrs = desired.unwrap_or_else(|| r.attributes.clone());
                    let d = Desired {
                        address: &r.address,
                        attrs: &attrs,
                        kbp_tags: tags::kbp_tags(&cx.stack, &r.address),
                        client_token,
                    };
                    match provider.find(&cx, &d).await {
                        Ok(Some(id)) => match provider.read(&cx, &id, &attrs).await {
                            Ok(Some(o)) => Ok(Outcome::Adopted(id, o)),
                            Ok(None) => Ok(Outcome::StillPending),
                            Err(e) => Err(e),
                        },
                        Ok(None) => Ok(Outcome::StillPending),
                        Err(e) => Err(e),
                    }
                }
                (Status::Ready, None) => Ok(Outcome::Gone),
            };
            (r.address, outcome)
        });
    }

    let mut outcomes = BTreeMap::new();
    while let Some(joined) = tasks.join_next().await {
        let (address, outcome) = joined.expect("invariant: refresh tasks do not panic");
        match outcome {
            Ok(o) => {
                outcomes.insert(address, o);
            }
            Err(e) => return Err((address, e)),
        }
    }

    let mut next = state.clone();
    let mut gone = Vec::new();
    let mut adopted = Vec::new();
    for (address, outcome) in outcomes {
        match outcome {
            Outcome::Found(o) => merge(&mut next, &address, None, o),
            Outcome::Adopted(id, o) => {
                merge(&mut next, &address, Some(id), o);
                adopted.push(address);
            }
            Outcome::Gone => {
                next.resources.remove(&address);
                gone.push(address);
            }
            Outcome::StillPending => {}
        }
    }
    Ok(Refreshed { state: next, gone, adopted })
}

fn merge(state: &mut State, address: &Address, id: Option<String>, o: Observed) {
    let Some(r) = state.resources.get_mut(address) else { return };
    if let Some(id) = id {
        r.id = Some(id);
        r.status = Status::Ready;
    }
    r.attributes.extend(o.attrs);
    r.outputs.extend(o.outputs);
}
