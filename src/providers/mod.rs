//! Providers: one file per resource kind, each implementing [`Provider`] against one AWS (later Kubernetes) API.
//! The engine knows resources only through this trait and the [`Registry`]; it never matches on a kind.
//!
//! Adding a kind: write `providers/<service>/<kind>.rs`, implement `Provider` (its [`Descriptor`] names the kind,
//! one of [`crate::graph::kinds`], what forces a replacement, the AWS constraints of what it sends, [`contract`],
//! how a destroy without state finds it, [`WithoutState`], and the unique name preflight checks, if any), add one
//! line to [`Registry::builtin`]. Teardown's search by tags ([`tagged`]) and preflight ([`preflight`]) ask the
//! registry; no stage outside this module names a kind. What
//! providers share lives beside them: [`attrs`] (desired attributes, "gone" as absent), [`tags`] (kbp's tags and
//! the tag diff every service applies with its own calls), [`send`] (one request or every page under the retry
//! policy), [`answers`] (answers several kinds' batched reads share), [`wait`] (bounded waits), [`error`] (one
//! error type, hints as data).

pub mod answers;
pub mod attrs;
pub mod context;
pub mod contract;
pub mod create;
pub mod delete_only;
pub mod descriptor;
pub mod ec2;
pub mod eks;
pub mod elbv2;
pub mod error;
pub mod eventbridge;
pub mod iam;
pub mod kms;
pub mod kubernetes;
pub mod logs;
pub mod lookup;
pub mod preflight;
#[cfg(test)]
pub mod read_only;
pub mod retry;
pub mod send;
pub mod spec;
pub mod sqs;
pub mod stack_tags;
pub mod sts;
pub mod tagged;
pub mod tags;
pub mod wait;

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;

pub use context::Context;
pub use descriptor::{Descriptor, Typical, WithoutState};
pub use error::{ProviderError, Result};

use crate::graph::{Address, Attrs};

/// What a provider is given to create or update a resource: its desired attributes with every reference
/// resolved to a concrete value.
#[derive(Debug, Clone)]
pub struct Desired<'a> {
    /// The resource's address in the graph.
    pub address: &'a Address,
    /// The desired attributes, references resolved.
    pub attrs: &'a Attrs,
    /// `kbp:stack` and `kbp:address`, to be put on the resource where AWS allows tags (besides `attrs["tags"]`).
    pub kbp_tags: BTreeMap<String, String>,
    /// A token unique to this create intent, recorded in state before the call: pass it as the AWS client token
    /// where the API takes one, so a retried create after a crash does not make a duplicate.
    pub client_token: &'a str,
    /// The ID of the object this create replaces, which still exists (a create-before-destroy replacement,
    /// [`Descriptor::create_before_destroy`]): a kind whose names are unique gives the new one another.
    pub replaces: Option<&'a str>,
}

impl Desired<'_> {
    /// The client token to pass to a create call, or none outside a create (an update gets an empty one).
    pub fn token(&self) -> Option<String> {
        Some(self.client_token).filter(|t| !t.is_empty()).map(str::to_string)
    }

    /// The tags to put on the resource: the desired `tags` attribute (if any) with the kbp tags over it.
    pub fn tags(&self) -> BTreeMap<String, String> {
        let mut out = tags::tag_map(self.attrs.get("tags"));
        out.extend(self.kbp_tags.iter().map(|(k, v)| (k.clone(), v.clone())));
        out
    }
}

/// The result of a create or an update: the provider ID and the outputs other resources may reference
/// (`id`, `arn`, …). Outputs always include `id`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Applied {
    /// The provider's ID of the resource (a `vpc-…` ID, a name, an ARN), which state records.
    pub id: String,
    /// What other resources may reference (`id` always, and `arn`, `endpoint`, …).
    pub outputs: Attrs,
}

/// A resource as AWS reports it now.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observed {
    /// The attributes in the shape of the desired attributes. A key the provider cannot read back is left out;
    /// the diff then trusts the last applied value.
    pub attrs: Attrs,
    /// What other resources may reference, as AWS reports it now.
    pub outputs: Attrs,
}

/// A resource of the stack that state does not hold (made by Karpenter or an in-cluster controller), found for
/// teardown by [`Provider::discover`].
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// The provider kind, such as `aws_lb`.
    pub kind: &'static str,
    /// What [`Provider::delete`] takes.
    pub id: String,
    /// A `Name` or `kbp:address` tag, for display.
    pub name: Option<String>,
    /// Why it is listed, for the user (`tagged elbv2.k8s.aws/cluster=sbx`, `available, 8 GiB`).
    pub detail: String,
    /// IDs and ARNs of what it depends on, so that it is deleted before them: its subnets, security groups and
    /// VPC, the load balancer of a listener, the security groups its rules name. The engine turns these into
    /// dependency edges by matching IDs.
    pub uses: Vec<String>,
    /// IDs, ARNs and names of what must be gone before it can be deleted, the other way round: the instance a
    /// volume is attached to, the cluster that writes to a log group.
    pub after: Vec<String>,
    /// What [`Provider::delete`] needs as its `prior`.
    pub attrs: Attrs,
}

impl Found {
    /// The name to show for a resource with `tags`: its `kbp:address`, else its `Name` tag.
    pub fn tag_name(tags: &BTreeMap<String, String>) -> Option<String> {
        tags.get(tags::ADDRESS).map(|a| tags::display_address(a)).or_else(|| tags.get("Name").cloned())
    }
}

/// Where [`Provider::discover`] looks, and what it must not touch.
pub struct DiscoveryScope<'a> {
    /// The stack's name, which is also the EKS cluster's name.
    pub cluster: &'a str,
    /// The stack's VPCs; kinds found by VPC find nothing when it is empty.
    pub vpc_ids: &'a [String],
    /// VPCs the stack uses but does not own (`[vpc] id`): what others run there is never touched, so kinds
    /// found by VPC take only what is tagged for this cluster there.
    pub shared_vpc_ids: &'a [String],
    /// IAM role names Karpenter's nodes may use, whose instance profiles Karpenter creates.
    pub node_roles: &'a [String],
    /// IDs, ARNs and names in kbp's state: never listed.
    pub keep: &'a std::collections::BTreeSet<String>,
}

/// The error `create` and `update` of a kind kbp only finds and deletes (what in-cluster controllers make)
/// return: a blueprint cannot ask for one, so reaching this is a bug.
pub fn delete_only(kind: &str, made_by: &str) -> ProviderError {
    ProviderError::new(
        kind,
        "",
        format!("kbp never creates or changes `{kind}`: {made_by} makes it, and teardown deletes it"),
    )
    .with_hint("this is a bug in kbp (no blueprint declares this kind); please report it with the command you ran")
}

/// What kbp knows of one resource kind and how it calls AWS (or the cluster) for it: the engine, refresh,
/// teardown, preflight and `kbp validate` ask a kind only through this trait.
#[async_trait]
pub trait Provider: Send + Sync {
    /// The kind it manages and how a plan treats its changes.
    fn descriptor(&self) -> Descriptor;

    /// The kind it manages, such as `aws_subnet`: [`Descriptor::kind`].
    fn kind(&self) -> &'static str {
        self.descriptor().kind
    }

    /// Attributes whose change AWS cannot apply in place: [`Descriptor::force_new`].
    fn force_new(&self) -> &'static [&'static str] {
        self.descriptor().force_new
    }

    /// The desired attributes in the form `read` reports them (policy documents normalised, say), so the diff
    /// compares like with like. Identity by default.
    fn canonical(&self, desired: Attrs) -> Attrs {
        desired
    }

    /// Reads the resource with provider ID `id`; `Ok(None)` when it no longer exists.
    async fn read(&self, cx: &Context, id: &str, prior: &Attrs) -> Result<Option<Observed>>;

    /// Reads every resource of this kind in state, `(id, prior attributes)` each, returning one answer per item
    /// in the same order. Refresh calls this once per kind; a kind whose API describes many IDs in one call
    /// (DescribeSubnets, DescribeVpcs, …) overrides it so a no-op plan costs one call per kind. The default
    /// reads them one by one, concurrently.
    async fn read_many(&self, cx: &Context, items: &[(String, Attrs)]) -> Result<Vec<Option<Observed>>> {
        futures::future::try_join_all(items.iter().map(|(id, prior)| self.read(cx, id, prior))).await
    }

    /// Looks for a resource this stack created earlier but whose ID never reached state (a crash between the
    /// call and the state write), by its `kbp:address` tag or its deterministic name. Returns its ID.
    async fn find(&self, _cx: &Context, _desired: &Desired<'_>) -> Result<Option<String>> {
        Ok(None)
    }

    /// Creates the resource and returns its ID and outputs. Errors once AWS refused; a create whose outcome is
    /// unknown is looked for ([`Provider::find`]) before it is sent again.
    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied>;

    /// Waits until `id`, found rather than created (an earlier run died during its create, or an answer was
    /// lost), is ready for its dependents: a cluster still CREATING would make them fail. Most kinds are ready as
    /// soon as they exist.
    async fn wait_ready(&self, _cx: &Context, _address: &Address, _id: &str) -> Result<()> {
        Ok(())
    }

    /// Brings the resource to `desired` in place; only called when no force-new attribute changed.
    async fn update(&self, cx: &Context, id: &str, prior: &Attrs, desired: &Desired<'_>) -> Result<Applied>;

    /// Deletes the resource; deleting one that is already gone succeeds.
    async fn delete(&self, cx: &Context, id: &str, prior: &Attrs) -> Result<()>;

    /// Before the old object `id` of a create-before-destroy replacement is deleted, moves what runs on it to its
    /// successor (a node group's pods, drained within their disruption budgets). Nothing by default.
    async fn hand_over(&self, _cx: &Context, _id: &str, _prior: &Attrs) -> Result<()> {
        Ok(())
    }

    /// Whether [`Provider::find`] finds the resource by its kbp tags alone, with no other resource's outputs: then
    /// refresh looks for a resource of the blueprint that state does not hold (a state lost or reset) and adopts
    /// it. Kinds a create would make twice (no unique name, no client token AWS keeps) say yes; the others are
    /// adopted when their create answers "already exists". [`Descriptor::adoptable_by_tags`].
    fn adoptable_by_tags(&self) -> bool {
        self.descriptor().adoptable_by_tags
    }

    /// Whether destroy leaves the resource in place (account-wide resources such as service-linked roles):
    /// [`Descriptor::kept_because`].
    fn retain_on_destroy(&self) -> bool {
        self.descriptor().kept_because().is_some()
    }

    /// What ID `kbp import` takes for this kind, in words for a hint ("its VPC ID, `vpc-…`"), or `None` when the
    /// kind cannot be imported (lookups, in-cluster objects, what kbp only deletes). Its [`Provider::read`] must
    /// then read the resource by that ID alone, whatever its tags: [`Descriptor::import_id`].
    fn import_id(&self) -> Option<&'static str> {
        self.descriptor().import_id
    }

    /// Lists the resources of this kind that the stack owns outside state (made by Karpenter or an in-cluster
    /// controller), for teardown. Only reads; most kinds have none.
    async fn discover(&self, _cx: &Context, _scope: &DiscoveryScope<'_>) -> Result<Vec<Found>> {
        Ok(Vec::new())
    }

    /// Who holds `name` now, the [`Descriptor::unique_name`] the desired `attrs` claim, for preflight (under its
    /// short timeout, `preflight::quick!`), once [`Context::caller`] is known. Asked only of kinds whose
    /// descriptor names a unique name; only reads.
    async fn name_holder(&self, _cx: &Context, _name: &str, _attrs: &Attrs) -> Result<preflight::Holder> {
        let kind = self.kind();
        Err(ProviderError::new(
            kind,
            "",
            format!("`{kind}` is said to claim a unique name, but cannot say who holds one"),
        )
        .with_hint("this is a bug in kbp (its descriptor and its provider disagree); please report it"))
    }

    /// Lists the resources of this kind tagged for the stack `search` looks for, whatever state holds
    /// (`kbp destroy --from-tags`, `kbp gc`, a create whose answer was lost), each naming what it uses. Asked
    /// only of kinds whose descriptor says [`WithoutState::Tags`]; only reads.
    async fn tagged(&self, _cx: &Context, _search: &tagged::Search<'_>) -> Result<Vec<Found>> {
        let kind = self.kind();
        Err(ProviderError::new(kind, "", format!("`{kind}` is said to be found by its tags, but lists none"))
            .with_hint("this is a bug in kbp (its descriptor and its provider disagree); please report it"))
    }
}

/// The providers this build of kbp has, by kind.
#[derive(Clone, Default)]
pub struct Registry {
    providers: BTreeMap<&'static str, Arc<dyn Provider>>,
}

impl Registry {
    /// Every provider this build of kbp has: the AWS ones and the in-cluster (Kubernetes) ones.
    pub fn builtin() -> Self {
        use self::delete_only::DeleteOnly;
        use self::kubernetes::InCluster;
        use self::lookup::Uses;

        let mut r = Registry::default();
        // The network.
        r.add(ec2::vpc::Vpc);
        r.add(ec2::subnet::Subnet);
        r.add(ec2::internet_gateway::InternetGateway);
        r.add(ec2::eip::Eip);
        r.add(ec2::nat_gateway::NatGateway);
        r.add(ec2::route_table::RouteTable);
        r.add(ec2::route::Route);
        r.add(ec2::route_table_association::RouteTableAssociation);
        r.add(ec2::security_group::SecurityGroup);
        // A network the stack only uses (`[vpc] id`), and the tags it adds to its subnets.
        r.add(Uses(ec2::existing_vpc::ExistingVpc));
        r.add(Uses(ec2::existing_subnet::ExistingSubnet));
        r.add(ec2::subnet_tags::SubnetTags);
        // Identity: who kbp runs as, the roles and policies of the cluster, its nodes and Karpenter.
        r.add(sts::caller_identity::CallerIdentity);
        r.add(iam::role::Role);
        r.add(iam::policy::Policy);
        r.add(iam::role_policy::RolePolicy);
        r.add(iam::role_policy_attachment::RolePolicyAttachment);
        r.add(iam::instance_profile::InstanceProfile);
        r.add(iam::service_linked_role::ServiceLinkedRole);
        r.add(iam::openid_connect_provider::OpenIdConnectProvider);
        r.add(kms::key::Key);
        // The cluster.
        r.add(eks::cluster::Cluster);
        r.add(eks::node_group::NodeGroup);
        r.add(eks::addon::Addon);
        r.add(eks::access_entry::AccessEntry);
        r.add(eks::pod_identity_association::PodIdentityAssociation);
        // Interruption handling.
        r.add(sqs::queue::Queue);
        r.add(sqs::queue_policy::QueuePolicy);
        r.add(eventbridge::rule::Rule);
        // Inside the cluster.
        r.add(InCluster(kubernetes::crds::KarpenterCrds));
        r.add(InCluster(kubernetes::controller::Controller));
        r.add(InCluster(kubernetes::custom_object::node_class()));
        r.add(InCluster(kubernetes::custom_object::node_pool()));
        // What others make for the cluster, which teardown finds and deletes.
        r.add(DeleteOnly(ec2::instance::Instance));
        r.add(DeleteOnly(ec2::launch_template::LaunchTemplate));
        r.add(DeleteOnly(ec2::network_interface::NetworkInterface));
        r.add(DeleteOnly(ec2::volume::Volume));
        r.add(DeleteOnly(ec2::vpc_endpoint::VpcEndpoint));
        r.add(DeleteOnly(elbv2::load_balancer::LoadBalancer));
        r.add(DeleteOnly(elbv2::listener::Listener));
        r.add(DeleteOnly(elbv2::target_group::TargetGroup));
        r.add(DeleteOnly(logs::log_group::LogGroup));
        r
    }

    /// Registers `p` for its kind; registering a kind twice is a bug (the last one would silently win).
    pub fn add(&mut self, p: impl Provider + 'static) {
        let kind = p.kind();
        let previous = self.providers.insert(kind, Arc::new(p));
        assert!(previous.is_none(), "invariant: one provider per kind, but {kind} was registered twice");
    }

    /// Registers a provider the caller keeps a handle on (tests that count calls).
    pub fn add_shared(&mut self, p: Arc<dyn Provider>) {
        self.providers.insert(p.kind(), p);
    }

    /// The provider registered for `kind`.
    pub fn get(&self, kind: &str) -> Option<Arc<dyn Provider>> {
        self.providers.get(kind).cloned()
    }

    /// Every registered provider, in kind order.
    pub fn providers(&self) -> impl Iterator<Item = &Arc<dyn Provider>> {
        self.providers.values()
    }

    /// Whether a provider is registered for `kind`.
    pub fn has(&self, kind: &str) -> bool {
        self.providers.contains_key(kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::graph::kinds;

    #[test]
    fn every_aws_provider_registers_once() {
        let r = Registry::builtin();
        for kind in
            [kinds::VPC, kinds::SUBNET, kinds::NAT_GATEWAY, kinds::IAM_ROLE, kinds::IAM_POLICY, kinds::CALLER_IDENTITY]
        {
            assert!(r.has(kind), "{kind}");
        }
    }

    #[test]
    fn an_existing_network_is_forgotten_by_destroy_but_the_tags_kbp_added_to_it_are_removed() {
        let r = Registry::builtin();
        for kind in [kinds::EXISTING_VPC, kinds::EXISTING_SUBNET] {
            let p = r.get(kind).unwrap_or_else(|| panic!("{kind} is registered"));
            assert!(p.retain_on_destroy() && !p.adoptable_by_tags(), "{kind}");
        }
        let tags = r.get(kinds::SUBNET_TAGS).expect("aws_subnet_tags is registered");
        assert!(!tags.retain_on_destroy() && !tags.adoptable_by_tags());
        assert_eq!(tags.force_new(), &["subnet_id"]);
    }

    #[test]
    fn every_kind_says_how_a_destroy_without_state_finds_it() {
        let r = Registry::builtin();
        for p in r.providers() {
            // Every kind says how (`Descriptor::new` takes it); one found with another needs that one found.
            let d = p.descriptor();
            if let WithoutState::GoesWith(parent) = d.without_state {
                let parent =
                    r.get(parent).unwrap_or_else(|| panic!("{} goes with {parent}, which is registered", d.kind));
                assert_eq!(
                    parent.descriptor().without_state,
                    WithoutState::Tags,
                    "{} goes with a kind found by tags",
                    d.kind
                );
            }
        }
        let mut by_tags: Vec<&str> = r
            .providers()
            .map(|p| p.descriptor())
            .filter(|d| d.without_state == WithoutState::Tags)
            .map(|d| d.kind)
            .collect();
        by_tags.sort_unstable();
        let mut expected = vec![
            kinds::VPC,
            kinds::SUBNET,
            kinds::INTERNET_GATEWAY,
            kinds::NAT_GATEWAY,
            kinds::EIP,
            kinds::ROUTE_TABLE,
            kinds::SECURITY_GROUP,
            kinds::INSTANCE,
            kinds::EKS_CLUSTER,
            kinds::EKS_NODE_GROUP,
            kinds::IAM_ROLE,
            kinds::IAM_POLICY,
            kinds::IAM_OIDC_PROVIDER,
            kinds::IAM_INSTANCE_PROFILE,
            kinds::EVENT_RULE,
            kinds::SQS_QUEUE,
            kinds::KMS_KEY,
        ];
        expected.sort_unstable();
        assert_eq!(by_tags, expected);
    }

    #[test]
    fn preflight_asks_about_the_names_the_contracts_say_are_unique_in_the_account() {
        let r = Registry::builtin();
        let asked: BTreeMap<&str, (&str, &str)> = r
            .providers()
            .filter_map(|p| {
                let d = p.descriptor();
                d.unique_name().map(|u| (d.kind, (u.what, u.attr)))
            })
            .collect();
        assert_eq!(asked.get(kinds::IAM_ROLE), Some(&("IAM role", "name")));
        assert_eq!(asked.get(kinds::KMS_KEY), Some(&("KMS alias", "alias")));
        assert_eq!(asked.len(), 7, "{asked:?}");
        // Unique only in their VPC or cluster: two of the stack's are refused, AWS is not asked.
        assert!(!asked.contains_key(kinds::SECURITY_GROUP) && !asked.contains_key(kinds::EKS_NODE_GROUP));
    }

    #[test]
    fn the_kinds_teardown_finds_outside_state_are_registered() {
        let r = Registry::builtin();
        for kind in [
            kinds::LOAD_BALANCER,
            kinds::LB_LISTENER,
            kinds::LB_TARGET_GROUP,
            kinds::EBS_VOLUME,
            kinds::VPC_ENDPOINT,
            kinds::LOG_GROUP,
        ] {
            assert!(r.has(kind), "{kind}");
        }
    }
}
