"""Cluster insights (ListInsights, DescribeInsight): EKS's upgrade-readiness checks, computed from the emulator's
state at call time, in AWS's shape."""

import uuid
from datetime import datetime

import pytest
from botocore.exceptions import ClientError
from conftest import NODE_ROLE, error_of

SKEW = "Kubelet version skew"
ADDONS = "Amazon EKS add-on version compatibility"


def insights(eks, cluster, **kwargs):
    """ListInsights' summaries by name."""
    return {i["name"]: i for i in eks.list_insights(clusterName=cluster, **kwargs)["insights"]}


def describe(eks, cluster, name):
    return eks.describe_insight(clusterName=cluster, id=insights(eks, cluster)[name]["id"])["insight"]


def test_a_fresh_cluster_passes_both_checks_for_the_next_version(eks, cluster):
    listed = eks.list_insights(clusterName=cluster)
    assert "nextToken" not in listed
    assert [i["name"] for i in listed["insights"]] == [SKEW, ADDONS]
    for insight in listed["insights"]:
        assert insight["category"] == "UPGRADE_READINESS"
        assert insight["kubernetesVersion"] == "1.34"  # the cluster is at 1.33
        assert insight["insightStatus"]["status"] == "PASSING"
        assert insight["insightStatus"]["reason"]
        assert insight["description"]
        assert isinstance(insight["lastRefreshTime"], datetime)
        assert isinstance(insight["lastTransitionTime"], datetime)
        assert insight["lastTransitionTime"] <= insight["lastRefreshTime"]
        uuid.UUID(insight["id"])
        assert "recommendation" not in insight and "resources" not in insight  # DescribeInsight's only
    described = eks.describe_insight(clusterName=cluster, id=listed["insights"][0]["id"])["insight"]
    assert described["name"] == SKEW
    assert described["recommendation"]
    assert described["additionalInfo"]
    assert described.get("resources", []) == []


def test_ids_are_stable_and_per_cluster(eks, make_cluster):
    one, two = make_cluster("one"), make_cluster("two")
    first = {n: i["id"] for n, i in insights(eks, one).items()}
    assert {n: i["id"] for n, i in insights(eks, one).items()} == first
    assert set(first.values()).isdisjoint(i["id"] for i in insights(eks, two).values())
    assert len(set(first.values())) == 2


def test_node_groups_behind_the_control_plane_are_a_warning(eks, cluster, node_group):
    node_group("ng")
    eks.update_cluster_version(name=cluster, version="1.34")
    skew = describe(eks, cluster, SKEW)
    assert skew["kubernetesVersion"] == "1.35"
    assert skew["insightStatus"]["status"] == "WARNING"
    assert "ng (1.33)" in skew["insightStatus"]["reason"]
    ng_arn = eks.describe_nodegroup(clusterName=cluster, nodegroupName="ng")["nodegroup"]["nodegroupArn"]
    assert [(r["arn"], r["insightStatus"]["status"]) for r in skew["resources"]] == [(ng_arn, "WARNING")]
    assert "UpdateNodegroupVersion" in skew["recommendation"]

    eks.update_nodegroup_version(clusterName=cluster, nodegroupName="ng")
    skew = describe(eks, cluster, SKEW)
    assert skew["insightStatus"]["status"] == "PASSING"
    assert skew.get("resources", []) == []


def test_an_upgrade_that_would_break_the_skew_is_an_error(eks, make_cluster, network):
    cluster = make_cluster(version="1.32")
    for name, version in (("old", "1.29"), ("new", "1.32"), ("mid", "1.30")):
        eks.create_nodegroup(clusterName=cluster, nodegroupName=name, nodeRole=NODE_ROLE, subnets=network.subnets,
                             version=version)
    skew = describe(eks, cluster, SKEW)
    assert (skew["kubernetesVersion"], skew["insightStatus"]["status"]) == ("1.33", "ERROR")
    assert "old (1.29)" in skew["insightStatus"]["reason"] and "mid" not in skew["insightStatus"]["reason"]
    statuses = {r["arn"].split("/")[2]: r["insightStatus"]["status"] for r in skew["resources"]}
    assert statuses == {"old": "ERROR", "mid": "WARNING"}  # the node group at the cluster's version is not listed
    with pytest.raises(ClientError) as e:
        eks.update_cluster_version(name=cluster, version="1.33")
    assert error_of(e)[:2] == (400, "InvalidParameterException")


def test_addon_versions_not_listed_for_the_next_version(eks, make_cluster):
    # coredns v1.12.1 runs on 1.32–1.34 only, and a newer coredns runs on both 1.34 and 1.35: update it first.
    cluster = make_cluster(version="1.34")
    eks.create_addon(clusterName=cluster, addonName="coredns", addonVersion="v1.12.1-eksbuild.2")
    eks.create_addon(clusterName=cluster, addonName="vpc-cni")
    addons = describe(eks, cluster, ADDONS)
    assert addons["insightStatus"]["status"] == "ERROR"
    assert "coredns (v1.12.1-eksbuild.2)" in addons["insightStatus"]["reason"]
    assert "vpc-cni" not in addons["insightStatus"]["reason"]
    summary = addons["categorySpecificSummary"]["addonCompatibilityDetails"]
    details = {d["name"]: d["compatibleVersions"] for d in summary}
    listed = eks.describe_addon_versions(kubernetesVersion="1.35", addonName="coredns")["addons"][0]["addonVersions"]
    assert details["coredns"] == [v["addonVersion"] for v in listed]
    assert "vpc-cni" in details
    coredns_arn = eks.describe_addon(clusterName=cluster, addonName="coredns")["addon"]["addonArn"]
    assert [(r["arn"], r["insightStatus"]["status"]) for r in addons["resources"]] == [(coredns_arn, "ERROR")]

    eks.update_addon(clusterName=cluster, addonName="coredns", addonVersion="v1.12.4-eksbuild.1")
    assert describe(eks, cluster, ADDONS)["insightStatus"]["status"] == "PASSING"

    # kube-proxy has one Kubernetes version per add-on version: it is updated after the control plane.
    other = make_cluster("other", version="1.35")
    eks.create_addon(clusterName=other, addonName="kube-proxy")
    addons = describe(eks, other, ADDONS)
    assert (addons["kubernetesVersion"], addons["insightStatus"]["status"]) == ("1.36", "WARNING")


def test_last_transition_time_moves_only_with_the_status(eks, cluster, node_group):
    node_group("ng")
    before = insights(eks, cluster)[SKEW]
    again = insights(eks, cluster)[SKEW]
    assert again["lastTransitionTime"] == before["lastTransitionTime"]
    assert again["lastRefreshTime"] >= before["lastRefreshTime"]
    eks.update_cluster_version(name=cluster, version="1.34")
    after = insights(eks, cluster)[SKEW]
    assert after["insightStatus"]["status"] == "WARNING"
    assert after["lastTransitionTime"] > before["lastTransitionTime"]


def test_filters_and_pages(eks, cluster, node_group):
    node_group("ng")
    eks.update_cluster_version(name=cluster, version="1.34")
    assert list(insights(eks, cluster, filter={"statuses": ["WARNING"]})) == [SKEW]
    assert list(insights(eks, cluster, filter={"statuses": ["PASSING", "ERROR"]})) == [ADDONS]
    assert list(insights(eks, cluster, filter={"categories": ["UPGRADE_READINESS"]})) == [SKEW, ADDONS]
    assert insights(eks, cluster, filter={"categories": ["MISCONFIGURATION"]}) == {}
    assert list(insights(eks, cluster, filter={"kubernetesVersions": ["1.35"]})) == [SKEW, ADDONS]
    assert insights(eks, cluster, filter={"kubernetesVersions": ["1.34"]}) == {}

    first = eks.list_insights(clusterName=cluster, maxResults=1)
    rest = eks.list_insights(clusterName=cluster, maxResults=1, nextToken=first["nextToken"])
    assert [i["name"] for i in first["insights"] + rest["insights"]] == [SKEW, ADDONS]
    assert "nextToken" not in rest
    pages = eks.get_paginator("list_insights").paginate(clusterName=cluster, PaginationConfig={"PageSize": 1})
    assert [i["name"] for page in pages for i in page["insights"]] == [SKEW, ADDONS]


def test_the_newest_version_is_checked_against_itself(eks, make_cluster):
    cluster = make_cluster(version="1.37")
    for insight in insights(eks, cluster).values():
        assert (insight["kubernetesVersion"], insight["insightStatus"]["status"]) == ("1.37", "PASSING")


def test_bad_requests(eks, cluster):
    with pytest.raises(ClientError) as e:
        eks.describe_insight(clusterName=cluster, id=str(uuid.uuid4()))
    assert error_of(e)[:2] == (404, "ResourceNotFoundException")
    with pytest.raises(ClientError) as e:
        eks.list_insights(clusterName=cluster, filter={"statuses": ["FINE"]})
    status, code, message = error_of(e)
    assert (status, code) == (400, "InvalidParameterException")
    assert "filter.statuses" in message and "[PASSING, WARNING, ERROR, UNKNOWN]" in message
