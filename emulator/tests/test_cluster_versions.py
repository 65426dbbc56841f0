"""DescribeClusterVersions: the Kubernetes versions EKS offers, in AWS's shape, and CreateCluster agreeing with it."""

from datetime import datetime

import pytest
from botocore.exceptions import ClientError
from conftest import CLUSTER_ROLE, error_of

OFFERED = ["1.35", "1.34", "1.33", "1.32", "1.31", "1.30"]


def test_lists_the_offered_versions_newest_first_with_one_default(eks):
    versions = eks.describe_cluster_versions()["clusterVersions"]
    assert [v["clusterVersion"] for v in versions] == OFFERED
    assert [v["clusterVersion"] for v in versions if v["defaultVersion"]] == ["1.34"]
    for v in versions:
        assert v["clusterType"] == "eks"
        assert v["versionStatus"] in ("STANDARD_SUPPORT", "EXTENDED_SUPPORT")
        assert v["status"] == v["versionStatus"].lower().replace("_", "-")
        assert v["kubernetesPatchVersion"].startswith(v["clusterVersion"] + ".")
        assert v["defaultPlatformVersion"].startswith("eks.")
        assert isinstance(v["releaseDate"], datetime)
        assert v["releaseDate"] < v["endOfStandardSupportDate"] < v["endOfExtendedSupportDate"]
    extended = [v["clusterVersion"] for v in versions if v["versionStatus"] == "EXTENDED_SUPPORT"]
    assert extended == ["1.32", "1.31", "1.30"]


def test_a_version_past_extended_support_shows_only_when_asked_for(eks):
    everything = eks.describe_cluster_versions(includeAll=True)["clusterVersions"]
    assert [v["clusterVersion"] for v in everything] == OFFERED + ["1.29"]
    assert everything[-1]["versionStatus"] == "UNSUPPORTED"
    unsupported = eks.describe_cluster_versions(versionStatus="UNSUPPORTED")["clusterVersions"]
    assert [v["clusterVersion"] for v in unsupported] == ["1.29"]
    assert eks.describe_cluster_versions(clusterVersions=["1.29"])["clusterVersions"] == []


def test_filters_and_pages(eks):
    picked = eks.describe_cluster_versions(clusterVersions=["1.31", "1.33"])["clusterVersions"]
    assert [v["clusterVersion"] for v in picked] == ["1.33", "1.31"]
    default = eks.describe_cluster_versions(defaultOnly=True)["clusterVersions"]
    assert [v["clusterVersion"] for v in default] == ["1.34"]
    legacy = eks.describe_cluster_versions(status="extended-support")["clusterVersions"]
    assert [v["clusterVersion"] for v in legacy] == ["1.32", "1.31", "1.30"]
    assert eks.describe_cluster_versions(clusterType="hybrid")["clusterVersions"] == []

    first = eks.describe_cluster_versions(maxResults=4)
    rest = eks.describe_cluster_versions(maxResults=4, nextToken=first["nextToken"])
    assert [v["clusterVersion"] for v in first["clusterVersions"] + rest["clusterVersions"]] == OFFERED
    assert "nextToken" not in rest
    paged = eks.get_paginator("describe_cluster_versions").paginate(PaginationConfig={"PageSize": 2})
    assert [v["clusterVersion"] for page in paged for v in page["clusterVersions"]] == OFFERED


def test_an_unknown_status_is_refused(eks):
    # Refused at the front door by the model's enum (contract/model_rules.py), before the extension sees it.
    with pytest.raises(ClientError) as e:
        eks.describe_cluster_versions(versionStatus="RETIRED")
    status, code, message = error_of(e)
    assert (status, code) == (400, "InvalidParameterException")
    assert "Value 'RETIRED' at 'versionStatus' failed to satisfy constraint: Member must satisfy enum value set" in message


def test_create_cluster_takes_only_an_offered_version(eks, network):
    vpc = {"subnetIds": network.subnets}
    with pytest.raises(ClientError) as e:
        eks.create_cluster(name="old", version="1.29", roleArn=CLUSTER_ROLE, resourcesVpcConfig=vpc)
    assert error_of(e) == (400, "InvalidParameterException", "unsupported Kubernetes version 1.29")
    created = eks.create_cluster(name="new", version="1.30", roleArn=CLUSTER_ROLE, resourcesVpcConfig=vpc)
    assert created["cluster"]["version"] == "1.30"
