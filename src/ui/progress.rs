//! Apply and destroy progress: one spinner per running operation on a terminal, one timestamped line per start
//! and finish elsewhere, one JSON object per event with `--json`.

use std::collections::HashMap;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

use super::{timestamp_now, Ui};
use crate::exec::Event;
use crate::graph::Address;

pub struct Progress {
    ui: Ui,
    multi: Option<MultiProgress>,
    bars: HashMap<Address, ProgressBar>,
    /// When each waiting resource was last reported as a line, so plain output says "still creating" every
    /// [`WAIT_LINE_EVERY`], not at every poll.
    last_wait_line: HashMap<Address, Duration>,
}

const WAIT_LINE_EVERY: Duration = Duration::from_secs(30);

impl Progress {
    pub fn new(ui: Ui) -> Self {
        Progress { ui, multi: ui.live.then(MultiProgress::new), bars: HashMap::new(), last_wait_line: HashMap::new() }
    }

    pub fn event(&mut self, e: &Event) {
        if self.ui.json {
            super::json::emit(e);
            return;
        }
        let line = match e {
            Event::Started { address, op } => {
                if let Some(m) = &self.multi {
                    let bar = m.add(ProgressBar::new_spinner());
                    bar.set_style(
                        ProgressStyle::with_template("{spinner} {msg} {elapsed}")
                            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                    );
                    bar.set_message(format!("{address}: {}…", op.doing()));
                    bar.enable_steady_tick(Duration::from_millis(120));
                    self.bars.insert(address.clone(), bar);
                    return;
                }
                format!("{address}: {}…", op.doing())
            }
            Event::Finished { address, op, elapsed, id } => {
                let id = id.as_deref().map(|i| format!(" [id={i}]")).unwrap_or_default();
                format!("{address}: {} in {}{id}", op.done(), secs(*elapsed))
            }
            Event::Failed { address, op, elapsed, error, hint } => {
                let hint = hint.as_deref().map(|h| format!("\n    hint: {h}")).unwrap_or_default();
                format!("{address}: {} FAILED after {}: {error}{hint}", op.doing(), secs(*elapsed))
            }
            Event::Waiting { address, status, waited } => {
                if let Some(bar) = self.bars.get(address) {
                    let msg = bar.message();
                    let base = msg.split(" [").next().unwrap_or(&msg).to_string();
                    bar.set_message(format!("{base} [{status}]"));
                    return;
                }
                let last = self.last_wait_line.get(address).copied();
                if last.is_some_and(|l| *waited < l + WAIT_LINE_EVERY) || (last.is_none() && *waited < WAIT_LINE_EVERY)
                {
                    return;
                }
                self.last_wait_line.insert(address.clone(), *waited);
                format!("{address}: still waiting after {} ({status})", secs(*waited))
            }
            Event::Skipped { address, op, because } => {
                format!("{address}: not {} because {because} failed", op.done())
            }
        };
        let stamped = format!("{} {line}", timestamp_now());
        match &self.multi {
            Some(m) => {
                if let Some(bar) = self.address_of(e).and_then(|a| self.bars.remove(a)) {
                    bar.finish_and_clear();
                    m.remove(&bar);
                }
                let _ = m.println(stamped);
            }
            None => eprintln!("{stamped}"),
        }
    }

    fn address_of<'e>(&self, e: &'e Event) -> Option<&'e Address> {
        match e {
            Event::Finished { address, .. } | Event::Failed { address, .. } | Event::Skipped { address, .. } => {
                Some(address)
            }
            Event::Started { .. } | Event::Waiting { .. } => None,
        }
    }

    pub fn finish(&mut self) {
        for (_, bar) in self.bars.drain() {
            bar.finish_and_clear();
        }
    }
}

fn secs(d: Duration) -> String {
    if d.as_secs() >= 60 {
        format!("{}m{:02}s", d.as_secs() / 60, d.as_secs() % 60)
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}
