//! The emulator extension (emulator/kbp_emulator) through the real AWS SDK for Rust: every operation moto lacks
//! answers in a shape the SDK parses unchanged, errors come back as the SDK's modeled variants, and long
//! operations have a life cycle timed by the latency profile. If these fail, kbp's EKS providers would fail
//! against the emulator for reasons that are not theirs.

use std::future::Future;
use std::time::{Duration, Instant};

use crate::support::{Emulator, ACCOUNT_ID};
use aws_sdk_eks::operation::describe_addon::DescribeAddonError;
use aws_sdk_eks::operation::describe_cluster::DescribeClusterError;
use aws_sdk_eks::operation::list_addons::ListAddonsError;
use aws_sdk_eks::types::{
    AccessScope, AccessScopeType, AddonStatus, AuthenticationMode, ClusterStatus, CreateAccessConfigRequest, LogSetup,
    LogType, Logging, NodegroupScalingConfig, NodegroupStatus, UpdateStatus, UpdateType, VpcConfigRequest,
};
use aws_sdk_iam::error::ProvideErrorMetadata;

const CLUSTER: &str = "kbp-test";
const VERSION: &str = "1.33";
const ADMIN_POLICY: &str = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy";
const VIEW_POLICY: &str = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSViewPolicy";

/// A VPC with one subnet in each of two zones, as EKS requires of a cluster.
async fn subnets(em: &Emulator) -> Vec<String> {
    let ec2 = em.ec2().await;
    let vpc = ec2.create_vpc().cidr_block("10.20.0.0/16").send().await.expect("CreateVpc");
    let vpc_id = vpc.vpc().and_then(|v| v.vpc_id()).expect("a VPC ID").to_string();
    let mut ids = Vec::new();
    for (cidr, zone) in [("10.20.1.0/24", "us-west-2a"), ("10.20.2.0/24", "us-west-2b")] {
        let subnet = ec2.create_subnet().vpc_id(&vpc_id).cidr_block(cidr).availability_zone(zone).send().await;
        ids.push(subnet.expect("CreateSubnet").subnet().and_then(|s| s.subnet_id()).expect("a subnet ID").to_string());
    }
    ids
}

/// Creates cluster CLUSTER with API_AND_CONFIG_MAP authentication and returns what CreateCluster answered.
async fn create_cluster(em: &Emulator, eks: &aws_sdk_eks::Client) -> aws_sdk_eks::types::Cluster {
    let vpc = VpcConfigRequest::builder().set_subnet_ids(Some(subnets(em).await)).build();
    let access = CreateAccessConfigRequest::builder().authentication_mode(AuthenticationMode::ApiAndConfigMap).build();
    let created = eks
        .create_cluster()
        .name(CLUSTER)
        .version(VERSION)
        .role_arn(format!("arn:aws:iam::{ACCOUNT_ID}:role/cluster"))
        .resources_vpc_config(vpc)
        .access_config(access)
        .send()
        .await
        .unwrap_or_else(|e| panic!("CreateCluster: {e:?}\nlog:\n{}", em.log()));
    created.cluster.expect("CreateCluster returns the cluster")
}

/// Calls `read` every 100 ms until it returns `want`; returns every distinct value seen, in order.
async fn wait_for<T, F, Fut>(what: &str, want: T, timeout: Duration, mut read: F) -> Vec<T>
where
    T: PartialEq + std::fmt::Debug,
    F: FnMut() -> Fut,
    Fut: Future<Output = T>,
{
    let start = Instant::now();
    let mut seen: Vec<T> = Vec::new();
    loop {
        let value = read().await;
        if seen.last() != Some(&value) {
            seen.push(value);
        }
        if seen.last() == Some(&want) {
            return seen;
        }
        assert!(start.elapsed() < timeout, "{what}: still {:?} after {timeout:?} (seen {seen:?})", seen.last());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A cluster's status, or "gone" once DescribeCluster answers ResourceNotFoundException.
async fn cluster_status(eks: &aws_sdk_eks::Client) -> String {
    match eks.describe_cluster().name(CLUSTER).send().await {
        Ok(out) => out.cluster.and_then(|c| c.status).map(|s| s.as_str().to_string()).unwrap_or_default(),
        Err(e) if matches!(e.as_service_error(), Some(DescribeClusterError::ResourceNotFoundException(_))) => {
            "gone".to_string()
        }
        Err(e) => panic!("DescribeCluster: {e:?}"),
    }
}

#[tokio::test]
async fn cluster_is_creating_until_the_scaled_delay_then_active_then_deleting_then_gone() {
    // realistic x0.005: a cluster takes 3 s to create and 1.5 s to delete.
    let em = Emulator::start_with("realistic", 0.005);
    let eks = em.eks().await;
    let started = Instant::now();
    let created = create_cluster(&em, &eks).await;
    assert_eq!(created.status(), Some(&ClusterStatus::Creating));

    let seen =
        wait_for("cluster creation", "ACTIVE".to_string(), Duration::from_secs(30), || cluster_status(&eks)).await;
    assert_eq!(seen, ["CREATING", "ACTIVE"]);
    assert!(started.elapsed() >= Duration::from_secs(3), "ACTIVE after only {:?}", started.elapsed());

    // What kbp reads from a new cluster to wire IRSA, kubeconfig and Karpenter.
    let cluster = eks.describe_cluster().name(CLUSTER).send().await.expect("DescribeCluster").cluster.unwrap();
    let endpoint = cluster.endpoint().expect("an endpoint");
    let issuer = cluster.identity().and_then(|i| i.oidc()).and_then(|o| o.issuer()).expect("an OIDC issuer");
    // The endpoint is where the cluster's own control plane serves its Kubernetes API.
    assert!(endpoint.starts_with("https://127.0.0.1:"), "{endpoint}");
    let id = issuer.strip_prefix("https://oidc.eks.us-west-2.amazonaws.com/id/").expect("the regional issuer form");
    assert!(id.len() == 32 && id.chars().all(|c| c.is_ascii_hexdigit()), "{issuer}");
    let ca = cluster.certificate_authority().and_then(|c| c.data()).expect("certificate authority data");
    let pem = String::from_utf8(aws_smithy_types::base64::decode(ca).expect("base64")).expect("PEM text");
    assert!(pem.starts_with("-----BEGIN CERTIFICATE-----"), "{pem}");
    let vpc = cluster.resources_vpc_config().expect("resourcesVpcConfig");
    assert!(vpc.vpc_id().is_some_and(|v| v.starts_with("vpc-")));
    assert!(vpc.cluster_security_group_id().is_some_and(|g| g.starts_with("sg-")));

    let deleted = eks.delete_cluster().name(CLUSTER).send().await.expect("DeleteCluster");
    assert_eq!(deleted.cluster().and_then(|c| c.status()), Some(&ClusterStatus::Deleting));
    let seen = wait_for("cluster deletion", "gone".to_string(), Duration::from_secs(30), || cluster_status(&eks)).await;
    assert_eq!(seen, ["DELETING", "gone"]);
}

#[tokio::test]
async fn missing_cluster_is_resource_not_found() {
    let em = Emulator::start();
    let eks = em.eks().await;
    let err = eks.describe_cluster().name("nope").send().await.expect_err("no such cluster");
    match err.as_service_error() {
        Some(DescribeClusterError::ResourceNotFoundException(e)) => {
            assert_eq!(e.message(), Some("No cluster found for name: nope."))
        }
        other => panic!("expected ResourceNotFoundException, got {other:?}"),
    }
    let err = eks.list_addons().cluster_name("nope").send().await.expect_err("no such cluster");
    assert!(matches!(err.as_service_error(), Some(ListAddonsError::ResourceNotFoundException(_))), "{err:?}");
}

#[tokio::test]
async fn addon_versions_and_addon_crud_parse() {
    let em = Emulator::start();
    let eks = em.eks().await;
    create_cluster(&em, &eks).await;

    for addon in ["vpc-cni", "kube-proxy", "coredns", "eks-pod-identity-agent"] {
        let out = eks.describe_addon_versions().kubernetes_version(VERSION).addon_name(addon).send().await;
        let out = out.unwrap_or_else(|e| panic!("DescribeAddonVersions {addon}: {e:?}"));
        let [info] = out.addons() else { panic!("one AddonInfo for {addon}: {:?}", out.addons()) };
        let defaults: Vec<&str> = info
            .addon_versions()
            .iter()
            .filter(|v| v.compatibilities().iter().any(|c| c.cluster_version() == Some(VERSION) && c.default_version()))
            .filter_map(|v| v.addon_version())
            .collect();
        assert_eq!(defaults.len(), 1, "{addon}: one default version for {VERSION}, got {defaults:?}");
    }

    let created = eks.create_addon().cluster_name(CLUSTER).addon_name("coredns").tags("team", "kbp").send().await;
    let addon = created.expect("CreateAddon").addon.expect("an add-on");
    assert_eq!(addon.status(), Some(&AddonStatus::Creating));
    assert!(addon.addon_arn().is_some_and(|a| a.contains(":addon/kbp-test/coredns/")));

    let described = eks.describe_addon().cluster_name(CLUSTER).addon_name("coredns").send().await;
    let described = described.expect("DescribeAddon").addon.expect("an add-on");
    assert_eq!(described.status(), Some(&AddonStatus::Active));
    assert_eq!(described.tags().and_then(|t| t.get("team")).map(String::as_str), Some("kbp"));
    let listed = eks.list_addons().cluster_name(CLUSTER).send().await.expect("ListAddons");
    assert_eq!(listed.addons(), ["coredns"]);

    // Another version the catalogue lists for the cluster's Kubernetes version than the one installed.
    let listed = eks.describe_addon_versions().addon_name("coredns").kubernetes_version(VERSION).send().await;
    let listed = listed.expect("DescribeAddonVersions");
    let other = listed.addons()[0]
        .addon_versions()
        .iter()
        .filter_map(|v| v.addon_version())
        .find(|v| Some(*v) != described.addon_version())
        .expect("two coredns versions for the cluster's Kubernetes version")
        .to_string();
    let update = eks.update_addon().cluster_name(CLUSTER).addon_name("coredns").addon_version(&other);
    let update = update.send().await.expect("UpdateAddon").update.expect("an update");
    assert_eq!((update.r#type(), update.status()), (Some(&UpdateType::AddonUpdate), Some(&UpdateStatus::InProgress)));
    let id = update.id().expect("an update ID");
    let described = eks.describe_update().name(CLUSTER).update_id(id).addon_name("coredns").send().await;
    assert_eq!(described.expect("DescribeUpdate").update().and_then(|u| u.status()), Some(&UpdateStatus::Successful));

    let deleted = eks.delete_addon().cluster_name(CLUSTER).addon_name("coredns").send().await.expect("DeleteAddon");
    assert_eq!(deleted.addon().and_then(|a| a.status()), Some(&AddonStatus::Deleting));
    let err = eks.describe_addon().cluster_name(CLUSTER).addon_name("coredns").send().await.expect_err("deleted");
    assert!(matches!(err.as_service_error(), Some(DescribeAddonError::ResourceNotFoundException(_))), "{err:?}");
}

#[tokio::test]
async fn access_entry_and_access_policy_association() {
    let em = Emulator::start();
    let eks = em.eks().await;
    create_cluster(&em, &eks).await;
    let trust = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}"#;
    let role = em.iam().await.create_role().role_name("admin").path("/kbp/").assume_role_policy_document(trust).send();
    let role_arn = role.await.expect("CreateRole").role.expect("a role").arn;

    let entry = eks.create_access_entry().cluster_name(CLUSTER).principal_arn(&role_arn).kubernetes_groups("viewers");
    let entry = entry.send().await.unwrap_or_else(|e| panic!("CreateAccessEntry: {e:?}")).access_entry.unwrap();
    assert_eq!((entry.principal_arn(), entry.r#type()), (Some(role_arn.as_str()), Some("STANDARD")));
    assert!(entry.access_entry_arn().is_some_and(|a| a.contains(":access-entry/kbp-test/role/")));

    // The principal ARN ('/' and ':') travels percent-encoded in the path.
    let described = eks.describe_access_entry().cluster_name(CLUSTER).principal_arn(&role_arn).send().await;
    assert_eq!(described.expect("DescribeAccessEntry").access_entry().unwrap().kubernetes_groups(), ["viewers"]);

    let scope = AccessScope::builder().r#type(AccessScopeType::Namespace).namespaces("apps").build();
    let associate =
        eks.associate_access_policy().cluster_name(CLUSTER).principal_arn(&role_arn).policy_arn(VIEW_POLICY);
    let associated = associate.access_scope(scope).send().await.expect("AssociateAccessPolicy");
    let policy = associated.associated_access_policy().expect("the association");
    assert_eq!(policy.access_scope().and_then(|s| s.r#type()), Some(&AccessScopeType::Namespace));
    let listed = eks.list_associated_access_policies().cluster_name(CLUSTER).principal_arn(&role_arn).send().await;
    let listed = listed.expect("ListAssociatedAccessPolicies");
    assert_eq!(listed.associated_access_policies()[0].policy_arn(), Some(VIEW_POLICY));
    let disassociate = eks.disassociate_access_policy().cluster_name(CLUSTER).principal_arn(&role_arn);
    disassociate.policy_arn(VIEW_POLICY).send().await.expect("DisassociateAccessPolicy");

    let updated = eks.update_access_entry().cluster_name(CLUSTER).principal_arn(&role_arn).username("kbp-admin");
    assert_eq!(updated.send().await.expect("UpdateAccessEntry").access_entry().unwrap().username(), Some("kbp-admin"));

    // The cluster creator's entry is there too, with cluster admin, as AWS makes it.
    let entries = eks.list_access_entries().cluster_name(CLUSTER).send().await.expect("ListAccessEntries");
    assert_eq!(entries.access_entries().len(), 2, "{entries:?}");
    let with_admin = eks.list_access_entries().cluster_name(CLUSTER).associated_policy_arn(ADMIN_POLICY).send().await;
    assert!(!with_admin.expect("ListAccessEntries by policy").access_entries().contains(&role_arn));

    eks.delete_access_entry().cluster_name(CLUSTER).principal_arn(&role_arn).send().await.expect("DeleteAccessEntry");
    let err = eks.describe_access_entry().cluster_name(CLUSTER).principal_arn(&role_arn).send().await.unwrap_err();
    assert!(err.as_service_error().is_some_and(|e| e.is_resource_not_found_exception()), "{err:?}");
}

#[tokio::test]
async fn pod_identity_association() {
    let em = Emulator::start();
    let eks = em.eks().await;
    create_cluster(&em, &eks).await;
    let role = format!("arn:aws:iam::{ACCOUNT_ID}:role/karpenter");

    let create = eks.create_pod_identity_association().cluster_name(CLUSTER).namespace("kube-system");
    let created =
        create.service_account("karpenter").role_arn(&role).send().await.expect("CreatePodIdentityAssociation");
    let association = created.association().expect("an association");
    let id = association.association_id().expect("an association ID").to_string();
    assert!(id.starts_with("a-"));
    assert_eq!(association.role_arn(), Some(role.as_str()));

    let listed = eks.list_pod_identity_associations().cluster_name(CLUSTER).namespace("kube-system");
    let listed = listed.service_account("karpenter").send().await.expect("ListPodIdentityAssociations");
    assert_eq!(listed.associations().iter().map(|a| a.association_id()).collect::<Vec<_>>(), [Some(id.as_str())]);
    let other_namespace = eks.list_pod_identity_associations().cluster_name(CLUSTER).namespace("apps").send().await;
    assert!(other_namespace.expect("ListPodIdentityAssociations").associations().is_empty());

    let other_role = format!("arn:aws:iam::{ACCOUNT_ID}:role/karpenter-v2");
    let update = eks.update_pod_identity_association().cluster_name(CLUSTER).association_id(&id).role_arn(&other_role);
    let updated = update.send().await.expect("UpdatePodIdentityAssociation");
    assert_eq!(updated.association().and_then(|a| a.role_arn()), Some(other_role.as_str()));
    let described = eks.describe_pod_identity_association().cluster_name(CLUSTER).association_id(&id).send().await;
    assert_eq!(
        described.expect("DescribePodIdentityAssociation").association().unwrap().role_arn(),
        Some(other_role.as_str())
    );

    let delete = eks.delete_pod_identity_association().cluster_name(CLUSTER).association_id(&id).send().await;
    assert_eq!(
        delete.expect("DeletePodIdentityAssociation").association().unwrap().association_id(),
        Some(id.as_str())
    );
    let err =
        eks.describe_pod_identity_association().cluster_name(CLUSTER).association_id(&id).send().await.unwrap_err();
    assert!(err.as_service_error().is_some_and(|e| e.is_resource_not_found_exception()), "{err:?}");
}

#[tokio::test]
async fn cluster_and_nodegroup_updates_parse() {
    let em = Emulator::start();
    let eks = em.eks().await;
    let cluster = create_cluster(&em, &eks).await;
    let subnets = cluster.resources_vpc_config().unwrap().subnet_ids().to_vec();

    let scaling = NodegroupScalingConfig::builder().min_size(1).max_size(3).desired_size(1).build();
    let create = eks.create_nodegroup().cluster_name(CLUSTER).nodegroup_name("system").scaling_config(scaling);
    let create = create.node_role(format!("arn:aws:iam::{ACCOUNT_ID}:role/node")).set_subnets(Some(subnets));
    let nodegroup = create.send().await.expect("CreateNodegroup").nodegroup.unwrap();
    assert_eq!((nodegroup.status(), nodegroup.version()), (Some(&NodegroupStatus::Creating), Some(VERSION)));

    let scaling = NodegroupScalingConfig::builder().desired_size(2).build();
    let update = eks.update_nodegroup_config().cluster_name(CLUSTER).nodegroup_name("system").scaling_config(scaling);
    let update = update.send().await.expect("UpdateNodegroupConfig").update.unwrap();
    assert_eq!(update.r#type(), Some(&UpdateType::ConfigUpdate));
    let described = eks.describe_update().name(CLUSTER).update_id(update.id().unwrap()).nodegroup_name("system").send();
    assert_eq!(described.await.expect("DescribeUpdate").update().unwrap().status(), Some(&UpdateStatus::Successful));

    let logging = Logging::builder()
        .cluster_logging(LogSetup::builder().types(LogType::Api).types(LogType::Audit).enabled(true).build())
        .build();
    let update = eks.update_cluster_config().name(CLUSTER).logging(logging).send().await.expect("UpdateClusterConfig");
    assert_eq!(update.update().and_then(|u| u.r#type()), Some(&UpdateType::LoggingUpdate));

    let update = eks.update_cluster_version().name(CLUSTER).version("1.34").send().await.expect("UpdateClusterVersion");
    assert_eq!(update.update().and_then(|u| u.r#type()), Some(&UpdateType::VersionUpdate));
    let cluster = eks.describe_cluster().name(CLUSTER).send().await.expect("DescribeCluster").cluster.unwrap();
    assert_eq!((cluster.version(), cluster.status()), (Some("1.34"), Some(&ClusterStatus::Active)));
    let enabled = &cluster.logging().unwrap().cluster_logging()[0];
    assert_eq!((enabled.types(), enabled.enabled()), (&[LogType::Api, LogType::Audit][..], Some(true)));
}

#[tokio::test]
async fn nat_gateway_is_pending_until_the_scaled_delay() {
    // realistic x0.02: a NAT gateway takes 1.8 s to become available.
    let em = Emulator::start_with("realistic", 0.02);
    let ec2 = em.ec2().await;
    let subnet = subnets(&em).await.remove(0);
    let eip = ec2.allocate_address().domain(aws_sdk_ec2::types::DomainType::Vpc).send().await.expect("AllocateAddress");
    let created = ec2.create_nat_gateway().subnet_id(subnet).allocation_id(eip.allocation_id().unwrap()).send().await;
    let nat = created.expect("CreateNatGateway").nat_gateway.unwrap();
    assert_eq!(nat.state().map(|s| s.as_str()), Some("pending"));
    let id = nat.nat_gateway_id().unwrap().to_string();
    let state = || async {
        let out = ec2.describe_nat_gateways().nat_gateway_ids(&id).send().await.expect("DescribeNatGateways");
        out.nat_gateways()[0].state().map(|s| s.as_str().to_string()).unwrap_or_default()
    };
    assert_eq!(
        wait_for("NAT gateway", "available".to_string(), Duration::from_secs(30), state).await,
        ["pending", "available"]
    );
}

#[tokio::test]
async fn spot_service_linked_role_has_aws_name_and_duplicate_error() {
    let em = Emulator::start();
    let iam = em.iam().await;
    let role = iam.create_service_linked_role().aws_service_name("spot.amazonaws.com").send().await;
    let role = role.expect("CreateServiceLinkedRole").role.expect("a role");
    assert_eq!(role.role_name(), "AWSServiceRoleForEC2Spot");
    assert_eq!(role.path(), "/aws-service-role/spot.amazonaws.com/");
    let err = iam.create_service_linked_role().aws_service_name("spot.amazonaws.com").send().await.unwrap_err();
    assert_eq!(err.code(), Some("InvalidInput"), "{err:?}");
    assert_eq!(
        err.message(),
        Some(
            "Service role name AWSServiceRoleForEC2Spot has been taken in this account, please try a different suffix."
        )
    );
}
