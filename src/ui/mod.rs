//! Everything the user sees. The engine emits [`Event`]s; this layer renders them as live progress on a terminal,
//! as plain timestamped lines otherwise, or as JSON lines for machines. Plans and diagnostics are rendered by
//! their own modules and printed from here.

mod progress;

use std::io::IsTerminal;

use time::format_description::well_known::Rfc3339;
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

/// The current time as RFC 3339 UTC with milliseconds.
pub fn timestamp_now() -> String {
    let now = OffsetDateTime::now_utc();
    let now = now.replace_nanosecond(now.millisecond() as u32 * 1_000_000).unwrap_or(now);
    now.format(&Rfc3339).unwrap_or_else(|_| now.unix_timestamp().to_string())
}
