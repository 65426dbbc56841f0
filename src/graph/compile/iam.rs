//! IAM for the cluster and its nodes: the EKS cluster role, the controller node group's role, the role of the
//! nodes Karpenter launches, the Karpenter controller's role (trusting Pod Identity or the cluster's OIDC
//! provider, either way only from this stack's cluster), and the account's EC2 Spot service-linked role.

use serde_json::{json, Value};

use super::{kinds, Builder};
use crate::blueprint::Identity;
use crate::graph::value::{join, object, reference};
use crate::graph::{Address, Resource};

/// Managed policies every EKS worker node role needs.
pub(super) const NODE_POLICIES: &[&str] = &[
    "AmazonEKSWorkerNodePolicy",
    "AmazonEKS_CNI_Policy",
    "AmazonEC2ContainerRegistryPullOnly",
    "AmazonSSMManagedInstanceCore",
];

pub(super) fn compile(b: &mut Builder) {
    let name = b.cluster_name().to_string();

    let cluster_role =
        b.add(role(b, "cluster", &format!("{name}-eks-cluster"), service_trust("eks.amazonaws.com", true)));
    attach_managed(b, &cluster_role, "cluster", &["AmazonEKSClusterPolicy"]);

    let ng_role = b.add(role(b, "node_group", &format!("{name}-eks-nodes"), service_trust(ec2_principal(b), false)));
    attach_managed(b, &ng_role, "node_group", NODE_POLICIES);

    let node_role_name = b.bp.karpenter.node_role_name.clone();
    let node_role = role(b, "karpenter_node", &node_role_name, service_trust(ec2_principal(b), false));
    let node_role = b.add(node_role.from_fields("name", &["karpenter.node_role_name", "cluster.name"]));
    attach_managed(b, &node_role, "karpenter_node", NODE_POLICIES);

    let trust = match b.bp.karpenter.identity {
        Identity::PodIdentity => pod_identity_trust(b),
        Identity::Irsa => irsa_trust(b),
    };
    let controller_name = b.bp.karpenter.controller_role_name.clone();
    let controller = role(b, "karpenter_controller", &controller_name, trust);
    b.add(controller.from_fields("name", &["karpenter.controller_role_name", "cluster.name"]));

    if b.bp.karpenter.spot {
        b.add(Resource::new(
            Address::new("iam_service_linked_role", "spot"),
            kinds::IAM_SERVICE_LINKED_ROLE,
            kinds::attrs(&kinds::iam_service_linked_role::ServiceLinkedRole {
                aws_service_name: "spot.amazonaws.com".to_string(),
            }),
        ));
    }
}

pub(super) fn role_address(name: &str) -> Address {
    Address::new("iam_role", name)
}

fn role(b: &Builder, address_name: &str, role_name: &str, trust: Value) -> Resource {
    Resource::new(
        role_address(address_name),
        kinds::IAM_ROLE,
        kinds::attrs(&kinds::iam_role::Role {
            name: role_name.to_string(),
            path: "/".to_string(),
            description: Some(format!("kbp stack {}: {}", b.cluster_name(), address_name.replace('_', " "))),
            assume_role_policy: trust,
            max_session_duration: Some(3600),
            tags: b.tags(&[], None),
        }),
    )
}

/// Attaches AWS managed policies (by name) to `role`, one attachment resource each.
fn attach_managed(b: &mut Builder, role: &Address, address_name: &str, policies: &[&str]) {
    for p in policies {
        let arn =
            join(vec![json!("arn:"), reference(&b.caller(), "partition"), json!(format!(":iam::aws:policy/{p}"))]);
        b.add(attachment(Address::keyed("iam_role_policy_attachment", address_name, p), role, arn));
    }
}

pub(super) fn attachment(address: Address, role: &Address, policy_arn: Value) -> Resource {
    Resource::new(
        address,
        kinds::IAM_ROLE_POLICY_ATTACHMENT,
        kinds::attrs(&kinds::iam_role_policy_attachment::RolePolicyAttachment {
            role: reference(role, "name"),
            policy_arn,
        }),
    )
}

/// EC2's service principal in the caller's partition: `ec2.amazonaws.com`, `ec2.amazonaws.com.cn` in China.
fn ec2_principal(b: &Builder) -> Value {
    join(vec![json!("ec2."), reference(&b.caller(), "url_suffix")])
}

fn service_trust(service: impl Into<Value>, tag_session: bool) -> Value {
    let service: Value = service.into();
    let actions: Vec<&str> =
        if tag_session { vec!["sts:AssumeRole", "sts:TagSession"] } else { vec!["sts:AssumeRole"] };
    json!({
        "Version": "2012-10-17",
        "Statement": [{ "Effect": "Allow", "Principal": { "Service": service }, "Action": actions }],
    })
}

/// EKS Pod Identity, as the pods.eks.amazonaws.com principal, may assume the role for an association of this
/// stack's cluster, in this account, and no other (the cross-service confused deputy guard AWS recommends).
/// Pod Identity passes the association's ARN as `aws:SourceArn`, `…:podidentityassociation/<cluster>/<id>`;
/// the ID is only known once the association exists, and the association needs this role first, so the
/// condition matches every association of the cluster. Built from the caller identity, not from the cluster's
/// outputs, so that the role is still created while the cluster is.
fn pod_identity_trust(b: &Builder) -> Value {
    let mut trust = service_trust("pods.eks.amazonaws.com", true);
    let caller = b.caller();
    let account = reference(&caller, "account_id");
    let associations = join(vec![
        json!("arn:"),
        reference(&caller, "partition"),
        json!(format!(":eks:{}:", b.bp.cluster.region)),
        account.clone(),
        json!(format!(":podidentityassociation/{}/*", b.cluster_name())),
    ]);
    trust["Statement"][0]["Condition"] = json!({
        "StringEquals": { "aws:SourceAccount": account },
        "ArnLike": { "aws:SourceArn": associations },
    });
    trust
}

/// IAM roles for service accounts: the karpenter service account's projected token, issued by the cluster's OIDC
/// provider, may assume the role. The condition keys name the issuer, so they are only known after the cluster.
fn irsa_trust(b: &mut Builder) -> Value {
    let oidc = b.add(Resource::new(
        Address::new("iam_openid_connect_provider", "cluster"),
        kinds::IAM_OIDC_PROVIDER,
        kinds::attrs(&kinds::iam_openid_connect_provider::OpenIdConnectProvider {
            url: reference(&b.cluster(), "oidc_issuer"),
            client_id_list: vec!["sts.amazonaws.com".to_string()],
            thumbprint_list: None,
            tags: b.tags(&[], None),
        }),
    ));
    let issuer = reference(&oidc, "issuer_host");
    let sa = format!("system:serviceaccount:{}:karpenter", b.bp.karpenter.namespace);
    json!({
        "Version": "2012-10-17",
        "Statement": [{
            "Effect": "Allow",
            "Principal": { "Federated": reference(&oidc, "arn") },
            "Action": "sts:AssumeRoleWithWebIdentity",
            "Condition": {
                "StringEquals": object(vec![
                    (join(vec![issuer.clone(), json!(":sub")]), json!(sa)),
                    (join(vec![issuer, json!(":aud")]), json!("sts.amazonaws.com")),
                ]),
            },
        }],
    })
}
