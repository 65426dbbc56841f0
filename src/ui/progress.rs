//! Apply and destroy progress: one spinner per running operation under an "N of M, elapsed" line on a terminal;
//! elsewhere (a CI log) one timestamped line per start and finish, and for each operation still running a
//! "still creating …" line every interval (30 s by default), so a ten-minute wait is never silent. With
//! `--json` the events go to stdout and the same lines to stderr.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

use super::{timestamp_now, Ui};
use crate::exec::Event;
use crate::graph::Address;

/// Renders the executor's events while apply or destroy runs: spinners on a terminal, timestamped lines elsewhere.
pub struct Progress {
    ui: Ui,
    multi: Option<MultiProgress>,
    /// The "N of M, elapsed" line above the spinners.
    header: Option<ProgressBar>,
    bars: HashMap<Address, ProgressBar>,
    running: HashMap<Address, Running>,
    /// Operations finished (done, failed or skipped), and how many the walk has, when the caller knows.
    finished: usize,
    total: Option<usize>,
}

struct Running {
    verb: &'static str,
    since: Instant,
    typical: Option<Duration>,
    /// What AWS last said (CREATING, …), from the wait's looks.
    status: Option<String>,
}

impl Progress {
    /// Progress for a walk of `total` operations (`None` when unknown), live only when `ui` says so.
    pub fn new(ui: Ui, total: Option<usize>) -> Self {
        let multi = ui.live.then(MultiProgress::new);
        let header = multi.as_ref().map(|m| {
            let bar = m.add(ProgressBar::new_spinner());
            bar.set_style(
                ProgressStyle::with_template("{msg} {elapsed}").unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.enable_steady_tick(Duration::from_millis(500));
            bar
        });
        let mut p = Progress { ui, multi, header, bars: HashMap::new(), running: HashMap::new(), finished: 0, total };
        p.update_header();
        p
    }

    fn count(&self) -> String {
        match self.total {
            Some(total) => format!("{} of {}", self.finished.min(total), total),
            None => format!("{}", self.finished),
        }
    }

    fn update_header(&mut self) {
        if let Some(h) = &self.header {
            h.set_message(format!("[{} operations done]", self.count()));
        }
    }

    /// Renders one event: the JSON line with `--json`, and the spinner or log line for it.
    pub fn event(&mut self, e: &Event) {
        if self.ui.json {
            super::json::emit(e);
        }
        let line = match e {
            Event::Started { address, op, typical_s } => {
                let running = Running {
                    verb: op.doing(),
                    since: Instant::now(),
                    typical: typical_s.map(Duration::from_secs),
                    status: None,
                };
                self.running.insert(address.clone(), running);
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
                self.done_with(address);
                let id = id.as_deref().map(|i| format!(" [id={i}]")).unwrap_or_default();
                format!("{address}: {} in {}{id} ({})", op.done(), secs(*elapsed), self.count())
            }
            Event::Failed { address, op, elapsed, error, hint } => {
                self.done_with(address);
                let hint = hint.as_deref().map(|h| format!("\n    hint: {h}")).unwrap_or_default();
                format!("{address}: {} FAILED after {}: {error}{hint}", op.doing(), secs(*elapsed))
            }
            Event::Waiting { address, status, .. } => {
                if let Some(r) = self.running.get_mut(address) {
                    r.status = Some(status.clone());
                }
                if let Some(bar) = self.bars.get(address) {
                    let msg = bar.message();
                    let base = msg.split(" [").next().unwrap_or(&msg).to_string();
                    bar.set_message(format!("{base} [{status}]"));
                }
                return;
            }
            Event::Skipped { address, op, because } => {
                self.done_with(address);
                format!("{address}: not {} because {because} failed", op.done())
            }
        };
        if let Some(bar) = self.address_of(e).and_then(|a| self.bars.remove(a)) {
            bar.finish_and_clear();
            if let Some(m) = &self.multi {
                m.remove(&bar);
            }
        }
        self.print(&line);
    }

    fn done_with(&mut self, address: &Address) {
        self.running.remove(address);
        self.finished += 1;
        self.update_header();
    }

    fn print(&self, line: &str) {
        let stamped = format!("{} {line}", timestamp_now());
        match &self.multi {
            Some(m) => {
                let _ = m.println(stamped);
            }
            None => eprintln!("{stamped}"),
        }
    }

    /// Every interval: a line for each operation running at least that long, where no spinner shows it.
    pub fn tick(&mut self, every: Duration) {
        if self.multi.is_some() {
            return;
        }
        let mut lines: Vec<(Duration, String)> = self
            .running
            .iter()
            .filter(|(_, r)| r.since.elapsed() >= every)
            .map(|(address, r)| {
                let elapsed = r.since.elapsed();
                let typical = r.typical.map(|t| format!(", typically {}", about(t))).unwrap_or_default();
                let status = r.status.as_deref().map(|s| format!(" [{s}]")).unwrap_or_default();
                (elapsed, format!("still {} {address} — {} elapsed{typical}{status}", r.verb, secs(elapsed)))
            })
            .collect();
        lines.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        for (_, line) in lines {
            self.print(&line);
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

    /// Clears the spinners and the header once the walk is over.
    pub fn finish(&mut self) {
        for (_, bar) in self.bars.drain() {
            bar.finish_and_clear();
        }
        if let Some(h) = self.header.take() {
            h.finish_and_clear();
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

/// A typical duration as people say it: `10 min`, `45 s`.
fn about(d: Duration) -> String {
    if d.as_secs() >= 120 {
        format!("{} min", (d.as_secs() + 30) / 60)
    } else {
        format!("{} s", d.as_secs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typical_durations_read_as_people_say_them() {
        assert_eq!(about(Duration::from_secs(600)), "10 min");
        assert_eq!(about(Duration::from_secs(180)), "3 min");
        assert_eq!(about(Duration::from_secs(45)), "45 s");
        assert_eq!(secs(Duration::from_secs(270)), "4m30s");
    }
}
