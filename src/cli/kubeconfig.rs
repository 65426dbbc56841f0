//! `kbp kubeconfig`: a kubeconfig context for the stack's cluster that authenticates with `kbp token`.

use super::args::{Global, KubeconfigArgs};
use super::common;
use super::state::load_state;
use crate::access::kubeconfig::{self, Entry};
use crate::graph::Address;
use anyhow::Context as _;

pub async fn run(a: KubeconfigArgs, _g: &Global) -> u8 {
    let result = async {
        let state = load_state(&a.query).await?;
        let cluster = Address::new("eks_cluster", "main");
        let output = |name: &str| state.output(&cluster, name).and_then(|v| v.as_str().map(str::to_string));
        let (Some(name), Some(endpoint), Some(ca_data)) =
            (output("name"), output("endpoint"), output("certificate_authority_data"))
        else {
            anyhow::bail!("the state has no EKS cluster yet\n  hint: run `kbp apply` first");
        };
        let command = std::env::current_exe()
            .ok()
            .filter(|p| p.file_stem().is_some_and(|s| s == "kbp"))
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "kbp".to_string());
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
