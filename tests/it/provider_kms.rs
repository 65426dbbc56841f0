//! The KMS key provider against a private emulator: create with alias, rotation and tags; read; update; find
//! by alias; delete schedules the deletion and the key then reads as gone.

use kbp::graph::Address;
use kbp::providers::{Context, Registry};
use serde_json::json;

use crate::support::provider::{desired, obj, STACK};
use crate::support::{Emulator, REGION};

#[tokio::test(flavor = "multi_thread")]
async fn secrets_key_lifecycle() {
    let em = Emulator::start();
    let cx = Context::from_sdk(em.sdk_config().await, STACK, REGION);
    let kms = aws_sdk_kms::Client::new(&em.sdk_config().await);
    let p = Registry::builtin().get("aws_kms_key").expect("registered");
    let address: Address = "kms_key.secrets".parse().unwrap();
    let want = obj(json!({
        "alias": "alias/demo-eks-secrets",
        "description": "secrets of demo",
        "enable_key_rotation": true,
        "deletion_window_in_days": 7,
        "tags": {"team": "platform"},
    }));
    let d = desired(&address, &want);

    let created = p.create(&cx, &d).await.unwrap();
    let id = created.id.clone();
    assert!(created.outputs["arn"].as_str().unwrap().contains(&id));
    let by_alias = kms.describe_key().key_id("alias/demo-eks-secrets").send().await.unwrap();
    assert_eq!(by_alias.key_metadata().unwrap().key_id(), id);
    assert!(kms.get_key_rotation_status().key_id(&id).send().await.unwrap().key_rotation_enabled());
    let tags = kms.list_resource_tags().key_id(&id).send().await.unwrap();
    let has = |k: &str, v: &str| tags.tags().iter().any(|t| t.tag_key() == k && t.tag_value() == v);
    assert!(has("team", "platform") && has("kbp:stack", "test-stack") && has("kbp:address", "kms_key.secrets"));

    let read = p.read(&cx, &id, &want).await.unwrap().expect("exists");
    assert_eq!(read.attrs, want, "reads back what was asked");
    assert_eq!(p.find(&cx, &d).await.unwrap().as_deref(), Some(id.as_str()));

    let mut changed = want.clone();
    changed.insert("enable_key_rotation".into(), json!(false));
    changed.insert("tags".into(), json!({"team": "infra"}));
    let d2 = desired(&address, &changed);
    p.update(&cx, &id, &want, &d2).await.unwrap();
    assert_eq!(p.read(&cx, &id, &changed).await.unwrap().unwrap().attrs, changed);

    p.delete(&cx, &id, &changed).await.unwrap();
    let after = kms.describe_key().key_id(&id).send().await.unwrap();
    assert_eq!(after.key_metadata().unwrap().key_state(), Some(&aws_sdk_kms::types::KeyState::PendingDeletion));
    assert!(p.read(&cx, &id, &changed).await.unwrap().is_none(), "a key pending deletion is gone");
    assert!(p.find(&cx, &d).await.unwrap().is_none(), "the alias went with it");
    p.delete(&cx, &id, &changed).await.expect("deleting again is fine");
}
