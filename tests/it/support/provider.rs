//! Driving one provider at a time against a private emulator, as the provider_* modules do: a [`Harness`] that
//! creates, updates, reads, finds and deletes through the [`Registry`] and checks what the diff relies on (the
//! outputs hold `id`, `read` reports the desired attributes), and the attributes and tags tests compare with.
//!
//! The emulator is read back with the raw SDK clients the harness holds, never through the provider under test.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use kbp::graph::{Address, Attrs};
use kbp::providers::{tags, Applied, Context, Desired, Provider, ProviderError, Registry};
use serde_json::Value;

use super::{init_tracing, Emulator, REGION};

/// The stack every provider test creates in.
pub(crate) const STACK: &str = "test-stack";

/// Attributes AWS does not report back, by kind: how to apply a change rather than what is applied. `read`
/// leaves them out, and the diff then trusts state.
const NOT_READ_BACK: &[(&str, &str)] = &[("aws_eks_addon", "resolve_conflicts")];

/// The attributes a JSON object literal stands for.
pub(crate) fn obj(v: Value) -> Attrs {
    v.as_object().cloned().expect("attributes are a JSON object")
}

/// Attributes as tests write them: a `json!` object, or [`Attrs`] built up key by key.
pub(crate) trait ToAttrs {
    fn to_attrs(self) -> Attrs;
}

impl ToAttrs for Value {
    fn to_attrs(self) -> Attrs {
        obj(self)
    }
}

impl ToAttrs for &Value {
    fn to_attrs(self) -> Attrs {
        obj(self.clone())
    }
}

impl ToAttrs for Attrs {
    fn to_attrs(self) -> Attrs {
        self
    }
}

impl ToAttrs for &Attrs {
    fn to_attrs(self) -> Attrs {
        self.clone()
    }
}

/// What a provider is asked to create, with a client token of its own as kbp gives every create (AWS answers a
/// token reused with other parameters with IdempotentParameterMismatch).
pub(crate) fn desired<'a>(address: &'a Address, attrs: &'a Attrs) -> Desired<'a> {
    let token: &'static str = Box::leak(uuid::Uuid::new_v4().to_string().into_boxed_str());
    Desired { address, attrs, kbp_tags: tags::kbp_tags(STACK, address), client_token: token, replaces: None }
}

/// The user tags plus the kbp tags for `address`, as they should be on the resource in AWS: a keyed address
/// `type.name["key"]` is tagged `type.name/key`, inside IAM's tag character set.
pub(crate) fn expected_tags(user: &[(&str, &str)], address: &str) -> BTreeMap<String, String> {
    let mut m: BTreeMap<String, String> = user.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    m.insert(tags::STACK.into(), STACK.into());
    let tagged = match address.split_once("[\"") {
        Some((head, key)) => format!("{head}/{}", key.trim_end_matches("\"]")),
        None => address.to_string(),
    };
    m.insert(tags::ADDRESS.into(), tagged);
    m
}

/// Tags (or labels) in the shape one service's SDK returns them.
pub(crate) trait SdkTags {
    fn into_map(self) -> BTreeMap<String, String>;
}

impl SdkTags for &[aws_sdk_ec2::types::Tag] {
    fn into_map(self) -> BTreeMap<String, String> {
        self.iter().map(|t| (t.key().unwrap().to_string(), t.value().unwrap().to_string())).collect()
    }
}

impl SdkTags for &[aws_sdk_iam::types::Tag] {
    fn into_map(self) -> BTreeMap<String, String> {
        self.iter().map(|t| (t.key().to_string(), t.value().to_string())).collect()
    }
}

/// EKS answers tags and labels as an optional map.
impl SdkTags for Option<&HashMap<String, String>> {
    fn into_map(self) -> BTreeMap<String, String> {
        self.cloned().unwrap_or_default().into_iter().collect()
    }
}

/// Tags read back with the SDK, in the form [`expected_tags`] gives.
pub(crate) fn tag_map(tags: impl SdkTags) -> BTreeMap<String, String> {
    tags.into_map()
}

/// A private emulator, a provider context for [`STACK`] in it, and SDK clients to read it back with.
pub(crate) struct Harness {
    /// Dropping the emulator stops it, so it lives as long as the test.
    pub em: Emulator,
    pub cx: Context,
    pub ec2: aws_sdk_ec2::Client,
    pub eks: aws_sdk_eks::Client,
    pub iam: aws_sdk_iam::Client,
    pub sqs: aws_sdk_sqs::Client,
    pub events: aws_sdk_eventbridge::Client,
    registry: Registry,
}

impl Harness {
    pub(crate) async fn start() -> Harness {
        init_tracing();
        let em = Emulator::start();
        let sdk = em.sdk_config().await;
        Harness {
            cx: Context::from_sdk(sdk.clone(), STACK, REGION),
            ec2: aws_sdk_ec2::Client::new(&sdk),
            eks: aws_sdk_eks::Client::new(&sdk),
            iam: aws_sdk_iam::Client::new(&sdk),
            sqs: aws_sdk_sqs::Client::new(&sdk),
            events: aws_sdk_eventbridge::Client::new(&sdk),
            em,
            registry: Registry::builtin(),
        }
    }

    pub(crate) fn provider(&self, kind: &str) -> Arc<dyn Provider> {
        self.registry.get(kind).unwrap_or_else(|| panic!("{kind} is registered"))
    }

    /// Creates the resource and checks that its outputs hold its ID and that the provider reads back the
    /// desired attributes.
    pub(crate) async fn create(&self, kind: &str, address: &str, attrs: impl ToAttrs) -> Applied {
        let address: Address = address.parse().unwrap();
        let attrs = attrs.to_attrs();
        let p = self.provider(kind);
        let applied =
            p.create(&self.cx, &desired(&address, &attrs)).await.unwrap_or_else(|e| panic!("create {kind}: {e}"));
        assert_eq!(applied.outputs["id"], applied.id.as_str(), "{kind} outputs include id");
        self.assert_reads(kind, &applied.id, &attrs).await;
        applied
    }

    /// Updates the resource and checks that the provider reads back the desired attributes under the ID the
    /// update returns (which some kinds change: a route table association is replaced).
    pub(crate) async fn update(&self, kind: &str, address: &str, id: &str, attrs: impl ToAttrs) -> Applied {
        let address: Address = address.parse().unwrap();
        let attrs = attrs.to_attrs();
        let applied =
            self.try_update(kind, &address, id, &attrs).await.unwrap_or_else(|e| panic!("update {kind}: {e}"));
        self.assert_reads(kind, &applied.id, &attrs).await;
        applied
    }

    /// [`Harness::update`] of a kind that AWS changes in place: the ID stays.
    pub(crate) async fn update_in_place(&self, kind: &str, address: &str, id: &str, attrs: impl ToAttrs) -> Applied {
        let applied = self.update(kind, address, id, attrs).await;
        assert_eq!(applied.id, id, "{kind} keeps its ID when updated in place");
        applied
    }

    pub(crate) async fn try_update(
        &self,
        kind: &str,
        address: &Address,
        id: &str,
        attrs: &Attrs,
    ) -> Result<Applied, ProviderError> {
        self.provider(kind).update(&self.cx, id, &Attrs::new(), &desired(address, attrs)).await
    }

    /// What the diff checks: `read`, given `want` as the prior state, reports the desired attributes in the
    /// provider's canonical form (less what AWS does not report). Returns the outputs read.
    pub(crate) async fn assert_reads(&self, kind: &str, id: &str, want: &Attrs) -> Attrs {
        let p = self.provider(kind);
        let observed = p.read(&self.cx, id, want).await.unwrap().unwrap_or_else(|| panic!("{kind} {id} exists"));
        let mut expected = p.canonical(want.clone());
        for (_, key) in NOT_READ_BACK.iter().filter(|(k, _)| *k == kind) {
            expected.remove(*key);
        }
        assert_eq!(observed.attrs, expected, "{kind} {id} reads back as desired");
        assert_eq!(observed.outputs["id"], id);
        observed.outputs
    }

    pub(crate) async fn find(&self, kind: &str, address: &str, attrs: impl ToAttrs) -> Option<String> {
        let address: Address = address.parse().unwrap();
        let attrs = attrs.to_attrs();
        self.provider(kind).find(&self.cx, &desired(&address, &attrs)).await.unwrap()
    }

    /// Deletes twice (the second finds it gone and succeeds) and checks that `read` then says it is gone.
    pub(crate) async fn delete(&self, kind: &str, id: &str) {
        let p = self.provider(kind);
        p.delete(&self.cx, id, &Attrs::new()).await.unwrap_or_else(|e| panic!("delete {kind}: {e}"));
        p.delete(&self.cx, id, &Attrs::new()).await.unwrap_or_else(|e| panic!("delete {kind} again: {e}"));
        assert_eq!(p.read(&self.cx, id, &Attrs::new()).await.unwrap(), None, "{kind} {id} reads as gone");
    }
}
