//! A real Kubernetes control plane for a test (`scripts/kube.sh`): etcd, kube-apiserver, kube-controller-manager
//! and kube-scheduler on loopback, with an admin token; for tests that need an API server but no EKS cluster.

use std::process::Command;

use super::repo;

/// A control plane with its state in a scratch directory, stopped when dropped (and by the script itself if
/// this process dies first).
pub(crate) struct ControlPlane {
    dir: tempfile::TempDir,
    /// What `kube.sh start` exported: KBP_KUBE_SERVER, KBP_KUBE_CA, KBP_KUBE_TOKEN, KUBECONFIG.
    pub env: Vec<(String, String)>,
}

impl ControlPlane {
    pub(crate) fn start() -> Self {
        let dir = tempfile::Builder::new().prefix("kbp-kube-").tempdir().expect("a scratch directory");
        let out = Command::new("bash")
            .arg(repo().join("scripts/kube.sh"))
            .arg("start")
            .arg(dir.path())
            .env("KBP_KUBE_WATCH_PID", std::process::id().to_string())
            .output()
            .expect("run scripts/kube.sh");
        // Made before the check, so that a half-started control plane is stopped too.
        let mut plane = ControlPlane { env: Vec::new(), dir };
        assert!(
            out.status.success(),
            "scripts/kube.sh start failed:\n{}{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        plane.env = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|line| line.strip_prefix("export ")?.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        plane
    }

    pub(crate) fn var(&self, name: &str) -> &str {
        self.env.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str()).unwrap_or_else(|| panic!("{name} exported"))
    }

    /// An admin client (group system:masters), through the kubeconfig the script wrote.
    pub(crate) async fn client(&self) -> kube::Client {
        let file = kube::config::Kubeconfig::read_from(self.var("KUBECONFIG")).expect("the admin kubeconfig");
        let config = kube::Config::from_custom_kubeconfig(file, &Default::default()).await.expect("a client config");
        kube::Client::try_from(config).expect("a client")
    }
}

impl Drop for ControlPlane {
    fn drop(&mut self) {
        let _ = Command::new("bash").arg(repo().join("scripts/kube.sh")).arg("stop").arg(self.dir.path()).output();
    }
}
