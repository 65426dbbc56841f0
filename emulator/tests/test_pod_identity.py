"""Pod Identity associations: CRUD, list filters, and AWS's errors."""

import pytest
from botocore.exceptions import ClientError
from conftest import error_of

ROLE = "arn:aws:iam::123456789012:role/karpenter"


def test_association_crud(eks, cluster):
    created = eks.create_pod_identity_association(
        clusterName=cluster, namespace="kube-system", serviceAccount="karpenter", roleArn=ROLE, tags={"a": "b"}
    )["association"]
    association_id = created["associationId"]
    assert association_id.startswith("a-") and len(association_id) == 19
    assert created["associationArn"] == f"arn:aws:eks:us-west-2:123456789012:podidentityassociation/c1/{association_id}"
    assert (created["clusterName"], created["namespace"], created["serviceAccount"], created["roleArn"]) == (
        "c1", "kube-system", "karpenter", ROLE)
    assert created["tags"] == {"a": "b"}

    described = eks.describe_pod_identity_association(clusterName=cluster, associationId=association_id)["association"]
    assert described["associationArn"] == created["associationArn"]

    other = "arn:aws:iam::123456789012:role/other"
    updated = eks.update_pod_identity_association(clusterName=cluster, associationId=association_id, roleArn=other)
    assert updated["association"]["roleArn"] == other

    deleted = eks.delete_pod_identity_association(clusterName=cluster, associationId=association_id)
    assert deleted["association"]["associationId"] == association_id
    with pytest.raises(ClientError) as e:
        eks.describe_pod_identity_association(clusterName=cluster, associationId=association_id)
    assert error_of(e)[:2] == (404, "ResourceNotFoundException")


def test_list_filters_by_namespace_and_service_account(eks, cluster):
    for namespace, account in (("kube-system", "karpenter"), ("kube-system", "ebs"), ("apps", "karpenter")):
        eks.create_pod_identity_association(clusterName=cluster, namespace=namespace, serviceAccount=account, roleArn=ROLE)

    def listed(**filters):
        found = eks.list_pod_identity_associations(clusterName=cluster, **filters)["associations"]
        return sorted((a["namespace"], a["serviceAccount"]) for a in found)

    assert len(listed()) == 3
    assert listed(namespace="kube-system") == [("kube-system", "ebs"), ("kube-system", "karpenter")]
    assert listed(serviceAccount="karpenter") == [("apps", "karpenter"), ("kube-system", "karpenter")]
    assert listed(namespace="apps", serviceAccount="karpenter") == [("apps", "karpenter")]
    page = eks.list_pod_identity_associations(clusterName=cluster, maxResults=2)
    assert len(page["associations"]) == 2 and page["nextToken"]
    rest = eks.list_pod_identity_associations(clusterName=cluster, maxResults=2, nextToken=page["nextToken"])
    assert len(rest["associations"]) == 1 and "nextToken" not in rest


def test_one_association_per_service_account(eks, cluster):
    first = eks.create_pod_identity_association(clusterName=cluster, namespace="ns", serviceAccount="sa", roleArn=ROLE)
    with pytest.raises(ClientError) as e:
        eks.create_pod_identity_association(clusterName=cluster, namespace="ns", serviceAccount="sa", roleArn=ROLE)
    assert error_of(e) == (
        409, "ResourceInUseException", f"Association already exists: {first['association']['associationId']}")


def test_role_arn_must_be_a_role(eks, cluster):
    with pytest.raises(ClientError) as e:
        eks.create_pod_identity_association(clusterName=cluster, namespace="ns", serviceAccount="sa",
                                            roleArn="arn:aws:iam::123456789012:user/someone")
    assert error_of(e)[:2] == (400, "InvalidParameterException")
