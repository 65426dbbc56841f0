//! What every provider call gets: the AWS configuration (from the standard credential chain, honouring
//! `AWS_ENDPOINT_URL`), one client per service, the stack's name and the retry policy.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use aws_config::SdkConfig;
use kube::core::{ApiResource, GroupVersionKind};
use kube::discovery::Scope;
use tokio::sync::mpsc::UnboundedSender;

use super::retry::RetryPolicy;
use super::ProviderError;
use crate::access::cluster::{Access, Clients, Cluster};
use crate::events::Event;
use crate::graph::Address;
use crate::providers::Result;

/// What every provider call is made with: the AWS configuration and its clients, the stack, and how it retries.
pub struct Context {
    /// The AWS configuration (credentials, region, endpoint) the clients are built from.
    pub sdk: SdkConfig,
    /// The stack's name, which its resources are tagged with (`kbp:stack`).
    pub stack: String,
    /// The stack's AWS region.
    pub region: String,
    /// How kbp's own retries (on error codes that mean "not yet") pace themselves.
    pub retry: RetryPolicy,
    ec2: OnceLock<aws_sdk_ec2::Client>,
    iam: OnceLock<aws_sdk_iam::Client>,
    kms: OnceLock<aws_sdk_kms::Client>,
    eks: OnceLock<aws_sdk_eks::Client>,
    elbv2: OnceLock<aws_sdk_elasticloadbalancingv2::Client>,
    logs: OnceLock<aws_sdk_cloudwatchlogs::Client>,
    sqs: OnceLock<aws_sdk_sqs::Client>,
    eventbridge: OnceLock<aws_sdk_eventbridge::Client>,
    sts: OnceLock<aws_sdk_sts::Client>,
    tagging: OnceLock<aws_sdk_resourcegroupstagging::Client>,
    access: Access,
    kube: OnceLock<Clients>,
    served: Mutex<HashMap<(String, GroupVersionKind), (ApiResource, Scope)>>,
    /// Set for `kbp destroy`: the cluster goes after its objects, so in-cluster providers treat an
    /// unreachable cluster, or Karpenter finalizers nobody removes, as done (with a warning) rather than
    /// failing; the teardown sweep then removes the instances by their tags.
    pub destroying: bool,
    /// Set for `kbp apply`: a resource whose interrupted create is found in a transitional state (a cluster
    /// still CREATING) is waited on during refresh, before anything that depends on it is planned and made.
    /// `kbp plan` only reports it.
    pub applying: bool,
    /// Extra kbp tags for new resources: `kbp:owner` and `kbp:expires` of a sandbox stack (`--ttl`).
    pub lifetime_tags: std::collections::BTreeMap<String, String>,
    /// The CRDs a saved plan carries, applied instead of reading `crds_dir` or pulling the chart.
    pub saved_crds: Option<std::sync::Arc<super::kubernetes::crds::CrdBundle>>,
    /// Karpenter's chart a saved plan carries, rendered instead of reading `karpenter.chart`.
    pub saved_chart: Option<std::sync::Arc<super::kubernetes::ChartBundle>>,
    /// Answers several kinds' batched reads share during refresh (see [`super::answers`]).
    pub answers: super::answers::Answers,
    progress: Mutex<Option<UnboundedSender<Event>>>,
    /// Who kbp runs as, once STS said so in this run (preflight asks first): credentials do not change
    /// during a run, so neither does the answer.
    caller: OnceLock<crate::providers::sts::caller_identity::Identity>,
    /// Set when a create's outcome was not known at once (see [`Context::uncertain_creates`]).
    uncertain: std::sync::atomic::AtomicBool,
}

impl Context {
    /// Loads the AWS configuration the way every AWS tool does: env, profiles, SSO, IMDS; the region of the
    /// blueprint wins over the profile's.
    pub async fn load(stack: &str, region: &str) -> Self {
        Self::from_sdk(crate::aws::load(Some(region), None).await, stack, region)
    }

    /// A context for the stack `stack` in `region`, with the AWS configuration `sdk` (a test's, or one loaded).
    pub fn from_sdk(sdk: SdkConfig, stack: &str, region: &str) -> Self {
        Context {
            sdk,
            stack: stack.to_string(),
            region: region.to_string(),
            retry: RetryPolicy::default(),
            ec2: OnceLock::new(),
            iam: OnceLock::new(),
            kms: OnceLock::new(),
            eks: OnceLock::new(),
            elbv2: OnceLock::new(),
            logs: OnceLock::new(),
            sqs: OnceLock::new(),
            eventbridge: OnceLock::new(),
            sts: OnceLock::new(),
            tagging: OnceLock::new(),
            access: Access::default(),
            kube: OnceLock::new(),
            served: Mutex::new(HashMap::new()),
            destroying: false,
            applying: false,
            lifetime_tags: Default::default(),
            saved_crds: None,
            saved_chart: None,
            answers: Default::default(),
            progress: Mutex::new(None),
            uncertain: std::sync::atomic::AtomicBool::new(false),
            caller: OnceLock::new(),
        }
    }

    /// How the in-cluster providers reach the cluster: by default the endpoint and CA in state with an EKS
    /// token; `--kubeconfig`/`--context` choose a kubeconfig instead.
    pub fn with_cluster_access(mut self, access: Access) -> Self {
        self.access = access;
        self
    }

    /// A Kubernetes client for `cluster`, renewed before its token expires.
    pub async fn kube(&self, cluster: &Cluster) -> Result<kube::Client> {
        let clients = self.kube.get_or_init(|| Clients::new(self.access.clone(), self.sdk.clone()));
        clients.client(cluster).await.map_err(|e| {
            let hint = e.hint().unwrap_or(
                "kbp reaches the cluster with the endpoint and CA in state; use --kubeconfig/--context if your access differs",
            );
            ProviderError::new("kubernetes:connect", "", e.to_string()).with_hint(hint)
        })
    }

    /// The resource and scope `cluster` serves `gvk` under, if discovery found it earlier in this run: one
    /// discovery request per kind and cluster, not one per object. Only what is served is remembered (a CRD may
    /// be installed a moment later).
    pub fn served(&self, cluster: &str, gvk: &GroupVersionKind) -> Option<(ApiResource, Scope)> {
        let served = self.served.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        served.get(&(cluster.to_string(), gvk.clone())).cloned()
    }

    /// Remembers what discovery found; see [`Context::served`].
    pub fn remember_served(&self, cluster: &str, gvk: &GroupVersionKind, found: (ApiResource, Scope)) {
        let mut served = self.served.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        served.insert((cluster.to_string(), gvk.clone()), found);
    }

    /// Who kbp runs as, if STS already said so in this run.
    pub fn caller(&self) -> Option<&crate::providers::sts::caller_identity::Identity> {
        self.caller.get()
    }

    /// Remembers STS's answer for the rest of the run ([`Context::caller`]).
    pub fn remember_caller(&self, me: crate::providers::sts::caller_identity::Identity) {
        let _ = self.caller.set(me);
    }

    /// Records that a create's outcome was not known at once: its answer was lost and kbp looked for what it
    /// made, or it resumed an earlier run's intent. Only then can a second resource land after kbp looked.
    pub fn uncertain_create(&self) {
        self.uncertain.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether any create of this run was uncertain ([`Context::uncertain_create`]).
    pub fn uncertain_creates(&self) -> bool {
        self.uncertain.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Where [`Context::progress`] reports go; the walk sets it for its duration.
    pub fn report_to(&self, events: Option<UnboundedSender<Event>>) {
        *self.progress.lock().expect("invariant: the progress mutex is never poisoned") = events;
    }

    /// Reports a long wait on `address` (a cluster still CREATING, say): AWS's `status` and how long kbp has
    /// waited so far. The ui decides how often to show it.
    pub fn progress(&self, address: &Address, status: &str, waited: Duration) {
        tracing::info!(%address, status, waited = ?waited, "waiting");
        let guard = self.progress.lock().expect("invariant: the progress mutex is never poisoned");
        if let Some(tx) = guard.as_ref() {
            let _ = tx.send(Event::Waiting { address: address.clone(), status: status.to_string(), waited });
        }
    }
}

/// The accessor of each service's SDK client: the client is built on first use and shared from then on.
macro_rules! clients {
    ($($service:ident: $sdk:ident),* $(,)?) => {
        impl Context {
            $(#[doc = concat!("The `", stringify!($sdk), "` client.")]
            pub fn $service(&self) -> &$sdk::Client {
                self.$service.get_or_init(|| crate::aws_client!($sdk, &self.sdk))
            })*
        }
    };
}

clients!(
    ec2: aws_sdk_ec2,
    iam: aws_sdk_iam,
    kms: aws_sdk_kms,
    eks: aws_sdk_eks,
    elbv2: aws_sdk_elasticloadbalancingv2,
    logs: aws_sdk_cloudwatchlogs,
    sqs: aws_sdk_sqs,
    eventbridge: aws_sdk_eventbridge,
    sts: aws_sdk_sts,
    tagging: aws_sdk_resourcegroupstagging,
);
