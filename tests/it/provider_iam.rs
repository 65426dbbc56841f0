//! The IAM and STS providers against a private emulator: every kind is created, read back with the raw SDK
//! (documents, tags, attachments), read through the provider, updated, deleted, and deleted again.

use crate::support::provider::{desired, obj, tag_map, Harness, STACK};
use crate::support::{ACCOUNT_ID, REGION};
use aws_sdk_iam::Client as Iam;
use kbp::graph::{Address, Attrs};
use kbp::providers::iam::{
    instance_profile::InstanceProfile, openid_connect_provider::OpenIdConnectProvider, policy::Policy, policy_doc,
    role::Role, role_policy::RolePolicy, role_policy_attachment::RolePolicyAttachment,
    service_linked_role::ServiceLinkedRole,
};
use kbp::providers::sts::caller_identity::CallerIdentity;
use kbp::providers::{Context, Provider, Registry};
use serde_json::{json, Value};

const WORKER_NODE_POLICY: &str = "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy";

fn address(s: &str) -> Address {
    s.parse().expect("a valid address")
}

/// A trust policy written the way a blueprint might (lists of one), not the way IAM stores it.
fn trust(services: &[&str]) -> Value {
    json!({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": {"Service": services}, "Action": ["sts:AssumeRole"]}]})
}

fn allow(actions: &[&str]) -> Value {
    json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": actions, "Resource": ["*"]}]})
}

fn role_attrs(name: &str) -> Attrs {
    obj(json!({
        "name": name, "path": "/", "description": "Karpenter nodes",
        "assume_role_policy": trust(&["ec2.amazonaws.com"]), "max_session_duration": 3600,
        "tags": {"team": "platform", "cost-center": "42"},
    }))
}

fn decode(doc: &str) -> Value {
    policy_doc::from_aws("test", doc).expect("IAM returns a JSON policy document")
}

/// What the diff checks: every desired attribute, in the provider's canonical form, is what `read` reports.
fn assert_no_drift(provider: &dyn Provider, seen: &Attrs, want: &Attrs) {
    for (key, value) in provider.canonical(want.clone()) {
        assert_eq!(seen.get(&key), Some(&value), "{}: attribute `{key}` drifts", provider.kind());
    }
}

/// Reads the resource and checks it against `want` as the diff would.
async fn assert_reads_back(provider: &dyn Provider, cx: &Context, id: &str, want: &Attrs) {
    let seen = provider.read(cx, id, want).await.expect("read").expect("the resource exists");
    assert_no_drift(provider, &seen.attrs, want);
}

async fn make_role(f: &Harness, name: &str) -> String {
    let a = address(&format!("iam_role.{}", name.replace('-', "_")));
    let at = role_attrs(name);
    Role.create(&f.cx, &desired(&a, &at)).await.expect("create role").id
}

async fn role_exists(iam: &Iam, name: &str) -> bool {
    match iam.get_role().role_name(name).send().await {
        Ok(_) => true,
        Err(e) if e.as_service_error().is_some_and(|e| e.is_no_such_entity_exception()) => false,
        Err(e) => panic!("GetRole {name}: {e:?}"),
    }
}

#[tokio::test]
async fn role_is_created_read_updated_and_deleted() {
    let f = Harness::start().await;
    let addr = address("iam_role.karpenter_node");
    let want = role_attrs("kbp-test-node");
    let applied = Role.create(&f.cx, &desired(&addr, &want)).await.expect("create");
    assert_eq!(applied.id, "kbp-test-node");
    for key in ["id", "name", "arn", "unique_id"] {
        assert!(applied.outputs.contains_key(key), "missing output {key}: {:?}", applied.outputs);
    }
    assert_eq!(applied.outputs["arn"], format!("arn:aws:iam::{ACCOUNT_ID}:role/kbp-test-node"));

    let raw = f.iam.get_role().role_name("kbp-test-node").send().await.expect("GetRole").role.expect("role");
    assert!(policy_doc::equivalent(&decode(raw.assume_role_policy_document().unwrap()), &want["assume_role_policy"]));
    assert_eq!(raw.description(), Some("Karpenter nodes"));
    let tags = tag_map(raw.tags());
    assert_eq!(tags.get("kbp:stack").map(String::as_str), Some(STACK));
    assert_eq!(tags.get("kbp:address").map(String::as_str), Some("iam_role.karpenter_node"));
    assert_eq!(tags.get("team").map(String::as_str), Some("platform"));

    // The blueprint spells the trust policy with lists of one; IAM stores it otherwise: still no drift.
    let seen = Role.read(&f.cx, &applied.id, &want).await.expect("read").expect("exists");
    assert_no_drift(&Role, &seen.attrs, &want);
    assert_eq!(seen.outputs, applied.outputs);

    assert_eq!(Role.find(&f.cx, &desired(&addr, &want)).await.unwrap().as_deref(), Some("kbp-test-node"));
    let other = Context::from_sdk(f.em.sdk_config().await, "other-stack", REGION);
    assert_eq!(Role.find(&other, &desired(&addr, &want)).await.unwrap(), None, "another stack's role is not adopted");

    let mut next = want.clone();
    next["assume_role_policy"] = trust(&["ec2.amazonaws.com", "eks.amazonaws.com"]);
    next["description"] = json!("Karpenter nodes, v2");
    next["max_session_duration"] = json!(7200);
    next["tags"] = json!({"team": "infra", "env": "test"});
    Role.update(&f.cx, &applied.id, &want, &desired(&addr, &next)).await.expect("update");

    let raw = f.iam.get_role().role_name("kbp-test-node").send().await.unwrap().role.unwrap();
    assert!(policy_doc::equivalent(&decode(raw.assume_role_policy_document().unwrap()), &next["assume_role_policy"]));
    assert_eq!(raw.description(), Some("Karpenter nodes, v2"));
    assert_eq!(raw.max_session_duration(), Some(7200));
    let tags = tag_map(raw.tags());
    assert_eq!(tags.get("team").map(String::as_str), Some("infra"));
    assert_eq!(tags.get("env").map(String::as_str), Some("test"));
    assert!(!tags.contains_key("cost-center"), "removed tag is gone: {tags:?}");
    assert!(tags.contains_key("kbp:stack") && tags.contains_key("kbp:address"));
    assert_reads_back(&Role, &f.cx, &applied.id, &next).await;

    // A name already taken is explained.
    let err = Role.create(&f.cx, &desired(&addr, &want)).await.expect_err("name is taken");
    assert_eq!(err.code, "EntityAlreadyExists");
    assert!(err.hint.as_deref().is_some_and(|h| h.contains("kbp-test-node")), "{err:?}");

    Role.delete(&f.cx, &applied.id, &next).await.expect("delete");
    assert!(!role_exists(&f.iam, "kbp-test-node").await);
    assert_eq!(Role.read(&f.cx, &applied.id, &next).await.unwrap(), None);
    Role.delete(&f.cx, &applied.id, &next).await.expect("deleting a gone role succeeds");
}

#[tokio::test]
async fn role_with_leftover_attachments_inline_policies_and_profiles_is_deleted() {
    let f = Harness::start().await;
    let role = make_role(&f, "kbp-test-leftovers").await;
    f.iam.attach_role_policy().role_name(&role).policy_arn(WORKER_NODE_POLICY).send().await.expect("attach");
    let inline = allow(&["s3:GetObject"]).to_string();
    f.iam.put_role_policy().role_name(&role).policy_name("by-hand").policy_document(inline).send().await.expect("put");
    f.iam.create_instance_profile().instance_profile_name("left-behind").send().await.expect("profile");
    f.iam
        .add_role_to_instance_profile()
        .instance_profile_name("left-behind")
        .role_name(&role)
        .send()
        .await
        .expect("add");

    Role.delete(&f.cx, &role, &Attrs::new()).await.expect("delete detaches everything first");
    assert!(!role_exists(&f.iam, &role).await);
    let profile = f.iam.get_instance_profile().instance_profile_name("left-behind").send().await.unwrap();
    assert!(profile.instance_profile.unwrap().roles().is_empty(), "the profile (not kbp's) stays, without the role");
    let managed = f.iam.get_policy().policy_arn(WORKER_NODE_POLICY).send().await.unwrap();
    assert_eq!(managed.policy.unwrap().attachment_count(), Some(0));
}

#[tokio::test]
async fn managed_policy_versions_tags_and_teardown() {
    let f = Harness::start().await;
    let addr = address("iam_policy.karpenter_controller");
    let want = obj(json!({
        "name": "kbp-test-controller", "path": "/kbp/", "description": "Karpenter controller",
        "policy": allow(&["ec2:DescribeInstances"]), "tags": {"team": "platform"},
    }));
    let applied = Policy.create(&f.cx, &desired(&addr, &want)).await.expect("create");
    let arn = format!("arn:aws:iam::{ACCOUNT_ID}:policy/kbp/kbp-test-controller");
    assert_eq!(applied.id, arn);
    assert_eq!(applied.outputs["arn"], arn.as_str());
    assert_eq!(applied.outputs["name"], "kbp-test-controller");

    let raw = f.iam.get_policy().policy_arn(&arn).send().await.unwrap().policy.unwrap();
    let tags = tag_map(raw.tags());
    assert_eq!(tags.get("kbp:address").map(String::as_str), Some("iam_policy.karpenter_controller"));
    assert_eq!(tags.get("team").map(String::as_str), Some("platform"));
    let v1 = f.iam.get_policy_version().policy_arn(&arn).version_id("v1").send().await.unwrap();
    assert!(policy_doc::equivalent(&decode(v1.policy_version.unwrap().document().unwrap()), &want["policy"]));

    assert_reads_back(&Policy, &f.cx, &arn, &want).await;
    assert_eq!(Policy.find(&f.cx, &desired(&addr, &want)).await.unwrap().as_deref(), Some(arn.as_str()));

    // The same document spelled differently is not a new version.
    let mut same = want.clone();
    same["policy"] = json!({"Statement": {"Resource": "*", "Action": "ec2:DescribeInstances", "Effect": "Allow"},
        "Version": "2012-10-17"});
    Policy.update(&f.cx, &arn, &want, &desired(&addr, &same)).await.expect("no-op update");
    let versions = f.iam.list_policy_versions().policy_arn(&arn).send().await.unwrap();
    assert_eq!(versions.versions().len(), 1);

    // Six document changes: IAM keeps five versions, so the oldest are pruned on the way.
    let mut prior = want.clone();
    for i in 0..6 {
        let mut next = want.clone();
        next["policy"] = allow(&["ec2:DescribeInstances", &format!("ec2:Describe{i}")]);
        next["tags"] = json!({"team": "platform", "round": i.to_string()});
        Policy
            .update(&f.cx, &arn, &prior, &desired(&addr, &next))
            .await
            .unwrap_or_else(|e| panic!("update {i}: {e:?}"));
        prior = next;
    }
    let versions = f.iam.list_policy_versions().policy_arn(&arn).send().await.unwrap();
    assert!(versions.versions().len() <= 5, "{:?}", versions.versions());
    let seen = Policy.read(&f.cx, &arn, &Attrs::new()).await.unwrap().unwrap();
    assert!(policy_doc::equivalent(&seen.attrs["policy"], &prior["policy"]));
    assert_eq!(seen.attrs["tags"], json!({"team": "platform", "round": "5"}));

    // Delete while still attached to a role (as a blueprint change might leave it).
    let role = make_role(&f, "kbp-test-policy-user").await;
    f.iam.attach_role_policy().role_name(&role).policy_arn(&arn).send().await.expect("attach");
    Policy.delete(&f.cx, &arn, &prior).await.expect("delete detaches first");
    assert!(f.iam.get_policy().policy_arn(&arn).send().await.is_err(), "policy is gone");
    let attached = f.iam.list_attached_role_policies().role_name(&role).send().await.unwrap();
    assert!(attached.attached_policies().is_empty());
    assert_eq!(Policy.read(&f.cx, &arn, &prior).await.unwrap(), None);
    Policy.delete(&f.cx, &arn, &prior).await.expect("deleting a gone policy succeeds");
}

#[tokio::test]
async fn inline_role_policy_is_put_updated_and_deleted() {
    let f = Harness::start().await;
    let role = make_role(&f, "kbp-test-inline").await;
    let addr = address("iam_role_policy.interruption");
    let want = obj(json!({"role": role, "name": "interruption", "policy": allow(&["sqs:ReceiveMessage"])}));
    let applied = RolePolicy.create(&f.cx, &desired(&addr, &want)).await.expect("create");
    assert_eq!(applied.id, "kbp-test-inline:interruption");
    assert_eq!(applied.outputs["id"], "kbp-test-inline:interruption");

    let raw = f.iam.get_role_policy().role_name(&role).policy_name("interruption").send().await.unwrap();
    assert!(policy_doc::equivalent(&decode(raw.policy_document()), &want["policy"]));
    assert_reads_back(&RolePolicy, &f.cx, &applied.id, &want).await;

    let mut next = want.clone();
    next["policy"] = allow(&["sqs:ReceiveMessage", "sqs:DeleteMessage"]);
    RolePolicy.update(&f.cx, &applied.id, &want, &desired(&addr, &next)).await.expect("update");
    let raw = f.iam.get_role_policy().role_name(&role).policy_name("interruption").send().await.unwrap();
    assert!(policy_doc::equivalent(&decode(raw.policy_document()), &next["policy"]));
    assert_reads_back(&RolePolicy, &f.cx, &applied.id, &next).await;

    RolePolicy.delete(&f.cx, &applied.id, &next).await.expect("delete");
    let names = f.iam.list_role_policies().role_name(&role).send().await.unwrap();
    assert!(names.policy_names().is_empty());
    assert_eq!(RolePolicy.read(&f.cx, &applied.id, &next).await.unwrap(), None);
    RolePolicy.delete(&f.cx, &applied.id, &next).await.expect("deleting a gone inline policy succeeds");
    Role.delete(&f.cx, &role, &Attrs::new()).await.unwrap();
    assert_eq!(RolePolicy.read(&f.cx, &applied.id, &next).await.unwrap(), None, "gone with its role");
}

#[tokio::test]
async fn aws_managed_policy_is_attached_and_detached() {
    let f = Harness::start().await;
    let role = make_role(&f, "kbp-test-attach").await;
    let addr = address("iam_role_policy_attachment.worker_node");
    let want = obj(json!({"role": role, "policy_arn": WORKER_NODE_POLICY}));
    let applied = RolePolicyAttachment.create(&f.cx, &desired(&addr, &want)).await.expect("attach");
    assert_eq!(applied.id, format!("kbp-test-attach/{WORKER_NODE_POLICY}"));

    let attached = f.iam.list_attached_role_policies().role_name(&role).send().await.unwrap();
    let arns: Vec<_> = attached.attached_policies().iter().filter_map(|p| p.policy_arn()).collect();
    assert_eq!(arns, [WORKER_NODE_POLICY]);
    assert_reads_back(&RolePolicyAttachment, &f.cx, &applied.id, &want).await;
    // Attaching again (a create repeated after a lost state write) is harmless.
    RolePolicyAttachment.create(&f.cx, &desired(&addr, &want)).await.expect("attach again");

    RolePolicyAttachment.delete(&f.cx, &applied.id, &want).await.expect("detach");
    let attached = f.iam.list_attached_role_policies().role_name(&role).send().await.unwrap();
    assert!(attached.attached_policies().is_empty());
    assert_eq!(RolePolicyAttachment.read(&f.cx, &applied.id, &want).await.unwrap(), None);
    RolePolicyAttachment.delete(&f.cx, &applied.id, &want).await.expect("detaching again succeeds");

    Role.delete(&f.cx, &role, &Attrs::new()).await.unwrap();
    assert_eq!(RolePolicyAttachment.read(&f.cx, &applied.id, &want).await.unwrap(), None, "role gone → gone");
    RolePolicyAttachment.delete(&f.cx, &applied.id, &want).await.expect("detaching from a gone role succeeds");
}

#[tokio::test]
async fn instance_profile_switches_roles_and_tags() {
    let f = Harness::start().await;
    let first = make_role(&f, "kbp-test-node-a").await;
    let second = make_role(&f, "kbp-test-node-b").await;
    let addr = address("iam_instance_profile.karpenter_node");
    let want = obj(json!({"name": "kbp-test-node", "path": "/", "role": first, "tags": {"team": "platform"}}));
    let applied = InstanceProfile.create(&f.cx, &desired(&addr, &want)).await.expect("create");
    assert_eq!(applied.id, "kbp-test-node");
    assert_eq!(applied.outputs["arn"], format!("arn:aws:iam::{ACCOUNT_ID}:instance-profile/kbp-test-node"));

    let raw = f.iam.get_instance_profile().instance_profile_name("kbp-test-node").send().await.unwrap();
    let raw = raw.instance_profile.unwrap();
    assert_eq!(raw.roles().iter().map(|r| r.role_name()).collect::<Vec<_>>(), [first.as_str()]);
    let tags = tag_map(raw.tags());
    assert_eq!(tags.get("kbp:stack").map(String::as_str), Some(STACK));
    assert_eq!(tags.get("team").map(String::as_str), Some("platform"));
    assert_reads_back(&InstanceProfile, &f.cx, &applied.id, &want).await;
    assert_eq!(InstanceProfile.find(&f.cx, &desired(&addr, &want)).await.unwrap().as_deref(), Some("kbp-test-node"));

    let next = obj(json!({"name": "kbp-test-node", "path": "/", "role": second, "tags": {"team": "infra"}}));
    InstanceProfile.update(&f.cx, &applied.id, &want, &desired(&addr, &next)).await.expect("update");
    let raw = f.iam.get_instance_profile().instance_profile_name("kbp-test-node").send().await.unwrap();
    let raw = raw.instance_profile.unwrap();
    assert_eq!(raw.roles().iter().map(|r| r.role_name()).collect::<Vec<_>>(), [second.as_str()]);
    assert_eq!(tag_map(raw.tags()).get("team").map(String::as_str), Some("infra"));
    assert_reads_back(&InstanceProfile, &f.cx, &applied.id, &next).await;

    InstanceProfile.delete(&f.cx, &applied.id, &next).await.expect("delete");
    assert!(f.iam.get_instance_profile().instance_profile_name("kbp-test-node").send().await.is_err());
    assert!(role_exists(&f.iam, &second).await, "the role outlives its profile");
    assert_eq!(InstanceProfile.read(&f.cx, &applied.id, &next).await.unwrap(), None);
    InstanceProfile.delete(&f.cx, &applied.id, &next).await.expect("deleting a gone profile succeeds");
}

#[tokio::test]
async fn spot_service_linked_role_is_created_once_and_never_deleted() {
    let f = Harness::start().await;
    let addr = address("iam_service_linked_role.spot");
    let want = obj(json!({"aws_service_name": "spot.amazonaws.com"}));
    assert!(ServiceLinkedRole.retain_on_destroy());
    assert_eq!(ServiceLinkedRole.find(&f.cx, &desired(&addr, &want)).await.unwrap(), None);

    let first = ServiceLinkedRole.create(&f.cx, &desired(&addr, &want)).await.expect("create");
    for key in ["id", "name", "arn"] {
        assert!(first.outputs.contains_key(key), "missing output {key}");
    }
    let raw = f.iam.get_role().role_name(&first.id).send().await.unwrap().role.unwrap();
    assert_eq!(raw.path(), "/aws-service-role/spot.amazonaws.com/");

    let second = ServiceLinkedRole.create(&f.cx, &desired(&addr, &want)).await.expect("second create adopts");
    assert_eq!(second, first);
    assert_eq!(ServiceLinkedRole.find(&f.cx, &desired(&addr, &want)).await.unwrap(), Some(first.id.clone()));
    assert_reads_back(&ServiceLinkedRole, &f.cx, &first.id, &want).await;

    ServiceLinkedRole.delete(&f.cx, &first.id, &want).await.expect("delete is a no-op");
    assert!(role_exists(&f.iam, &first.id).await, "the account-wide role stays");
}

#[tokio::test]
async fn oidc_provider_is_registered_retagged_and_removed() {
    let f = Harness::start().await;
    let addr = address("iam_openid_connect_provider.cluster");
    let host = "oidc.eks.us-west-2.amazonaws.com/id/EXAMPLED539D4633E53DE1B71EXAMPLE";
    let want = obj(json!({"url": format!("https://{host}"), "client_id_list": ["sts.amazonaws.com"],
        "tags": {"team": "platform"}}));
    let applied = OpenIdConnectProvider.create(&f.cx, &desired(&addr, &want)).await.expect("create");
    let arn = format!("arn:aws:iam::{ACCOUNT_ID}:oidc-provider/{host}");
    assert_eq!(applied.id, arn);
    assert_eq!(applied.outputs["issuer_host"], host);

    let raw = f.iam.get_open_id_connect_provider().open_id_connect_provider_arn(&arn).send().await.unwrap();
    assert_eq!(raw.url(), Some(host));
    assert_eq!(raw.client_id_list(), ["sts.amazonaws.com"]);
    assert_eq!(tag_map(raw.tags()).get("kbp:address").map(String::as_str), Some("iam_openid_connect_provider.cluster"));
    let seen = OpenIdConnectProvider.read(&f.cx, &arn, &want).await.unwrap().unwrap();
    assert_no_drift(&OpenIdConnectProvider, &seen.attrs, &want);
    assert_eq!(seen.outputs, applied.outputs);
    assert_eq!(OpenIdConnectProvider.find(&f.cx, &desired(&addr, &want)).await.unwrap(), Some(arn.clone()));

    let mut next = want.clone();
    next["tags"] = json!({"team": "infra"});
    OpenIdConnectProvider.update(&f.cx, &arn, &want, &desired(&addr, &next)).await.expect("update");
    let raw = f.iam.get_open_id_connect_provider().open_id_connect_provider_arn(&arn).send().await.unwrap();
    assert_eq!(tag_map(raw.tags()).get("team").map(String::as_str), Some("infra"));
    assert_reads_back(&OpenIdConnectProvider, &f.cx, &arn, &next).await;

    OpenIdConnectProvider.delete(&f.cx, &arn, &next).await.expect("delete");
    assert!(f.iam.get_open_id_connect_provider().open_id_connect_provider_arn(&arn).send().await.is_err());
    assert_eq!(OpenIdConnectProvider.read(&f.cx, &arn, &next).await.unwrap(), None);
    OpenIdConnectProvider.delete(&f.cx, &arn, &next).await.expect("deleting a gone provider succeeds");
}

#[tokio::test]
async fn caller_identity_reports_account_and_partition() {
    let f = Harness::start().await;
    let addr = address("aws_caller_identity.current");
    let none = Attrs::new();
    let applied = CallerIdentity.create(&f.cx, &desired(&addr, &none)).await.expect("create");
    assert_eq!(applied.id, ACCOUNT_ID);
    assert_eq!(applied.outputs["id"], ACCOUNT_ID);
    assert_eq!(applied.outputs["account_id"], ACCOUNT_ID);
    assert_eq!(applied.outputs["partition"], "aws");
    assert_eq!(applied.outputs["url_suffix"], "amazonaws.com");
    let me = f.em.sts().await.get_caller_identity().send().await.unwrap();
    assert_eq!(applied.outputs["arn"], me.arn().unwrap());
    assert_eq!(applied.outputs["user_id"], me.user_id().unwrap());

    let seen = CallerIdentity.read(&f.cx, &applied.id, &none).await.unwrap().unwrap();
    assert_eq!(seen.attrs, none);
    assert_eq!(seen.outputs, applied.outputs);
    CallerIdentity.delete(&f.cx, &applied.id, &none).await.expect("nothing to delete");
}

#[test]
fn registry_has_every_iam_and_sts_kind() {
    let r = Registry::builtin();
    for kind in [
        "aws_iam_role",
        "aws_iam_policy",
        "aws_iam_role_policy",
        "aws_iam_role_policy_attachment",
        "aws_iam_instance_profile",
        "aws_iam_service_linked_role",
        "aws_iam_openid_connect_provider",
        "aws_caller_identity",
    ] {
        assert!(r.has(kind), "{kind} is not registered");
    }
}
