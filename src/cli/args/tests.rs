//! The command line's definition holds together, and the documentation names all of it.

use clap::CommandFactory;

use super::*;

/// The CLI reference (docs/cli.md) names every command and every long flag the binary accepts, and the
/// README's command table every command.
#[test]
fn cli_reference_covers_every_command_and_flag() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let table = readme.split("## Commands").nth(1).expect("README has a command table");
    let table = table.split("\n## ").next().unwrap_or_default();
    for sub in Cli::command().get_subcommands().filter(|s| s.get_name() != "help") {
        assert!(table.contains(&format!("`kbp {}", sub.get_name())), "README's command table lacks {}", sub.get_name());
    }
    let section = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/cli.md")).unwrap();
    let mut missing = Vec::new();
    fn visit(cmd: &clap::Command, path: &str, section: &str, missing: &mut Vec<String>) {
        for arg in cmd.get_arguments() {
            if let Some(long) = arg.get_long() {
                if !["help", "version"].contains(&long) && !section.contains(&format!("--{long}")) {
                    missing.push(format!("{path} --{long}"));
                }
            }
        }
        for sub in cmd.get_subcommands() {
            let p = format!("{path} {}", sub.get_name());
            if sub.get_name() != "help" && !section.contains(&format!("`{p}")) {
                missing.push(p.clone());
            }
            visit(sub, &p, section, missing);
        }
    }
    visit(&Cli::command(), "kbp", &section, &mut missing);
    assert!(missing.is_empty(), "docs/cli.md lacks: {missing:?}");
}

#[test]
fn cli_definition_is_consistent() {
    Cli::command().debug_assert();
}
