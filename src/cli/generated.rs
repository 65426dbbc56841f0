//! What is generated from the command definition (`args.rs`), so it never disagrees with `kbp --help`: shell
//! completion scripts (clap_complete) and manual pages (clap_mangen).

use std::path::Path;

use clap::CommandFactory;

use super::args::{Cli, CompletionsArgs, ManArgs};
use super::common::FAILED;

pub(super) fn completions(a: CompletionsArgs) -> u8 {
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut Cli::command(), "kbp", &mut script);
    print(&script)
}

pub(super) fn man(a: ManArgs) -> u8 {
    let cli = Cli::command();
    let result = match &a.dir {
        None => {
            let mut page = Vec::new();
            match clap_mangen::Man::new(cli).render(&mut page) {
                Ok(()) => return print(&page),
                Err(e) => Err(e),
            }
        }
        Some(dir) => write_pages(cli, dir),
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            let place = a.dir.as_ref().map(|d| format!(" into {}", d.display())).unwrap_or_default();
            eprintln!("error: writing the manual{place}: {e}\n  hint: the directory must exist and be writable");
            FAILED
        }
    }
}

/// Writes `bytes` to stdout; a reader gone away ends kbp quietly, as everywhere (see `cli::main`).
fn print(bytes: &[u8]) -> u8 {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => 0,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => crate::ui::CLOSED_STDOUT,
        Err(e) => {
            eprintln!("error: writing to stdout: {e}");
            FAILED
        }
    }
}

/// `kbp.1`, then `kbp-<command>.1` for every command and `kbp-<command>-<sub>.1` for nested ones.
fn write_pages(cmd: clap::Command, dir: &Path) -> std::io::Result<()> {
    let mut todo = vec![(cmd.get_name().to_string(), cmd)];
    while let Some((name, cmd)) = todo.pop() {
        let mut page = Vec::new();
        clap_mangen::Man::new(cmd.clone()).title(name.clone()).render(&mut page)?;
        std::fs::write(dir.join(format!("{name}.1")), page)?;
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            todo.push((format!("{name}-{}", sub.get_name()), sub.clone()));
        }
    }
    Ok(())
}
