"""The Resource Groups Tagging API's GetResources lists EKS clusters, node groups and add-ons, as AWS does (moto
5.2.5 lists none): by tag, by resource type, and not those without the tag asked for."""

import pytest
from conftest import NODE_ROLE, _client


@pytest.fixture
def tagging(endpoint):
    return _client(endpoint, "resourcegroupstaggingapi")


def _found(tagging, **kwargs) -> dict[str, dict[str, str]]:
    """ARN → tags of every resource GetResources answers, all pages."""
    found = {}
    for page in tagging.get_paginator("get_resources").paginate(**kwargs):
        for mapping in page["ResourceTagMappingList"]:
            found[mapping["ResourceARN"]] = {t["Key"]: t["Value"] for t in mapping["Tags"]}
    return found


def test_get_resources_finds_eks_clusters_by_tag_and_type(eks, ec2, tagging, make_cluster, network):
    stack = {"kbp:stack": "sbx", "kbp:stack-id": "L1", "kbp:expires": "2030-01-01T00:00:00Z"}
    ours = eks.describe_cluster(name=make_cluster("ours", tags=stack))["cluster"]["arn"]
    other = eks.describe_cluster(name=make_cluster("other", tags={"kbp:stack": "another"}))["cluster"]["arn"]
    untagged = eks.describe_cluster(name=make_cluster("untagged"))["cluster"]["arn"]
    eks.tag_resource(resourceArn=untagged, tags={"team": "x"})
    ng = eks.create_nodegroup(clusterName="ours", nodegroupName="ng", nodeRole=NODE_ROLE, subnets=network.subnets,
                              tags={"kbp:stack": "sbx"})["nodegroup"]["nodegroupArn"]
    addon = eks.create_addon(clusterName="ours", addonName="coredns", tags={"kbp:stack": "sbx"})["addon"]["addonArn"]
    ec2.create_tags(Resources=[network.vpc], Tags=[{"Key": "kbp:stack", "Value": "sbx"}])
    vpc = f"arn:aws:ec2:us-west-2:123456789012:vpc/{network.vpc}"

    by_key = _found(tagging, TagFilters=[{"Key": "kbp:stack"}], ResourceTypeFilters=["ec2:vpc", "eks:cluster"])
    assert by_key == {ours: stack, other: {"kbp:stack": "another"}, vpc: {"kbp:stack": "sbx"}}

    by_value = _found(tagging, TagFilters=[{"Key": "kbp:stack", "Values": ["sbx"]}])
    assert set(by_value) == {ours, ng, addon, vpc}, "every resource of the stack, whatever its type"
    assert _found(tagging, TagFilters=[{"Key": "kbp:stack", "Values": ["sbx"]}], ResourceTypeFilters=["eks"]) == {
        ours: stack, ng: {"kbp:stack": "sbx"}, addon: {"kbp:stack": "sbx"}}
    assert set(_found(tagging, ResourceTypeFilters=["eks:nodegroup", "eks:addon"])) == {ng, addon}
    assert untagged in _found(tagging, TagFilters=[{"Key": "team"}])

    # Tags changed through EKS show at once; a deleted cluster is gone.
    eks.untag_resource(resourceArn=other, tagKeys=["kbp:stack"])
    eks.delete_cluster(name="untagged")
    assert set(_found(tagging, ResourceTypeFilters=["eks:cluster"])) == {ours}
