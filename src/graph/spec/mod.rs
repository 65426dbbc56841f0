//! The typed seam between the compiler and the providers: a kind's attributes as one struct both name, so a
//! misspelt or mistyped attribute does not compile on either side. A spec is generic over `R`, the type of a
//! value that may come from another resource's output: the compiler fills it with [`Input`] (a literal, or a
//! reference the engine resolves, [`crate::graph::value::reference`]); the provider reads it with the resolved
//! type (`String`) through [`crate::providers::spec::parse`]. Serialized, a spec is the resource's attributes, in
//! the order of its fields.
//!
//! One file per kind, as in `providers/`. A kind without one yet emits `json!` attributes that its provider reads
//! with its own `#[derive(Deserialize)]` struct.

pub mod eks_access_entry;
pub mod eks_addon;
pub mod eks_cluster;
pub mod eks_node_group;
pub mod eks_pod_identity_association;
pub mod event_rule;
pub mod iam_role;
pub mod kms_key;
pub mod sqs_queue;
pub mod sqs_queue_policy;

/// A value the compiler writes where another resource's output may go: a literal or a reference.
pub type Input = serde_json::Value;

/// A spec as a resource's attributes.
pub fn attrs(spec: &impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(spec).expect("invariant: a spec is plain data, and plain data serializes")
}

#[cfg(test)]
mod tests {
    use serde::de::DeserializeOwned;
    use serde::Serialize;
    use serde_json::{json, Value};

    use crate::graph::{kinds, value, Address};

    /// `attrs` (references resolved) read as the spec `T` and written back: the same attributes when the spec
    /// names every one, in the order the compiler wrote them.
    fn round_trip<T: DeserializeOwned + Serialize>(attrs: &Value) -> Result<Value, serde_json::Error> {
        serde_json::to_value(serde_json::from_value::<T>(attrs.clone())?)
    }

    /// The other half of the seam: what the compiler emits for a kind with a spec, once the engine has put in
    /// the other resources' outputs, the provider reads whole, with no attribute it would not see.
    #[test]
    fn every_shipped_blueprint_compiles_specs_their_providers_read_whole() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("blueprints");
        let outputs = |a: &Address, o: &str| Some(json!(format!("{a}.{o}")));
        let mut seen = std::collections::BTreeMap::<String, usize>::new();
        for path in std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()) {
            if path.extension().is_none_or(|e| e != "toml") {
                continue;
            }
            // Each as shipped, and with what it leaves off that makes more kinds (the secrets key).
            let with_key = ["cluster.secrets_encryption=true".to_string()];
            let graphs = [&[][..], &with_key[..]]
                .map(|sets| crate::graph::compile(&crate::blueprint::load(&path, sets).unwrap()).unwrap());
            for r in graphs.iter().flat_map(|g| g.resources()) {
                let (attrs, _) = value::resolve(&Value::Object(r.attrs.clone()), &outputs);
                let read = match r.kind.as_str() {
                    kinds::EKS_CLUSTER => round_trip::<super::eks_cluster::Cluster<String>>(&attrs),
                    kinds::EKS_ADDON => round_trip::<super::eks_addon::Addon<String>>(&attrs),
                    kinds::EKS_NODE_GROUP => round_trip::<super::eks_node_group::NodeGroup<String>>(&attrs),
                    kinds::EKS_ACCESS_ENTRY => round_trip::<super::eks_access_entry::AccessEntry<String>>(&attrs),
                    kinds::IAM_ROLE => round_trip::<super::iam_role::Role>(&attrs),
                    kinds::KMS_KEY => round_trip::<super::kms_key::Key>(&attrs),
                    kinds::SQS_QUEUE => round_trip::<super::sqs_queue::Queue>(&attrs),
                    kinds::SQS_QUEUE_POLICY => round_trip::<super::sqs_queue_policy::QueuePolicy<String>>(&attrs),
                    kinds::EVENT_RULE => round_trip::<super::event_rule::Rule<String>>(&attrs),
                    kinds::EKS_POD_IDENTITY_ASSOCIATION => {
                        round_trip::<super::eks_pod_identity_association::PodIdentityAssociation<String>>(&attrs)
                    }
                    _ => continue,
                };
                let read = read.unwrap_or_else(|e| panic!("{} {}: {e}", path.display(), r.address));
                assert_eq!(read, attrs, "{} {}", path.display(), r.address);
                *seen.entry(r.kind.clone()).or_default() += 1;
            }
        }
        assert!(seen.get(kinds::EKS_CLUSTER).is_some_and(|n| *n >= 5), "{seen:?}");
        assert!(seen.get(kinds::EKS_ADDON).is_some_and(|n| *n >= 5), "{seen:?}");
        assert!(seen.get(kinds::EKS_NODE_GROUP).is_some_and(|n| *n >= 5), "{seen:?}");
        assert!(seen.get(kinds::EKS_ACCESS_ENTRY).is_some_and(|n| *n >= 10), "{seen:?}");
        assert!(seen.get(kinds::EKS_POD_IDENTITY_ASSOCIATION).is_some_and(|n| *n >= 1), "{seen:?}");
        assert!(seen.get(kinds::IAM_ROLE).is_some_and(|n| *n >= 15), "{seen:?}");
        assert!(seen.get(kinds::KMS_KEY).is_some_and(|n| *n >= 5), "{seen:?}");
        assert!(seen.get(kinds::SQS_QUEUE).is_some_and(|n| *n >= 5), "{seen:?}");
        assert!(seen.get(kinds::SQS_QUEUE_POLICY).is_some_and(|n| *n >= 5), "{seen:?}");
        assert!(seen.get(kinds::EVENT_RULE).is_some_and(|n| *n >= 25), "{seen:?}");
    }

    #[test]
    fn an_attribute_the_spec_does_not_name_is_seen() {
        let attrs = json!({"cluster_name": "c", "addon_name": "vpc-cni", "addon_version": null,
            "configuration_values": null, "resolve_conflicts": null, "tags": {}, "kubernetes_verison": "1.36"});
        assert_ne!(round_trip::<super::eks_addon::Addon<String>>(&attrs).unwrap(), attrs);
    }
}
