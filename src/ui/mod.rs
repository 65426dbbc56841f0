//! Everything the user sees. The engine emits [`Event`]s; this layer renders them as live progress on a terminal,
//! as plain timestamped lines otherwise, or as JSON lines for machines. Plans and diagnostics are rendered by
//! their own modules and printed from here.

// The ui writes on stdout what the commands show (the crate denies it elsewhere: Cargo.toml [lints]).
#![allow(clippy::print_stdout)]

pub mod json;
mod progress;
pub mod redact;

use std::io::IsTerminal;

use time::OffsetDateTime;
use tokio::sync::mpsc::UnboundedReceiver;

use crate::exec::Event;

pub use progress::Progress;

/// The status of a process ended by SIGPIPE, which kbp ends with when stdout is closed under it.
pub(crate) const CLOSED_STDOUT: u8 = 141;

/// How output is rendered, decided once from the flags and the terminal.
#[derive(Debug, Clone, Copy)]
pub struct Ui {
    /// Whether stdout is the `--json` event stream (human text then goes to stderr).
    pub json: bool,
    /// Whether stdout gets colour: only on a terminal, and never with `--json`, `--no-color` or `NO_COLOR`.
    pub color: bool,
    /// Live progress (spinners) rather than lines: only on a terminal.
    pub live: bool,
    /// How often a running operation gets a "still …" line in a log (`--progress-interval`).
    pub progress_every: std::time::Duration,
}

impl Ui {
    /// The rendering for the `--json` and `--no-color` flags, with live progress when stderr is a terminal.
    pub fn new(json: bool, no_color: bool) -> Self {
        let tty = std::io::stderr().is_terminal();
        let color = !json && crate::color::enabled(no_color, crate::color::Stream::Stdout);
        Ui { json, color, live: tty && !json, progress_every: std::time::Duration::from_secs(30) }
    }

    /// With "still …" lines every `every` (at least a second).
    pub fn every(self, every: std::time::Duration) -> Self {
        Ui { progress_every: every.max(std::time::Duration::from_secs(1)), ..self }
    }

    /// Renders events until the sender is dropped.
    pub async fn render_events(self, rx: UnboundedReceiver<Event>) {
        self.render_counted(rx, None).await
    }

    /// Renders the events of a walk of `total` operations (shown as "N of M" when known), with a line every
    /// [`Ui::progress_every`] for each operation still running where no spinner shows it.
    pub async fn render_counted(self, mut rx: UnboundedReceiver<Event>, total: Option<usize>) {
        let mut progress = Progress::new(self, total);
        let mut tick = tokio::time::interval(self.progress_every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        loop {
            tokio::select! {
                e = rx.recv() => match e {
                    Some(e) => progress.event(&e),
                    None => break,
                },
                _ = tick.tick() => progress.tick(self.progress_every),
            }
        }
        progress.finish();
    }
}

/// A line of human text: on stdout, unless stdout is the `--json` event stream (then on stderr, where a CI log
/// still shows it).
pub fn say(text: impl std::fmt::Display) {
    if json::on() {
        eprintln!("{text}");
    } else {
        println!("{text}");
    }
}

/// The current time as RFC 3339 UTC with exactly three fractional digits, so timestamps sort as text.
pub fn timestamp_now() -> String {
    let now = OffsetDateTime::now_utc();
    let format =
        time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");
    now.format(&format).unwrap_or_else(|_| now.unix_timestamp().to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn timestamps_have_a_fixed_width() {
        let t = super::timestamp_now();
        assert_eq!(t.len(), "2026-12-02T14:43:09.161Z".len(), "{t}");
        assert!(t.ends_with('Z'));
    }
}
