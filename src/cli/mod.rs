//! The command line: parses arguments (clap), runs one command, turns its result into an exit code. Commands
//! are thin: each strings the pipeline stages together and hands what the user sees to [`crate::ui`].

// The command line writes its results on stdout (the crate denies it elsewhere: Cargo.toml [lints]).
#![allow(clippy::print_stdout)]

mod args;
pub mod aws_contract;
/// Public for the validate benchmark, which times what `kbp validate` runs.
pub mod chart_check;
mod common;
pub mod crd_check;
mod destroy;
mod drift;
mod fmt;
mod force_unlock;
mod gc;
mod generated;
mod graph;
mod import;
mod init;
mod kubeconfig;
mod output;
mod plan;
mod preflight;
mod render;
mod report;
mod run;
mod schema;
mod show;
mod signals;
mod simulate;
mod state;
mod token;
mod validate;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

pub use args::Cli;
use args::Command;

/// Exit codes: 0 success (or no changes), 1 error, 2 a plan with changes under `--detailed-exitcode` (drift, for
/// `kbp drift` and `plan --refresh-only --detailed-exitcode`).
pub fn main() -> ExitCode {
    quiet_on_closed_stdout();
    let parsed = Cli::command().long_version(version_text()).try_get_matches().and_then(|m| Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    init_tracing(cli.verbose, crate::color::enabled(cli.global.no_color, crate::color::Stream::Stderr));
    if let Some(dir) = &cli.global.chdir {
        if let Err(e) = std::env::set_current_dir(dir) {
            eprintln!(
                "error: cannot change to directory {} (--chdir): {e}\n  hint: name an existing directory",
                dir.display()
            );
            return ExitCode::from(common::FAILED);
        }
    }
    if let Some(command) = cli.command.event_stream() {
        crate::ui::json::start(command);
    }
    let code = match cli.command {
        Command::Validate(a) => validate::run(a, &cli.global),
        Command::Graph(a) => graph::run(a, &cli.global),
        Command::Fmt(a) => fmt::run(a, &cli.global),
        Command::Schema(a) => schema::run(a),
        Command::Show(a) => show::run(a, &cli.global),
        Command::Completions(a) => generated::completions(a),
        Command::Man(a) => generated::man(a),
        command => {
            let rt = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
                Ok(rt) => rt,
                Err(e) => {
                    eprintln!("error: cannot start the async runtime: {e}");
                    return ExitCode::from(1);
                }
            };
            rt.block_on(async move {
                signals::listen();
                let code = match command {
                    Command::Plan(a) => plan::run(a, &cli.global).await,
                    Command::Drift(a) => plan::run(drift::plan_args(a), &cli.global).await,
                    Command::Apply(a) => run::apply(a, &cli.global).await,
                    Command::Destroy(a) => destroy::run(a, &cli.global).await,
                    Command::Import(a) => import::run(a, &cli.global).await,
                    Command::Init(a) => init::run(a, &cli.global).await,
                    Command::Gc(a) => gc::run(a, &cli.global).await,
                    Command::State(a) => state::run(a, &cli.global).await,
                    Command::Output(a) => output::run(a, &cli.global).await,
                    Command::Token(a) => token::run(a, &cli.global).await,
                    Command::Render(a) => render::run(a, &cli.global).await,
                    Command::Simulate(a) => simulate::run(a, &cli.global).await,
                    Command::Kubeconfig(a) => kubeconfig::run(a, &cli.global).await,
                    Command::ForceUnlock(a) => force_unlock::run(a, &cli.global).await,
                    Command::Validate(_)
                    | Command::Graph(_)
                    | Command::Fmt(_)
                    | Command::Schema(_)
                    | Command::Show(_)
                    | Command::Completions(_)
                    | Command::Man(_) => {
                        unreachable!("handled without a runtime")
                    }
                };
                // However the command ended, a remote state lock it still holds is let go.
                release_locks().await;
                report_retries();
                signals::settle(code)
            })
        }
    };
    crate::ui::json::finish(code);
    ExitCode::from(code)
}

/// `kbp --version`: the release, the commit it was built from, and what a blueprint gets unless it says otherwise.
fn version_text() -> String {
    let default = |path: &[&str]| crate::blueprint::default_at(path).unwrap_or("?").trim_matches('"').to_string();
    format!(
        "{} (commit {})\ndefaults: Kubernetes {}, Karpenter {}",
        env!("CARGO_PKG_VERSION"),
        env!("KBP_COMMIT"),
        default(&["cluster", "version"]),
        default(&["karpenter", "version"])
    )
}

/// Help and version exit 0; a usage error (an unknown flag, a missing argument) exits 1 like any error, never 2,
/// which means "changes present" under `plan --detailed-exitcode`.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    let _ = e.print();
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => ExitCode::SUCCESS,
        _ => ExitCode::from(common::FAILED),
    }
}

/// A reader that stops early (`kbp state list | head -1`) closes stdout; kbp then ends at once and quietly, with
/// the status a process killed by SIGPIPE has (141), instead of panicking in `println!`. Only stdout is treated
/// so: a socket closed by AWS stays an ordinary error.
fn quiet_on_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(crate::ui::CLOSED_STDOUT.into());
        }
        default(info)
    }));
}

/// On stderr, when AWS calls had to be retried: how many, of how many (apply's JSON summary has them too).
fn report_retries() {
    let (calls, retries) = crate::aws::call_totals();
    if retries > 0 {
        eprintln!("AWS: {calls} calls, {retries} retried (throttling, server errors or dropped connections; -v lists each call).");
    }
}

/// Releases the remote state locks this process still holds, saying which could not be.
pub(crate) async fn release_locks() {
    for e in crate::state::release_held_locks().await {
        eprintln!("warning: could not release the state lock: {e}");
    }
}

fn init_tracing(verbose: u8, color: bool) {
    let default = match verbose {
        0 => "kbp=warn,error",
        // -v: each AWS call (service and operation, duration, attempts, status) is logged by `aws::CallCounter`.
        1 => "kbp=info,warn",
        // -vv: and each Kubernetes API request (method, URL, status), from kube's HTTP trace layer.
        2 => "kbp=debug,kube_client=debug,info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // Logs go to stderr through the redactor at every level (`RUST_LOG=trace` shows the SDK's requests), in
    // colour as `crate::color` decides.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(color)
        .with_writer(crate::ui::redact::RedactedStderr)
        .try_init();
}
