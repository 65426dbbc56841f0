"""The TokenReview webhook real control planes authenticate EKS tokens with (k8s/webhook.py): who a token's
caller is, and which user name and groups the cluster's access entries give them."""

import base64
from types import SimpleNamespace

import boto3
from conftest import ACCOUNT, REGION, TRUST_POLICY
from moto.eks.models import eks_backends

from kbp_emulator.k8s import webhook

ADMIN = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"
VIEW = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSViewPolicy"
TRUST = TRUST_POLICY


def plane_of(name: str) -> SimpleNamespace:
    """What the webhook needs of a RealPlane: the cluster, its EKS backend and account."""
    backend = eks_backends[ACCOUNT][REGION]
    return SimpleNamespace(account=ACCOUNT, backend=backend, name=name, cluster=backend.clusters[name])


def token(endpoint: str, cluster: str, key: str, secret: str, session: str | None = None) -> str:
    """An EKS bearer token as `aws eks get-token` makes it: a presigned GetCallerIdentity with x-k8s-aws-id."""
    sts = boto3.client("sts", endpoint_url=endpoint, region_name=REGION, aws_access_key_id=key,
                       aws_secret_access_key=secret, aws_session_token=session)

    def bind(request, **_):
        request.headers["x-k8s-aws-id"] = cluster

    sts.meta.events.register("before-sign.sts.GetCallerIdentity", bind)
    url = sts.generate_presigned_url("get_caller_identity", Params={}, ExpiresIn=60, HttpMethod="GET")
    return "k8s-aws-v1." + base64.urlsafe_b64encode(url.encode()).decode().rstrip("=")


def test_the_cluster_creator_is_an_admin_through_its_access_policy(endpoint, cluster):
    user, why = webhook.review(plane_of(cluster), token(endpoint, cluster, "testing", "testing"))
    assert why == ""
    assert user["username"] == f"arn:aws:iam::{ACCOUNT}:user/moto"
    assert user["groups"] == ["eks-access-policy:AmazonEKSClusterAdminPolicy"]
    assert user["extra"]["arn"] == [f"arn:aws:iam::{ACCOUNT}:user/moto"]


def test_an_iam_user_gets_its_entrys_groups_and_policies_and_nothing_without_an_entry(endpoint, eks, iam, cluster):
    arn = iam.create_user(UserName="dev")["User"]["Arn"]
    key = iam.create_access_key(UserName="dev")["AccessKey"]
    dev = token(endpoint, cluster, key["AccessKeyId"], key["SecretAccessKey"])
    user, why = webhook.review(plane_of(cluster), dev)
    assert user is None and why == f"no access entry on cluster {cluster} for {arn} (caller {arn})"

    eks.create_access_entry(clusterName=cluster, principalArn=arn, kubernetesGroups=["devs"], username="dev")
    eks.associate_access_policy(clusterName=cluster, principalArn=arn, policyArn=VIEW,
                                accessScope={"type": "cluster"})
    eks.associate_access_policy(clusterName=cluster, principalArn=arn, policyArn=ADMIN,
                                accessScope={"type": "namespace", "namespaces": ["dev"]})
    user, why = webhook.review(plane_of(cluster), dev)
    assert why == ""
    assert user["username"] == "dev"
    # Namespace-scoped associations are not modelled: they grant nothing here.
    assert user["groups"] == ["devs", "eks-access-policy:AmazonEKSViewPolicy"]


def test_an_assumed_role_is_its_role_and_its_session_name_fills_the_user_name(endpoint, eks, iam, sts, cluster):
    role = iam.create_role(RoleName="deployer", Path="/ci/", AssumeRolePolicyDocument=TRUST)["Role"]["Arn"]
    eks.create_access_entry(clusterName=cluster, principalArn=role, kubernetesGroups=["deployers"])
    creds = sts.assume_role(RoleArn=role, RoleSessionName="build-42")["Credentials"]
    user, why = webhook.review(
        plane_of(cluster),
        token(endpoint, cluster, creds["AccessKeyId"], creds["SecretAccessKey"], creds["SessionToken"]),
    )
    assert why == ""
    assert user["username"] == f"arn:aws:sts::{ACCOUNT}:assumed-role/deployer/build-42"
    assert user["groups"] == ["deployers"]


def test_what_is_not_an_eks_token_is_refused_with_the_reason(cluster):
    assert webhook.review(plane_of(cluster), "not-a-token") == (None, "token does not start with k8s-aws-v1.")
    unsigned = "k8s-aws-v1." + base64.urlsafe_b64encode(b"https://sts.amazonaws.com/?Action=GetCallerIdentity").decode()
    assert webhook.review(plane_of(cluster), unsigned.rstrip("=")) == (None, "presigned URL is not signed")
