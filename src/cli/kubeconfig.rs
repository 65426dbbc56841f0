//! `kbp kubeconfig`: a kubeconfig context for the stack's cluster that authenticates with `kbp token`.

use super::args::{Global, KubeconfigArgs};
use super::common;
use super::state::load_state;
use crate::access::kubeconfig::{self, Entry};
use crate::graph::Address;
use anyhow::Context as _;

pub(super) async fn run(a: KubeconfigArgs, _g: &Global) -> u8 {
    let result = async {
        let state = load_state(&a.query).await?;
        let cluster = Address::new("eks_cluster", "main");
        let output = |name: &str| state.output(&cluster, name).and_then(|v| v.as_str().map(str::to_string));
        let (Some(name), Some(endpoint), Some(ca_data)) =
            (output("name"), output("endpoint"), output("certificate_authority_data"))
        else {
            anyhow::bail!("the state has no EKS cluster yet\n  hint: run `kbp apply` first");
        };
        let command = token_command();
        let entry = Entry {
            name: a.alias.clone().or_else(|| output("arn")).unwrap_or_else(|| name.clone()),
            cluster: name,
            region: state.region.clone(),
            endpoint,
            ca_data,
            profile: std::env::var("AWS_PROFILE").ok().filter(|p| !p.is_empty()),
            command,
        };
        let path = a.file.clone().unwrap_or_else(kubeconfig::default_path);
        kubeconfig::write(&path, &entry).with_context(|| "writing the kubeconfig")?;
        if a.query.json {
            let out = serde_json::json!({ "file": path.display().to_string(), "context": entry.name });
            println!("{out}");
        } else {
            println!("Context {} written to {} and made current.", entry.name, path.display());
            println!("  kubectl get nodes   # authenticates with `kbp token --cluster {}`", entry.cluster);
        }
        anyhow::Ok(0)
    };
    result.await.unwrap_or_else(|e| common::report(&e))
}

/// The command the kubeconfig runs for a token: plain `kbp` when that finds this very binary on PATH, so the
/// file keeps working after kbp is upgraded or moved and can be shared; otherwise (kbp run from a build
/// directory, not on PATH) this binary's absolute path, with a note saying so.
fn token_command() -> String {
    let Ok(this) = std::env::current_exe().and_then(std::fs::canonicalize) else { return "kbp".into() };
    if this.file_stem().is_none_or(|s| s != "kbp") {
        return "kbp".into(); // run as another program (a test harness): kubectl will look kbp up on PATH
    }
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).map(|dir| dir.join("kbp")).find(|c| c.is_file()))
        .unwrap_or_default();
    match on_path.and_then(|p| std::fs::canonicalize(p).ok()) {
        Some(found) if found == this => "kbp".into(),
        _ => {
            eprintln!(
                "note: `kbp` on PATH is not this binary, so the kubeconfig runs {} for tokens\n  hint: put kbp on PATH and run `kbp kubeconfig` again for a kubeconfig that does not depend on where kbp is",
                this.display()
            );
            this.display().to_string()
        }
    }
}
