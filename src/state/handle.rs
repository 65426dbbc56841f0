//! The state in use by one run: loaded once, changed through [`StateHandle::update`], which bumps the serial and
//! persists before returning, so nothing a provider did is ever only in memory.

use std::sync::Mutex;

use super::backend::{Backend, StateError};
use super::State;

/// The state one run reads and changes, persisted through its backend after every change; shared by all steps.
pub struct StateHandle {
    /// Where it is persisted; `None` for a state that lives only for one run (a stack found by its tags).
    backend: Option<Box<dyn Backend>>,
    state: Mutex<State>,
    /// Writes go out one at a time and in order, so the last one persisted is the newest.
    writing: tokio::sync::Mutex<()>,
}

impl StateHandle {
    /// The run's state, loaded from `backend`, which every update persists to.
    pub fn new(backend: Box<dyn Backend>, state: State) -> Self {
        StateHandle { backend: Some(backend), state: Mutex::new(state), writing: tokio::sync::Mutex::new(()) }
    }

    /// A state kept in memory only: a teardown by tags, whose rerun finds what is left by the tags again.
    pub fn in_memory(state: State) -> Self {
        StateHandle { backend: None, state: Mutex::new(state), writing: tokio::sync::Mutex::new(()) }
    }

    /// A copy of the state as it is now.
    pub fn snapshot(&self) -> State {
        self.lock().clone()
    }

    /// Applies `f` to the state, bumps the serial and persists the result before returning `f`'s value.
    pub async fn update<T>(&self, f: impl FnOnce(&mut State) -> T) -> Result<T, StateError> {
        let _writing = self.writing.lock().await;
        let (out, copy) = {
            let mut s = self.lock();
            let out = f(&mut s);
            s.serial += 1;
            (out, s.clone())
        };
        if let Some(backend) = &self.backend {
            backend.persist(&copy).await?;
        }
        Ok(out)
    }

    /// Where the state is persisted, for messages.
    pub fn describe(&self) -> String {
        self.backend
            .as_ref()
            .map_or_else(|| "(in memory: the stack was found by its tags)".to_string(), |b| b.describe())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("invariant: state mutex is never poisoned (no panics while held)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::LocalBackend;

    #[tokio::test]
    async fn handle_bumps_the_serial_and_persists_each_update() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.json");
        let h = StateHandle::new(Box::new(LocalBackend::new(&p)), State::new("demo", "us-west-2"));
        h.update(|s| s.resources.clear()).await.unwrap();
        h.update(|_| ()).await.unwrap();
        let on_disk = LocalBackend::new(&p).load().await.unwrap().unwrap();
        assert_eq!(on_disk.serial, 2);
    }
}
