//! The in-place changes of an EKS cluster, in the order kbp makes them. EKS runs one update at a time per
//! cluster and takes one update type per UpdateClusterConfig call, so each change is its own call followed by a
//! wait for the update to finish:
//! - the Kubernetes version (UpdateClusterVersion): one minor version up per update, never down;
//! - the authentication mode, forward only: CONFIG_MAP → API_AND_CONFIG_MAP → API;
//! - endpoint access and public CIDRs (an `EndpointAccessUpdate`);
//! - subnets and security groups (a `VpcConfigUpdate`, possible since October 2023), as long as the subnets stay
//!   in the cluster's VPC and the availability zones it was created in;
//! - control-plane logging (a `LoggingUpdate`);
//! - secrets encryption, which can be turned on (AssociateEncryptionConfig) but never off or to another key.
//!
//! What EKS refuses is decided before any call, so an impossible change fails at once with the way forward
//! instead of half-way through.

use std::future::Future;

use aws_sdk_eks::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_eks::types::{
    AuthenticationMode, LogSetup, LogType, Logging, Update, UpdateAccessConfigRequest, VpcConfigRequest,
};

use super::cluster_spec::{enabled_log_types, secrets_encryption, secrets_key, Described, Spec};
use super::lifecycle::Tracking;
use super::sorted;
use crate::graph::Address;
use crate::providers::{ProviderError, Result};

/// Brings `current` (ACTIVE) to `s`, one update at a time, each waited on within the budget `cluster` carries. Tags are not its business.
pub(super) async fn apply(
    cluster: &Tracking<'_, Described>,
    address: &Address,
    current: &Described,
    s: &Spec,
) -> Result<()> {
    let name = s.name.as_str();
    let version = next_version(current.version().unwrap_or_default(), &s.version)?;
    let modes = match current.access_config().and_then(|a| a.authentication_mode()) {
        Some(have) => authentication_steps(have.as_str(), &s.authentication_mode)?,
        None => Vec::new(),
    };
    let encrypt_with = encryption_change(secrets_key(current), s.encryption_key_arn.as_deref())?;
    let change = Change { cluster, address };
    let eks = cluster.context().eks();

    if let Some(version) = version {
        let call = || eks.update_cluster_version().name(name).version(&version).send();
        change.run("eks:UpdateClusterVersion", call, |o| o.update()).await?;
    }
    for mode in modes {
        let access = UpdateAccessConfigRequest::builder().authentication_mode(AuthenticationMode::from(mode.as_str()));
        let access = access.build();
        let call = || eks.update_cluster_config().name(name).access_config(access.clone()).send();
        change.run("eks:UpdateClusterConfig", call, |o| o.update()).await?;
    }
    let vpc = current.resources_vpc_config();
    let endpoint_changed = vpc.is_none_or(|v| {
        v.endpoint_public_access() != s.endpoint_public_access
            || v.endpoint_private_access() != s.endpoint_private_access
            || sorted(v.public_access_cidrs()) != sorted(&s.public_access_cidrs)
    });
    if endpoint_changed {
        let endpoint = VpcConfigRequest::builder()
            .endpoint_public_access(s.endpoint_public_access)
            .endpoint_private_access(s.endpoint_private_access)
            .set_public_access_cidrs(Some(s.public_access_cidrs.clone()))
            .build();
        let call = || eks.update_cluster_config().name(name).resources_vpc_config(endpoint.clone()).send();
        change.run("eks:UpdateClusterConfig", call, |o| o.update()).await?;
    }
    let network_changed = vpc.is_none_or(|v| {
        sorted(v.subnet_ids()) != sorted(&s.subnet_ids)
            || sorted(v.security_group_ids()) != sorted(&s.security_group_ids)
    });
    if network_changed {
        let network = VpcConfigRequest::builder()
            .set_subnet_ids(Some(s.subnet_ids.clone()))
            .set_security_group_ids(Some(s.security_group_ids.clone()))
            .build();
        let call = || eks.update_cluster_config().name(name).resources_vpc_config(network.clone()).send();
        change.run("eks:UpdateClusterConfig", call, |o| o.update()).await.map_err(explain_network_change)?;
    }
    if let Some(want) = &s.log_types {
        let have = enabled_log_types(current);
        if sorted(want) != have {
            let off: Vec<String> = have.into_iter().filter(|t| !want.contains(t)).collect();
            let logs = logging(want, &off);
            let call = || eks.update_cluster_config().name(name).logging(logs.clone()).send();
            change.run("eks:UpdateClusterConfig", call, |o| o.update()).await?;
        }
    }
    if let Some(key) = encrypt_with {
        let config = secrets_encryption(key);
        let call = || eks.associate_encryption_config().cluster_name(name).encryption_config(config.clone()).send();
        change.run("eks:AssociateEncryptionConfig", call, |o| o.update()).await?;
    }
    Ok(())
}

/// Logging with the `on` types enabled and the `off` ones disabled (EKS changes only the types it is told).
pub(super) fn logging(on: &[String], off: &[String]) -> Logging {
    let setup = |types: &[String], enabled: bool| {
        LogSetup::builder()
            .set_types(Some(types.iter().map(|t| LogType::from(t.as_str())).collect()))
            .enabled(enabled)
            .build()
    };
    let setups = [(on, true), (off, false)].into_iter().filter(|(t, _)| !t.is_empty()).map(|(t, e)| setup(t, e));
    Logging::builder().set_cluster_logging(Some(setups.collect())).build()
}

/// One in-place change: the call (retried while another update runs), then the wait for EKS to finish it and
/// for the cluster to be ACTIVE again.
struct Change<'a> {
    cluster: &'a Tracking<'a, Described>,
    address: &'a Address,
}

impl Change<'_> {
    async fn run<O, E, F, Fut>(&self, op: &str, call: F, update: impl Fn(&O) -> Option<&Update>) -> Result<()>
    where
        F: Fn() -> Fut + Copy,
        Fut: Future<Output = Result<O, SdkError<E>>>,
        E: ProvideErrorMetadata + std::error::Error + 'static,
    {
        self.cluster.update(Some(self.address), op, call, update).await?;
        self.cluster.wait_active(Some(self.address)).await.map(drop)
    }
}

fn explain_network_change(e: ProviderError) -> ProviderError {
    if e.is("InvalidParameterException") {
        e.with_hint(
            "EKS changes a cluster's subnets and security groups in place only within its VPC and the availability \
             zones it was created in; a cluster that must move needs a new one (kbp destroy, then apply)",
        )
    } else {
        e
    }
}

/// The version to pass to UpdateClusterVersion to go from `have` to `want`: `None` when they are equal, the
/// next minor version when `want` is exactly that, and an error naming the steps otherwise.
pub(super) fn next_version(have: &str, want: &str) -> Result<Option<String>> {
    if have == want {
        return Ok(None);
    }
    let (Some((have_major, have_minor)), Some((want_major, want_minor))) = (parse(have), parse(want)) else {
        // Not `major.minor`: let EKS judge it and say what it accepts.
        return Ok(Some(want.to_string()));
    };
    const OP: &str = "eks:UpdateClusterVersion";
    if (want_major, want_minor) < (have_major, have_minor) {
        return Err(ProviderError::new(OP, "", format!("EKS cannot downgrade a cluster from {have} to {want}"))
            .with_hint(format!(
                "set `cluster.version` back to \"{have}\"; running {want} needs a new cluster (kbp destroy, then apply)"
            )));
    }
    if want_major != have_major || want_minor > have_minor + 1 {
        let steps: Vec<String> = if want_major == have_major {
            (have_minor..=want_minor).map(|m| format!("{have_major}.{m}")).collect()
        } else {
            vec![have.to_string(), want.to_string()]
        };
        let first = steps.get(1).cloned().unwrap_or_else(|| want.to_string());
        return Err(ProviderError::new(
            OP,
            "",
            format!("EKS upgrades a cluster one minor version at a time; {have} to {want} takes {}", steps.join(" → ")),
        )
        .with_hint(format!(
            "set `cluster.version = \"{first}\"` and run kbp apply, then the next version, and so on (update the \
             node group and add-ons between steps if they lag behind)"
        )));
    }
    Ok(Some(want.to_string()))
}

fn parse(v: &str) -> Option<(u32, u32)> {
    let (major, minor) = v.split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// The authentication modes to set, in order, to go from `have` to `want`. EKS moves only forward,
/// CONFIG_MAP → API_AND_CONFIG_MAP → API, one step per update; there is no way back.
pub(super) fn authentication_steps(have: &str, want: &str) -> Result<Vec<String>> {
    const ORDER: [&str; 3] = ["CONFIG_MAP", "API_AND_CONFIG_MAP", "API"];
    if have == want {
        return Ok(Vec::new());
    }
    let rank = |m: &str| ORDER.iter().position(|o| *o == m);
    match (rank(have), rank(want)) {
        (Some(h), Some(w)) if w > h => Ok(ORDER[h + 1..=w].iter().map(|m| m.to_string()).collect()),
        (Some(_), Some(_)) => Err(ProviderError::new(
            "eks:UpdateClusterConfig",
            "",
            format!("EKS cannot change a cluster's authentication mode from {have} back to {want}"),
        )
        .with_hint(format!(
            "keep authentication_mode = \"{have}\"; going back needs a new cluster (kbp destroy, then apply)"
        ))),
        // A mode kbp does not know: let EKS judge it.
        _ => Ok(vec![want.to_string()]),
    }
}

/// The key to associate to go from secrets encrypted with `have` to `want`, if any. EKS can start encrypting
/// secrets on a running cluster, but never stop or change the key.
fn encryption_change<'a>(have: Option<&str>, want: Option<&'a str>) -> Result<Option<&'a str>> {
    match (have, want) {
        (None, w) => Ok(w),
        (Some(h), Some(w)) if h == w => Ok(None),
        (Some(h), w) => Err(ProviderError::new(
            "eks:AssociateEncryptionConfig",
            "",
            match w {
                Some(w) => format!("EKS cannot change the KMS key of a cluster's secrets encryption from {h} to {w}"),
                None => format!("EKS cannot turn off secrets encryption (KMS key {h}) on a cluster"),
            },
        )
        .with_hint(
            "keep `cluster.secrets_encryption = true` and the key the cluster has (do not schedule it for deletion: \
             the cluster could no longer read its secrets); another key needs a new cluster (kbp destroy, then apply)",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upgrades_one_minor_version_at_a_time() {
        assert_eq!(next_version("1.31", "1.31").unwrap(), None);
        assert_eq!(next_version("1.31", "1.32").unwrap().as_deref(), Some("1.32"));
        let e = next_version("1.30", "1.33").unwrap_err();
        assert!(e.message.contains("1.30 → 1.31 → 1.32 → 1.33"), "{e}");
        assert!(e.hint.unwrap().contains("\"1.31\""));
        let e = next_version("1.32", "1.31").unwrap_err();
        assert!(e.message.contains("downgrade"), "{e}");
        assert_eq!(next_version("1.31", "latest").unwrap().as_deref(), Some("latest"));
    }

    #[test]
    fn authentication_mode_moves_forward_through_the_shared_mode() {
        assert_eq!(authentication_steps("API", "API").unwrap(), Vec::<String>::new());
        assert_eq!(authentication_steps("CONFIG_MAP", "API").unwrap(), ["API_AND_CONFIG_MAP", "API"]);
        assert_eq!(authentication_steps("API_AND_CONFIG_MAP", "API").unwrap(), ["API"]);
        assert_eq!(authentication_steps("CONFIG_MAP", "API_AND_CONFIG_MAP").unwrap(), ["API_AND_CONFIG_MAP"]);
        assert!(authentication_steps("API", "CONFIG_MAP").unwrap_err().hint.unwrap().contains("new cluster"));
    }

    #[test]
    fn secrets_encryption_can_start_but_not_stop_or_change_key() {
        assert_eq!(encryption_change(None, None).unwrap(), None);
        assert_eq!(encryption_change(None, Some("k1")).unwrap(), Some("k1"));
        assert_eq!(encryption_change(Some("k1"), Some("k1")).unwrap(), None);
        assert!(encryption_change(Some("k1"), Some("k2")).unwrap_err().message.contains("k2"));
        assert!(encryption_change(Some("k1"), None).unwrap_err().message.contains("turn off"));
    }

    #[test]
    fn logging_lists_only_non_empty_setups() {
        let l = logging(&["api".to_string()], &[]);
        assert_eq!(l.cluster_logging().len(), 1);
        assert_eq!(l.cluster_logging()[0].types(), [LogType::Api]);
        let l = logging(&[], &["audit".to_string(), "scheduler".to_string()]);
        assert_eq!(l.cluster_logging()[0].enabled(), Some(false));
    }
}
