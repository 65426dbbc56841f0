//! `kbp force-unlock LOCK_ID`: removes the state lock a killed run left, after showing who held it.

use super::args::{ForceUnlockArgs, Global};
use super::common::{self, FAILED};
use super::state::locate;
use crate::state;

pub(super) async fn run(a: ForceUnlockArgs, _g: &Global) -> u8 {
    let result = async {
        let location = locate(&a.query)?;
        let backend = state::open(&location).await?;
        if !a.auto_approve {
            let holder = match backend.holder().await? {
                Some(h) => format!(", held by {h}"),
                None => String::new(),
            };
            let question = format!(
                "Remove lock {} of state {location}{holder}?\nOnly do this if the run that holds it is dead: a live \
                 run would then write over whoever takes the lock next.",
                a.lock_id
            );
            if !common::confirm(&question)? {
                eprintln!("force-unlock cancelled.");
                return Ok(FAILED);
            }
        }
        let holder = backend.force_unlock(&a.lock_id).await?;
        println!("Removed lock {} of state {location}, held by {holder}.", a.lock_id);
        anyhow::Ok(0)
    };
    result.await.unwrap_or_else(|e| common::report(&e))
}
