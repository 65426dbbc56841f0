//! Everything the emulator holds of the kinds kbp creates, counted by listing it with the SDK: the ground truth
//! for "one resource per address" (an inventory equal to that of a clean apply) and "nothing left" (equal to
//! that of the empty emulator), whatever kbp reports.
//!
//! Service-linked roles are left out: kbp keeps them on destroy (they are account-wide). A KMS key counts while
//! it is enabled (a destroyed stack's key waits out its deletion window); a NAT gateway while it is pending or
//! available.

use std::collections::BTreeMap;
use std::fmt;

use super::Emulator;

#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Inventory(BTreeMap<&'static str, usize>);

impl Inventory {
    /// Lists every kind from the emulator.
    pub(crate) async fn take(em: &Emulator) -> Inventory {
        let mut n = BTreeMap::new();
        let ec2 = em.ec2().await;
        let vpcs = ec2.describe_vpcs().send().await.unwrap();
        n.insert("vpcs", vpcs.vpcs().len());
        n.insert("subnets", ec2.describe_subnets().send().await.unwrap().subnets().len());
        n.insert("route tables", ec2.describe_route_tables().send().await.unwrap().route_tables().len());
        n.insert("security groups", ec2.describe_security_groups().send().await.unwrap().security_groups().len());
        let igws = ec2.describe_internet_gateways().send().await.unwrap();
        n.insert("internet gateways", igws.internet_gateways().len());
        n.insert("elastic IPs", ec2.describe_addresses().send().await.unwrap().addresses().len());
        let nats = ec2.describe_nat_gateways().send().await.unwrap();
        let live = |s: Option<&str>| matches!(s, Some("pending" | "available"));
        n.insert("NAT gateways", nats.nat_gateways().iter().filter(|g| live(g.state().map(|s| s.as_str()))).count());
        let enis = ec2.describe_network_interfaces().send().await.unwrap();
        n.insert("network interfaces", enis.network_interfaces().len());

        let kms = aws_sdk_kms::Client::new(&em.sdk_config().await);
        let mut enabled = 0;
        for key in kms.list_keys().send().await.unwrap().keys() {
            let d = kms.describe_key().key_id(key.key_id().unwrap()).send().await.unwrap();
            if d.key_metadata().and_then(|m| m.key_state()).map(|s| s.as_str()) == Some("Enabled") {
                enabled += 1;
            }
        }
        n.insert("KMS keys", enabled);
        let aliases = kms.list_aliases().send().await.unwrap();
        let own = aliases.aliases().iter().filter(|a| !a.alias_name().unwrap_or("").starts_with("alias/aws/")).count();
        n.insert("KMS aliases", own);

        let eks = em.eks().await;
        let clusters = eks.list_clusters().send().await.unwrap().clusters().to_vec();
        n.insert("EKS clusters", clusters.len());
        let (mut groups, mut addons, mut entries, mut associations) = (0, 0, 0, 0);
        for c in &clusters {
            groups += eks.list_nodegroups().cluster_name(c).send().await.unwrap().nodegroups().len();
            addons += eks.list_addons().cluster_name(c).send().await.unwrap().addons().len();
            entries += eks.list_access_entries().cluster_name(c).send().await.unwrap().access_entries().len();
            let pia = eks.list_pod_identity_associations().cluster_name(c).send().await.unwrap();
            associations += pia.associations().len();
        }
        n.insert("EKS node groups", groups);
        n.insert("EKS add-ons", addons);
        n.insert("EKS access entries", entries);
        n.insert("EKS pod identity associations", associations);

        let iam = em.iam().await;
        let roles = iam.list_roles().send().await.unwrap();
        n.insert("IAM roles", roles.roles().iter().filter(|r| !r.path().starts_with("/aws-service-role/")).count());
        let local = aws_sdk_iam::types::PolicyScopeType::Local;
        n.insert("IAM policies", iam.list_policies().scope(local).send().await.unwrap().policies().len());
        let profiles = iam.list_instance_profiles().send().await.unwrap();
        n.insert("IAM instance profiles", profiles.instance_profiles().len());
        let oidc = iam.list_open_id_connect_providers().send().await.unwrap();
        n.insert("IAM OIDC providers", oidc.open_id_connect_provider_list().len());

        n.insert("SQS queues", em.sqs().await.list_queues().send().await.unwrap().queue_urls().len());
        n.insert("EventBridge rules", em.eventbridge().await.list_rules().send().await.unwrap().rules().len());
        Inventory(n)
    }

    /// How many of `kind` there are (a name as listed, e.g. "vpcs").
    pub(crate) fn count(&self, kind: &str) -> usize {
        *self.0.get(kind).unwrap_or_else(|| panic!("the inventory has no kind {kind:?}"))
    }

    /// What differs from `expected`, one `kind: expected → found` per line.
    pub(crate) fn diff(&self, expected: &Inventory) -> String {
        self.0
            .iter()
            .filter(|(k, v)| expected.0.get(*k) != Some(v))
            .map(|(k, v)| format!("{k}: {} → {v}", expected.0.get(k).copied().unwrap_or(0)))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Panics, naming each difference, unless this inventory equals `expected`.
    pub(crate) fn assert_eq(&self, expected: &Inventory, what: &str) {
        if self != expected {
            panic!(
                "{what}: the emulator holds other resources than expected (expected → found):\n{}",
                self.diff(expected)
            );
        }
    }
}

impl fmt::Debug for Inventory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.0.iter().filter(|(_, v)| **v > 0)).finish()
    }
}
