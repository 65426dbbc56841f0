//! kbp killed (SIGKILL) at many moments of an apply and of a destroy, with clusters, node groups, add-ons and NAT
//! gateways taking time as in AWS (the realistic profile, scaled). Every rerun must succeed and converge: after
//! an apply rerun the emulator holds exactly what a clean apply leaves (nothing twice, no orphan) and the plan is
//! empty; after a destroy rerun it holds what it held before the stack. All of it is listed from the emulator.
//!
//! Moments are placed through the run by the number of changing calls a clean run makes (measured first, so
//! the matrix follows kbp as it changes), plus the long waits: the cluster CREATING and DELETING, the node
//! group and NAT gateway on their way up or down.

use std::time::Duration;

use crate::support::fault_proxy::FaultProxy;
use crate::support::inventory::Inventory;
use crate::support::*;
use kill::{run_and_kill, When};
use serde_json::json;

/// A cluster is CREATING for 3 s at this scale and DELETING for 1.5 s, a node group CREATING or DELETING for 0.9 s.
const TIME_SCALE: f64 = 0.005;

struct Matrix {
    em: Emulator,
    proxy: FaultProxy,
    ws: Workspace,
    /// What the emulator holds before the stack, and after a clean apply.
    empty: Inventory,
    applied: Inventory,
    /// Changing calls of a clean apply and of a clean destroy.
    apply_changes: u64,
    destroy_changes: u64,
}

impl Matrix {
    /// One clean apply and destroy through the proxy, to learn the inventories and the number of changes.
    async fn measure() -> Matrix {
        let em = Emulator::start_with("realistic", TIME_SCALE);
        let proxy = FaultProxy::start(&em, json!({"seed": 0}));
        let ws = Workspace::with_blueprint("minimal");
        let empty = Inventory::take(&em).await;
        let mut m = Matrix { em, proxy, ws, applied: empty.clone(), empty, apply_changes: 0, destroy_changes: 0 };
        m.proxy.reset();
        assert_success(&m.run(&["apply", m.ws.blueprint_arg(), "--auto-approve"]), "a clean apply");
        m.apply_changes = kill::changes(&m.proxy.stats());
        m.applied = Inventory::take(&m.em).await;
        assert_eq!(m.applied.count("EKS clusters"), 1, "a clean apply makes the cluster: {:?}", m.applied);
        m.proxy.reset();
        assert_success(&m.run(&["destroy", m.ws.blueprint_arg(), "--auto-approve"]), "a clean destroy");
        m.destroy_changes = kill::changes(&m.proxy.stats());
        Inventory::take(&m.em).await.assert_eq(&m.empty, "after a clean destroy");
        m
    }

    fn command(&self, args: &[&str]) -> std::process::Command {
        let mut cmd = kbp_command(&self.em, args, self.ws.path());
        // Killed runs leave creates whose outcome is unknown; nothing is held back in flight here, so the
        // rerun need not wait the default 10 s for one to land.
        cmd.envs(self.proxy.env()).env("KBP_SETTLE_DELAY", "1s");
        cmd
    }

    fn run(&self, args: &[&str]) -> std::process::Output {
        let started = std::time::Instant::now();
        let out = self.command(args).output().unwrap();
        eprintln!("kbp {} → {} in {:.1?}", args[0], out.status, started.elapsed());
        out
    }

    /// Apply killed at `when`, then rerun to completion: the emulator holds what a clean apply leaves, and a
    /// plan finds nothing to do.
    async fn kill_apply(&self, when: When) {
        let killed =
            run_and_kill(self.command(&["apply", self.ws.blueprint_arg(), "--auto-approve"]), &self.proxy, when);
        eprintln!("apply killed at {when:?}: {killed:?}");
        assert!(killed.killed, "apply finished before {when:?} ({} changes): place the moment earlier", killed.changes);
        let what = format!("apply rerun after a kill at {when:?} ({} changes made)", killed.changes);
        assert_success(&self.run(&["apply", self.ws.blueprint_arg(), "--auto-approve"]), &what);
        Inventory::take(&self.em).await.assert_eq(&self.applied, &what);
        let plan = self.run(&["plan", self.ws.blueprint_arg(), "--detailed-exitcode"]);
        assert_exit_code(&plan, 0, &format!("plan after the {what}"));
    }

    /// Destroy killed at `when`, then rerun to completion: nothing of the stack is left.
    async fn kill_destroy(&self, when: When) {
        let killed =
            run_and_kill(self.command(&["destroy", self.ws.blueprint_arg(), "--auto-approve"]), &self.proxy, when);
        eprintln!("destroy killed at {when:?}: {killed:?}");
        assert!(
            killed.killed,
            "destroy finished before {when:?} ({} changes): place the moment earlier",
            killed.changes
        );
        let what = format!("destroy rerun after a kill at {when:?} ({} changes made)", killed.changes);
        assert_success(&self.run(&["destroy", self.ws.blueprint_arg(), "--auto-approve"]), &what);
        Inventory::take(&self.em).await.assert_eq(&self.empty, &what);
    }

    /// The `i`-th of `n` moments spread evenly over a run of `total` changes (never the first or last call).
    fn spread(total: u64, i: u64, n: u64) -> When {
        When::Changes((total * (i + 1) / (n + 1)).max(1))
    }
}

/// The moments of the matrix, as (apply, destroy) pairs: 16 spread over each run's changing calls, and the long
/// waits of each (cluster, node group, NAT gateway and add-on on their way up, and on their way down).
fn moments(m: &Matrix) -> Vec<(When, When)> {
    const SPREAD: u64 = 16;
    let mut pairs: Vec<(When, When)> = (0..SPREAD)
        .map(|i| (Matrix::spread(m.apply_changes, i, SPREAD), Matrix::spread(m.destroy_changes, i, SPREAD)))
        .collect();
    let ms = Duration::from_millis;
    pairs.extend([
        (When::After("eks:CreateCluster", ms(1500)), When::After("eks:DeleteCluster", ms(800))),
        (When::After("eks:CreateNodegroup", ms(500)), When::After("eks:DeleteNodegroup", ms(500))),
        (When::After("ec2:CreateNatGateway", ms(200)), When::After("ec2:DeleteNatGateway", ms(150))),
        (When::After("eks:CreateAddon", ms(100)), When::After("eks:DeleteAddon", ms(50))),
    ]);
    pairs
}

/// Cycles `first..first + 4` of the matrix: each kills an apply at one moment, reruns it, kills the destroy that
/// follows at another, and reruns that. Five tests share the 20 cycles so that they run in parallel.
async fn cycles(first: usize) {
    let m = Matrix::measure().await;
    let all = moments(&m);
    assert_eq!(all.len(), 20, "20 moments of apply and 20 of destroy");
    for &(apply_at, destroy_at) in &all[first..first + 4] {
        m.kill_apply(apply_at).await;
        m.kill_destroy(destroy_at).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_early_in_the_network() {
    cycles(0).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_around_iam_and_the_cluster() {
    cycles(4).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_around_the_node_group() {
    cycles(8).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_late_in_the_run() {
    cycles(12).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_while_eks_and_the_nat_gateway_are_on_their_way() {
    cycles(16).await;
}
