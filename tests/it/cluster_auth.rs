//! Authentication as on EKS, against a real kube-apiserver: the emulator's cluster is served by a real control
//! plane that sends every bearer token to the emulator's TokenReview webhook (verified as aws-iam-authenticator
//! verifies it, the caller mapped through the cluster's access entries) and authorizes with RBAC. kbp's tokens
//! (`kbp::access::token`, what `kbp apply` and `kbp token` send) are the ones tried here.

use std::time::{Duration, SystemTime};

use aws_credential_types::Credentials;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::api::{Api, PostParams};
use serde_json::json;

use crate::support::*;

const CLUSTER: &str = "auth";

/// A cluster in API authentication mode; the creator (the emulator's default caller) gets the admin entry.
async fn cluster(em: &Emulator) -> (String, String) {
    let ec2 = em.ec2().await;
    let vpc = ec2.create_vpc().cidr_block("10.0.0.0/16").send().await.unwrap().vpc.unwrap().vpc_id.unwrap();
    let mut subnets = Vec::new();
    for (i, zone) in ["us-west-2a", "us-west-2b"].iter().enumerate() {
        let s = ec2.create_subnet().vpc_id(&vpc).cidr_block(format!("10.0.{i}.0/24")).availability_zone(*zone);
        subnets.push(s.send().await.unwrap().subnet.unwrap().subnet_id.unwrap());
    }
    let iam = em.iam().await;
    let trust = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"eks.amazonaws.com"},"Action":"sts:AssumeRole"}]}"#;
    let role = iam.create_role().role_name("auth-cluster").assume_role_policy_document(trust).send().await.unwrap();
    let eks = em.eks().await;
    let access = aws_sdk_eks::types::CreateAccessConfigRequest::builder()
        .authentication_mode(aws_sdk_eks::types::AuthenticationMode::Api)
        .bootstrap_cluster_creator_admin_permissions(true)
        .build();
    eks.create_cluster()
        .name(CLUSTER)
        .role_arn(role.role.unwrap().arn)
        .resources_vpc_config(aws_sdk_eks::types::VpcConfigRequest::builder().set_subnet_ids(Some(subnets)).build())
        .access_config(access)
        .send()
        .await
        .unwrap();
    for _ in 0..300 {
        let c = eks.describe_cluster().name(CLUSTER).send().await.unwrap().cluster.unwrap();
        if c.status == Some(aws_sdk_eks::types::ClusterStatus::Active) {
            let ca = c.certificate_authority.unwrap().data.unwrap();
            return (c.endpoint.unwrap(), ca);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the cluster never became ACTIVE");
}

/// A client that sends `token` (no renewal: each step of the test makes the token it means to try).
async fn client_with(endpoint: &str, ca: &str, token: &str) -> kube::Client {
    let kubeconfig: kube::config::Kubeconfig = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": endpoint, "certificate-authority-data": ca}}],
        "users": [{"name": "u", "user": {"token": token}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "c",
    }))
    .unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await.unwrap();
    kube::Client::try_from(config).unwrap()
}

/// kbp's EKS token for `credentials`, signed `age` ago. The API server remembers what the webhook said of a
/// token for a while (as EKS's does), so each step after an access change signs at a time of its own: a token
/// signed within the same second as an earlier one would be that token, and its old answer.
fn token(credentials: &Credentials, age: Duration) -> String {
    kbp::access::token::token(CLUSTER, REGION, credentials, SystemTime::now() - age).unwrap()
}

/// The HTTP code of listing kube-system's pods with `token` (200 when allowed).
async fn list_pods(endpoint: &str, ca: &str, token: &str) -> u16 {
    let api: Api<Pod> = Api::namespaced(client_with(endpoint, ca, token).await, "kube-system");
    match api.list(&Default::default()).await {
        Ok(_) => 200,
        Err(kube::Error::Api(s)) => s.code,
        Err(e) => panic!("listing pods did not reach the API: {e}"),
    }
}

/// Who the API server takes the token's bearer for (a SelfSubjectReview): user name, groups, extra.
async fn who_am_i(endpoint: &str, ca: &str, token: &str) -> serde_json::Value {
    let client = client_with(endpoint, ca, token).await;
    let review = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
    let request = http::Request::post("/apis/authentication.k8s.io/v1/selfsubjectreviews")
        .header("content-type", "application/json")
        .body(serde_json::to_vec(&review).unwrap())
        .unwrap();
    let answer: serde_json::Value = client.request(request).await.unwrap();
    answer["status"]["userInfo"].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn tokens_are_authenticated_as_on_eks_and_access_entries_decide_who_may_do_what() {
    let em = Emulator::start_with("instant", 1.0);
    let (endpoint, ca) = cluster(&em).await;
    let creator = Credentials::new("testing", "testing", None, None, "test");

    // The cluster creator's admin entry (AmazonEKSClusterAdminPolicy) admits a fresh token, not a stale one.
    assert_eq!(list_pods(&endpoint, &ca, &token(&creator, Duration::ZERO)).await, 200);
    assert_eq!(list_pods(&endpoint, &ca, &token(&creator, Duration::from_secs(16 * 60))).await, 401);
    assert_eq!(list_pods(&endpoint, &ca, "k8s-aws-v1.bm90IGEgVVJM").await, 401, "not a presigned URL");

    // Another IAM identity: unknown to the cluster until it has an access entry.
    let iam = em.iam().await;
    let user = iam.create_user().user_name("viewer").send().await.unwrap().user.unwrap();
    let key = iam.create_access_key().user_name("viewer").send().await.unwrap().access_key.unwrap();
    let viewer = Credentials::new(key.access_key_id, key.secret_access_key, None, None, "test");
    assert_eq!(list_pods(&endpoint, &ca, &token(&viewer, Duration::from_secs(10))).await, 401);

    // An entry with a Kubernetes group but no access policy: authenticated, and RBAC grants nothing yet.
    let eks = em.eks().await;
    let entry = eks.create_access_entry().cluster_name(CLUSTER).principal_arn(&user.arn).kubernetes_groups("viewers");
    entry.send().await.unwrap();
    let api: Api<Pod> =
        Api::namespaced(client_with(&endpoint, &ca, &token(&viewer, Duration::from_secs(20))).await, "kube-system");
    match api.list(&Default::default()).await {
        Err(kube::Error::Api(s)) => {
            assert_eq!(s.code, 403, "{s:?}");
            assert!(s.message.contains(&format!("User \"{}\"", user.arn)), "the entry's user name: {}", s.message);
        }
        other => panic!("listing pods without a role: {other:?}"),
    }

    // The view policy, cluster-wide: reading is allowed, writing is not.
    let scope = aws_sdk_eks::types::AccessScope::builder().r#type(aws_sdk_eks::types::AccessScopeType::Cluster).build();
    eks.associate_access_policy()
        .cluster_name(CLUSTER)
        .principal_arn(&user.arn)
        .policy_arn("arn:aws:eks::aws:cluster-access-policy/AmazonEKSViewPolicy")
        .access_scope(scope)
        .send()
        .await
        .unwrap();
    let viewer_token = token(&viewer, Duration::from_secs(30));
    let me = who_am_i(&endpoint, &ca, &viewer_token).await;
    assert_eq!(me["username"], user.arn.as_str(), "{me}");
    let groups = me["groups"].as_array().unwrap();
    for group in ["viewers", "eks-access-policy:AmazonEKSViewPolicy", "system:authenticated"] {
        assert!(groups.iter().any(|g| g == group), "{group} among the groups: {me}");
    }
    // `view` is an aggregated ClusterRole: its rules arrive once the controller manager has aggregated them.
    let mut code = 0;
    for _ in 0..100 {
        code = list_pods(&endpoint, &ca, &viewer_token).await;
        if code == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(code, 200, "the view policy lets the viewer list pods");
    let api: Api<Namespace> = Api::all(client_with(&endpoint, &ca, &viewer_token).await);
    let ns = serde_json::from_value(json!({"metadata": {"name": "made-by-a-viewer"}})).unwrap();
    match api.create(&PostParams::default(), &ns).await {
        Err(kube::Error::Api(s)) => assert_eq!(s.code, 403, "{s:?}"),
        other => panic!("a viewer creating a namespace: {other:?}"),
    }

    // Without its entry the identity is refused again.
    eks.delete_access_entry().cluster_name(CLUSTER).principal_arn(&user.arn).send().await.unwrap();
    assert_eq!(list_pods(&endpoint, &ca, &token(&viewer, Duration::from_secs(40))).await, 401);
}
