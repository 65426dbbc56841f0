//! Everything the user sees. The engine emits [`Event`]s; this layer renders them as live progress on a terminal,
//! as plain timestamped lines otherwise, or as JSON lines for machines. Plans and diagnostics are rendered by
//! their own modules and printed from here.

pub mod json;
mod progress;
pub mod redact;

use std::io::IsTerminal;

use time::OffsetDateTime;
use tokio::sync::mpsc::UnboundedReceiver;

use crate::exec::Event;

pub use progress::Progress;

/// How output is rendered, decided once from the flags and the terminal.
#[derive(Debug, Clone, Copy)]
pub struct Ui {
    pub json: bool,
    pub color: bool,
    /// Live progress (spinners) rather than lines: only on a terminal.
    pub live: bool,
}

impl Ui {
    pub fn new(json: bool, no_color: bool) -> Self {
        let tty = std::io::stderr().is_terminal();
        let color = !json && !no_color && std::env::var_os("NO_COLOR").is_none() && std::io::stdout().is_terminal();
        Ui { json, color, live: tty && !json }
    }

    /// Renders events until the sender is dropped.
    pub async fn render_events(self, mut rx: UnboundedReceiver<Event>) {
        let mut progress = Progress::new(self);
        while let Some(e) = rx.recv().await {
            progress.event(&e);
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
