//! SIGINT, SIGTERM and SIGHUP: Ctrl-C in a terminal, a CI runner cancelling or timing out a job, a closed SSH
//! session. All three stop kbp the same way, so a cancelled pipeline never leaves the S3 state lock behind:
//!
//! - while a walk changes things, the first signal starts no new operation; the running ones finish and are
//!   written to state, and the command ends with its summary (`interrupted: true` under `--json`);
//! - outside a walk (refreshing, planning, asking), and at a second signal during one, kbp stops at once: every
//!   create in flight is already in state as an intent, so nothing is lost; the lock is released first.
//!
//! The exit status is the shell's for the signal (128 + its number): 130 SIGINT, 143 SIGTERM, 129 SIGHUP.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Mutex;

use crate::exec;

/// The signal that stopped or is stopping this run (0: none yet).
static RECEIVED: AtomicI32 = AtomicI32::new(0);

/// The walk running now, if any: its interrupt flag and the command that resumes it.
static WALK: Mutex<Option<(exec::Interrupt, String)>> = Mutex::new(None);

/// A signal that stops kbp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stop {
    Int,
    Term,
    Hup,
}

impl Stop {
    fn number(self) -> i32 {
        match self {
            Stop::Int => libc::SIGINT,
            Stop::Term => libc::SIGTERM,
            Stop::Hup => libc::SIGHUP,
        }
    }

    fn from_number(n: i32) -> Option<Stop> {
        [Stop::Int, Stop::Term, Stop::Hup].into_iter().find(|s| s.number() == n)
    }

    /// The exit status a shell gives a process this signal ended.
    pub(super) fn exit_code(self) -> u8 {
        (128 + self.number()) as u8
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Stop::Int => "SIGINT",
            Stop::Term => "SIGTERM",
            Stop::Hup => "SIGHUP",
        }
    }

    /// How the user would say "again": Ctrl-C for an interactive interrupt, else the signal's name.
    fn again(self) -> &'static str {
        match self {
            Stop::Int => "Ctrl-C again",
            Stop::Term => "SIGTERM again",
            Stop::Hup => "SIGHUP again",
        }
    }
}

/// The signal received during this run, if one was.
pub(super) fn received() -> Option<Stop> {
    Stop::from_number(RECEIVED.load(Ordering::SeqCst))
}

/// Listens for the three signals for the rest of the process. Call once, inside the runtime, before anything
/// that holds a lock starts.
pub(super) fn listen() {
    use tokio::signal::unix::{signal, SignalKind};
    let kinds = [
        (SignalKind::interrupt(), Stop::Int),
        (SignalKind::terminate(), Stop::Term),
        (SignalKind::hangup(), Stop::Hup),
    ];
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    for (kind, stop) in kinds {
        match signal(kind) {
            Ok(mut s) => {
                let tx = tx.clone();
                tokio::spawn(async move {
                    while s.recv().await.is_some() {
                        if tx.send(stop).is_err() {
                            break;
                        }
                    }
                });
            }
            Err(e) => tracing::warn!("cannot listen for {}: {e}", stop.name()),
        }
    }
    tokio::spawn(async move {
        while let Some(stop) = rx.recv().await {
            on_signal(stop).await;
        }
    });
}

async fn on_signal(stop: Stop) {
    let first = RECEIVED.compare_exchange(0, stop.number(), Ordering::SeqCst, Ordering::SeqCst).is_ok();
    let walk = WALK.lock().unwrap_or_else(|p| p.into_inner()).clone();
    match walk {
        Some((flag, verb)) if first => {
            flag.store(true, Ordering::SeqCst);
            eprintln!(
                "\nInterrupted ({}): starting nothing new, waiting for the running operations to finish and be \
                 written to state ({} to stop now; `kbp {verb}` resumes).",
                stop.name(),
                stop.again()
            );
        }
        _ => stop_now(received().unwrap_or(stop)).await,
    }
}

/// Ends the process at once: the lock let go, the `--json` summary written, the signal's exit status.
async fn stop_now(stop: Stop) -> ! {
    super::release_locks().await;
    crate::ui::json::summarize(serde_json::json!({ "interrupted": true, "signal": stop.name() }));
    crate::ui::json::finish(stop.exit_code());
    let resume = WALK.lock().unwrap_or_else(|p| p.into_inner()).as_ref().map(|(_, v)| v.clone());
    match resume {
        Some(verb) => eprintln!(
            "\nInterrupted ({}): stopped at once. Operations in flight are recorded in state as intents; run `kbp \
             {verb}` again to finish.",
            stop.name()
        ),
        None => eprintln!("\nInterrupted ({}).", stop.name()),
    }
    std::process::exit(stop.exit_code().into());
}

/// A walk in progress, as signals see it: the first signal sets `interrupt` instead of stopping kbp. Dropped
/// when the walk ends, so a signal after it stops at once again.
pub(super) struct Walking {
    pub interrupt: exec::Interrupt,
}

/// Registers a walk that `kbp {verb}` resumes.
pub(super) fn walking(verb: &str) -> Walking {
    let interrupt = exec::Interrupt::default();
    if received().is_some() {
        interrupt.store(true, Ordering::SeqCst);
    }
    *WALK.lock().unwrap_or_else(|p| p.into_inner()) = Some((interrupt.clone(), verb.to_string()));
    Walking { interrupt }
}

impl Drop for Walking {
    fn drop(&mut self) {
        *WALK.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

/// After a command ends: the exit status a signal asks for, and the `--json` summary's `interrupted`.
pub(super) fn settle(code: u8) -> u8 {
    match received() {
        Some(stop) => {
            crate::ui::json::summarize(serde_json::json!({ "interrupted": true, "signal": stop.name() }));
            stop.exit_code()
        }
        None => code,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_are_the_shells() {
        assert_eq!((Stop::Int.exit_code(), Stop::Term.exit_code(), Stop::Hup.exit_code()), (130, 143, 129));
        assert_eq!(Stop::from_number(libc::SIGTERM), Some(Stop::Term));
        assert_eq!(Stop::from_number(0), None);
    }
}
