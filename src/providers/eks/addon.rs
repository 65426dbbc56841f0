//! `aws_eks_addon`: an EKS-managed add-on (vpc-cni, kube-proxy, coredns, eks-pod-identity-agent). The ID is
//! `<cluster>:<add-on name>`.
//!
//! An add-on without a pinned version (`addon_version: null`) gets, at creation, the version EKS marks as the
//! default for the cluster's Kubernetes version (or the newest compatible one), passed explicitly. Read then
//! reports `addon_version: null` as long as state says the version was not pinned, and the installed version
//! as the `version` output: an unpinned add-on never shows a perpetual diff, and is not moved to a newer
//! version behind the user's back. It moves when the cluster does: `kubernetes_version`, the cluster version
//! its version was chosen for, is carried in state, and an update that changes it takes the add-on to the
//! default of the cluster's new version. Configuration values travel to EKS as a JSON string and are read back
//! as JSON.

use async_trait::async_trait;
use aws_sdk_eks::types::{AddonInfo, Cluster, ResolveConflicts};
use serde_json::{json, Value};

use super::lifecycle::{Target, Tracked, Tracking};
use super::{join_id, missing, split_id, tagging, vanished};
use crate::graph::{kinds, Address, Attrs};
use crate::providers::attrs::absent_if_gone;
use crate::providers::ec2::object;
use crate::providers::preflight::quick;
use crate::providers::send::send;
use crate::providers::spec;
use crate::providers::wait::{Budget, Budgets};
use crate::providers::{contract, contract::Constraint};
use crate::providers::{
    Applied, Context, Descriptor, Desired, Observed, Provider, ProviderError, Result, Typical, WithoutState,
};

pub(crate) struct Addon;

const KIND: &str = kinds::EKS_ADDON;
/// Its typical times, which its waits expect too ([`Budget::expecting`]).
const TYPICAL: Typical = Typical { create: 60, update: 30, delete: 30 };
/// Add-ons install in a minute or two; coredns waits for a node to run on. Each wait expects the operation's
/// typical time ([`TYPICAL`]).
const BUDGET: Budget = Budget::long_minutes(20);
const WAITS: Budgets = BUDGET.for_each(TYPICAL);

/// The attributes the compiler emits for an add-on, references resolved ([`crate::graph::kinds`]).
type Spec = crate::graph::kinds::eks_addon::Addon<String>;

impl Spec {
    /// The configuration as EKS takes it: a JSON document in a string; none for null or `{}`.
    fn configuration(&self) -> Option<String> {
        self.configuration_values.as_ref().filter(|v| !is_empty(v)).map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    }

    /// How EKS treats fields someone changed in the cluster by hand: OVERWRITE unless the compiler says.
    fn resolve_conflicts(&self) -> ResolveConflicts {
        ResolveConflicts::from(self.resolve_conflicts.as_deref().unwrap_or("OVERWRITE"))
    }
}

/// What AWS accepts of what this kind sends ([`contract`]).
const SENDS: &[Constraint] = &[contract::tags_of("EKS add-on")];

#[async_trait]
impl Provider for Addon {
    fn descriptor(&self) -> Descriptor {
        Descriptor::new(KIND, WithoutState::GoesWith(kinds::EKS_CLUSTER), SENDS)
            .force_new(&["cluster_name", "addon_name"])
            .imported_by("`<cluster name>:<add-on name>`")
            .takes(TYPICAL)
    }

    async fn read(&self, cx: &Context, id: &str, prior: &Attrs) -> Result<Option<Observed>> {
        let (cluster, name) = split_id(KIND, id, "add-on")?;
        let Some(a) = tracking(cx, cluster, name, BUDGET).read().await? else { return Ok(None) };
        // Only a version the user pinned is an attribute; an unpinned one is an output.
        let pinned = !prior.get("addon_version").is_some_and(Value::is_null);
        let attrs = json!({
            "cluster_name": a.cluster_name(),
            "addon_name": a.addon_name(),
            "addon_version": if pinned { json!(a.addon_version()) } else { Value::Null },
            "configuration_values": configuration_from_aws(a.configuration_values()),
            "tags": tagging::attr(a.tags()),
            // What kbp chose the version for: EKS does not say, state does.
            "kubernetes_version": prior.get("kubernetes_version"),
        });
        Ok(Some(Observed { attrs: object(attrs), outputs: outputs(id, &a) }))
    }

    async fn find(&self, cx: &Context, desired: &Desired<'_>) -> Result<Option<String>> {
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        let found = tracking(cx, &s.cluster_name, &s.addon_name, BUDGET).find().await?;
        Ok(found.map(|_| join_id(&s.cluster_name, &s.addon_name)))
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        const OP: &str = "eks:CreateAddon";
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        let version = match &s.addon_version {
            Some(v) => v.clone(),
            None => latest_version(cx, &s.cluster_name, &s.addon_name).await?,
        };
        let (configuration, conflicts) = (s.configuration(), s.resolve_conflicts());
        let (tags, token) = (Some(tagging::on_create(desired)), desired.token());
        send(cx, OP, &[], || {
            cx.eks()
                .create_addon()
                .cluster_name(&s.cluster_name)
                .addon_name(&s.addon_name)
                .addon_version(&version)
                .set_configuration_values(configuration.clone())
                .resolve_conflicts(conflicts.clone())
                .set_tags(tags.clone())
                .set_client_request_token(token.clone())
                .send()
        })
        .await
        .map_err(|e| explain_create(e, &s))?;
        let id = join_id(&s.cluster_name, &s.addon_name);
        let a = tracking(cx, &s.cluster_name, &s.addon_name, WAITS.create).wait_active(Some(desired.address)).await?;
        Ok(Applied { outputs: outputs(&id, &a), id })
    }

    /// A pinned version moves to the pinned one; an unpinned add-on keeps the version it has (unpinning a
    /// version changes nothing in AWS) unless the cluster moved to another Kubernetes version, when it takes
    /// the default of that version.
    async fn update(&self, cx: &Context, id: &str, prior: &Attrs, desired: &Desired<'_>) -> Result<Applied> {
        const OP: &str = "eks:UpdateAddon";
        let (cluster, name) = split_id(KIND, id, "add-on")?;
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        let address = Some(desired.address);
        let addon = tracking(cx, cluster, name, WAITS.update);
        // EKS takes an update in these states; DEGRADED and UPDATE_FAILED are what an update may repair.
        let current = addon.wait_until(address, &["ACTIVE", "DEGRADED", "UPDATE_FAILED"]).await?;

        let followed = prior.get("kubernetes_version").and_then(Value::as_str);
        let cluster_moved = followed.is_some_and(|k| Some(k) != s.kubernetes_version.as_deref());
        let version = match &s.addon_version {
            Some(pinned) => Some(pinned.clone()),
            None if cluster_moved => Some(latest_version(cx, cluster, name).await?),
            None => None,
        };
        let version = version.filter(|v| current.addon_version() != Some(v.as_str()));
        let want_config = s.configuration();
        let have_config = current.configuration_values().filter(|c| !c.trim().is_empty());
        let same_config = configuration_from_aws(have_config) == configuration_from_aws(want_config.as_deref());
        // EKS clears the configuration when given an empty string.
        let configuration = (!same_config).then(|| want_config.unwrap_or_default());
        if version.is_some() || configuration.is_some() {
            let conflicts = s.resolve_conflicts();
            let request = || {
                cx.eks()
                    .update_addon()
                    .cluster_name(cluster)
                    .addon_name(name)
                    .set_addon_version(version.clone())
                    .set_configuration_values(configuration.clone())
                    .resolve_conflicts(conflicts.clone())
                    .send()
            };
            addon.update(address, OP, request, |out| out.update()).await?;
        }

        let a = addon.retag(&current, desired).await?;
        Ok(Applied { id: id.to_string(), outputs: outputs(id, &a) })
    }

    async fn wait_ready(&self, cx: &Context, address: &Address, id: &str) -> Result<()> {
        let (cluster, name) = split_id(KIND, id, "name")?;
        tracking(cx, cluster, name, WAITS.create).wait_active(Some(address)).await.map(drop)
    }

    /// Not preserved: the add-on's Kubernetes objects go with it, as they came with it.
    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<()> {
        const OP: &str = "eks:DeleteAddon";
        let (cluster, name) = split_id(KIND, id, "add-on")?;
        let request = || cx.eks().delete_addon().cluster_name(cluster).addon_name(name).preserve(false).send();
        tracking(cx, cluster, name, WAITS.delete).delete(OP, None, request).await
    }
}

type Described = aws_sdk_eks::types::Addon;

#[async_trait]
impl Tracked for Described {
    const NOUN: &'static str = "add-on";
    const DESCRIBE: &'static str = "eks:DescribeAddon";
    const FAILURE_HINT: &'static str = "fix what EKS names (coredns needs a node it tolerates; a rejected \
        configuration names the bad field, see `aws eks describe-addon-configuration`), then run kbp again";

    async fn describe(cx: &Context, at: Target<'_>) -> Result<Option<Self>> {
        let request = || cx.eks().describe_addon().cluster_name(at.cluster).addon_name(at.name()).send();
        Ok(absent_if_gone(send(cx, Self::DESCRIBE, &[], request).await)?.and_then(|out| out.addon))
    }
}

/// The add-on `name` of `cluster`, whose waits may each take `budget`.
fn tracking<'a>(cx: &'a Context, cluster: &'a str, name: &'a str, budget: Budget) -> Tracking<'a, Described> {
    Tracking::new(cx, Target::addon(cluster, name), budget)
}

fn explain_create(e: ProviderError, s: &Spec) -> ProviderError {
    match e.code.as_str() {
        "ResourceInUseException" => e.with_hint(format!(
            "add-on `{}` is already installed in cluster `{}` but is not in this stack's state; if it carries this \
             stack's kbp:stack tag, run kbp again to adopt it, otherwise delete it (`aws eks delete-addon`)",
            s.addon_name, s.cluster_name
        )),
        "InvalidParameterException" => e.with_hint(format!(
            "check the add-on's version and configuration values against `aws eks describe-addon-versions \
             --addon-name {}` and `aws eks describe-addon-configuration`",
            s.addon_name
        )),
        _ => e,
    }
}

/// The version of `addon` EKS marks as the default for the cluster's Kubernetes version, or else the newest
/// compatible one.
async fn latest_version(cx: &Context, cluster: &str, addon: &str) -> Result<String> {
    let c = Cluster::describe(cx, Target::cluster(cluster))
        .await?
        .ok_or_else(|| vanished("eks:DescribeCluster", &format!("cluster {cluster}")))?;
    let kubernetes = c.version().ok_or_else(|| missing("eks:DescribeCluster", "Kubernetes version"))?;
    default_version(cx, addon, kubernetes).await
}

/// The version of `addon` EKS marks as the default for Kubernetes `kubernetes`, or else the newest compatible one.
pub(crate) async fn default_version(cx: &Context, addon: &str, kubernetes: &str) -> Result<String> {
    const OP: &str = "eks:DescribeAddonVersions";
    let infos = send(cx, OP, &[], || async {
        let pages = cx.eks().describe_addon_versions().addon_name(addon).kubernetes_version(kubernetes);
        pages.into_paginator().items().send().collect::<Result<Vec<_>, _>>().await
    })
    .await?;
    pick_version(&infos, addon, kubernetes).ok_or_else(|| {
        ProviderError::new(OP, "", format!("EKS offers no version of add-on {addon} for Kubernetes {kubernetes}"))
            .with_hint("check the add-on's name, or pin `version` to one `aws eks describe-addon-versions` lists")
    })
}

fn pick_version(infos: &[AddonInfo], addon: &str, kubernetes: &str) -> Option<String> {
    let versions = infos.iter().filter(|i| i.addon_name() == Some(addon)).flat_map(|i| i.addon_versions());
    let compatible: Vec<_> =
        versions.filter(|v| v.compatibilities().iter().any(|c| c.cluster_version() == Some(kubernetes))).collect();
    let is_default = |v: &aws_sdk_eks::types::AddonVersionInfo| {
        v.compatibilities().iter().any(|c| c.cluster_version() == Some(kubernetes) && c.default_version())
    };
    let chosen = match compatible.iter().copied().find(|v| is_default(v)) {
        Some(v) => Some(v),
        None => compatible.iter().copied().max_by_key(|v| version_key(v.addon_version().unwrap_or_default())),
    };
    chosen.and_then(|v| v.addon_version()).map(str::to_string)
}

/// `v1.20.4-eksbuild.2` → [1, 20, 4, 2], which orders add-on versions as EKS numbers them.
fn version_key(v: &str) -> Vec<u64> {
    v.split(|c: char| !c.is_ascii_digit()).filter(|p| !p.is_empty()).filter_map(|p| p.parse().ok()).collect()
}

/// Configuration values as read back: parsed JSON, or the text itself when EKS holds YAML; none → null.
fn configuration_from_aws(values: Option<&str>) -> Value {
    match values.map(str::trim).filter(|v| !v.is_empty()) {
        None => Value::Null,
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(v) if is_empty(&v) => Value::Null,
            Ok(v) => v,
            Err(_) => Value::String(text.to_string()),
        },
    }
}

fn is_empty(v: &Value) -> bool {
    v.is_null() || v.as_object().is_some_and(|o| o.is_empty())
}

fn outputs(id: &str, a: &Described) -> Attrs {
    object(json!({ "id": id, "arn": a.addon_arn(), "version": a.addon_version() }))
}

/// The versions of add-on `name` EKS offers for Kubernetes `kubernetes`; for preflight, under its short timeout.
pub(crate) async fn offered_versions(cx: &Context, name: &str, kubernetes: &str) -> Result<Vec<String>> {
    crate::providers::send::all_pages(|token| async move {
        let r = cx.eks().describe_addon_versions().addon_name(name).kubernetes_version(kubernetes);
        let page = r.set_next_token(token).customize().config_override(quick!(aws_sdk_eks)).send().await;
        let page = page.map_err(|e| ProviderError::from_sdk("eks:DescribeAddonVersions", e))?;
        let versions: Vec<String> = page
            .addons()
            .iter()
            .filter(|a| a.addon_name() == Some(name))
            .flat_map(|a| a.addon_versions().iter().filter_map(|v| v.addon_version().map(str::to_string)))
            .collect();
        Ok((versions, page.next_token().map(str::to_string)))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_eks::types::{AddonVersionInfo, Compatibility};

    fn info(versions: &[(&str, &str, bool)]) -> AddonInfo {
        let mut b = AddonInfo::builder().addon_name("coredns");
        for (v, k8s, default) in versions {
            let compat = Compatibility::builder().cluster_version(*k8s).default_version(*default).build();
            b = b.addon_versions(AddonVersionInfo::builder().addon_version(*v).compatibilities(compat).build());
        }
        b.build()
    }

    #[test]
    fn picks_the_default_version_else_the_newest_compatible() {
        let i = info(&[("v1.11.4-eksbuild.24", "1.31", true), ("v1.12.1-eksbuild.2", "1.31", false)]);
        assert_eq!(pick_version(&[i], "coredns", "1.31").as_deref(), Some("v1.11.4-eksbuild.24"));
        let i = info(&[
            ("v1.11.4-eksbuild.9", "1.31", false),
            ("v1.11.4-eksbuild.24", "1.31", false),
            ("v1.12.1-eksbuild.2", "1.33", false),
        ]);
        assert_eq!(pick_version(std::slice::from_ref(&i), "coredns", "1.31").as_deref(), Some("v1.11.4-eksbuild.24"));
        assert_eq!(pick_version(&[i], "coredns", "1.29"), None);
    }

    #[test]
    fn configuration_reads_back_as_json_and_empty_as_null() {
        assert_eq!(configuration_from_aws(Some(r#"{"replicaCount": 2}"#)), json!({"replicaCount": 2}));
        assert_eq!(configuration_from_aws(Some("  ")), Value::Null);
        assert_eq!(configuration_from_aws(Some("{}")), Value::Null);
        assert_eq!(configuration_from_aws(None), Value::Null);
        assert_eq!(configuration_from_aws(Some("replicaCount: 2")), json!("replicaCount: 2"));
    }

    #[test]
    fn configuration_goes_to_eks_as_a_json_string() {
        let s = |v: Value| Spec {
            cluster_name: "c".into(),
            addon_name: "coredns".into(),
            addon_version: None,
            configuration_values: Some(v),
            resolve_conflicts: None,
            kubernetes_version: None,
            tags: Default::default(),
        };
        assert_eq!(s(json!({"replicaCount": 2})).configuration().as_deref(), Some(r#"{"replicaCount":2}"#));
        assert_eq!(s(json!({})).configuration(), None);
        assert_eq!(s(Value::Null).configuration(), None);
        assert_eq!(s(Value::Null).resolve_conflicts(), ResolveConflicts::Overwrite);
    }
}
