"""DescribeClusterVersions: the Kubernetes versions EKS offers, in AWS's shape, and CreateCluster agreeing with it."""

from datetime import datetime, timezone

import pytest
from botocore.exceptions import ClientError
from conftest import CLUSTER_ROLE, error_of

# The catalogue stands as AWS's list did on 2026-12-03 (kbp_emulator/eks/cluster_versions.py).
OFFERED = ["1.37", "1.36", "1.35", "1.34", "1.33", "1.32"]
UNSUPPORTED = ["1.31", "1.30", "1.29"]


def test_lists_the_offered_versions_newest_first_with_one_default(eks):
    versions = eks.describe_cluster_versions()["clusterVersions"]
    assert [v["clusterVersion"] for v in versions] == OFFERED
    assert [v["clusterVersion"] for v in versions if v["defaultVersion"]] == ["1.36"]
    for v in versions:
        assert v["clusterType"] == "eks"
        assert v["versionStatus"] in ("STANDARD_SUPPORT", "EXTENDED_SUPPORT")
        assert v["status"] == v["versionStatus"].lower().replace("_", "-")
        assert v["kubernetesPatchVersion"].startswith(v["clusterVersion"] + ".")
        assert v["defaultPlatformVersion"].startswith("eks.")
        assert isinstance(v["releaseDate"], datetime)
        assert v["releaseDate"] < v["endOfStandardSupportDate"] < v["endOfExtendedSupportDate"]
    extended = [v["clusterVersion"] for v in versions if v["versionStatus"] == "EXTENDED_SUPPORT"]
    assert extended == ["1.34", "1.33", "1.32"]


def test_a_version_past_extended_support_shows_only_when_asked_for(eks):
    everything = eks.describe_cluster_versions(includeAll=True)["clusterVersions"]
    assert [v["clusterVersion"] for v in everything] == OFFERED + UNSUPPORTED
    assert [v["versionStatus"] for v in everything[len(OFFERED):]] == ["UNSUPPORTED"] * len(UNSUPPORTED)
    assert {v["status"] for v in everything[len(OFFERED):]} == {"unsupported"}
    unsupported = eks.describe_cluster_versions(versionStatus="UNSUPPORTED")["clusterVersions"]
    assert [v["clusterVersion"] for v in unsupported] == UNSUPPORTED
    assert eks.describe_cluster_versions(clusterVersions=["1.31"])["clusterVersions"] == []
    picked = eks.describe_cluster_versions(clusterVersions=["1.31"], includeAll=True)["clusterVersions"]
    assert [(v["clusterVersion"], v["versionStatus"]) for v in picked] == [("1.31", "UNSUPPORTED")]


def test_filters_and_pages(eks):
    picked = eks.describe_cluster_versions(clusterVersions=["1.33", "1.36"])["clusterVersions"]
    assert [v["clusterVersion"] for v in picked] == ["1.36", "1.33"]
    default = eks.describe_cluster_versions(defaultOnly=True)["clusterVersions"]
    assert [v["clusterVersion"] for v in default] == ["1.36"]
    legacy = eks.describe_cluster_versions(status="extended-support")["clusterVersions"]
    assert [v["clusterVersion"] for v in legacy] == ["1.34", "1.33", "1.32"]
    standard = eks.describe_cluster_versions(versionStatus="STANDARD_SUPPORT")["clusterVersions"]
    assert [v["clusterVersion"] for v in standard] == ["1.37", "1.36", "1.35"]
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
    for version in UNSUPPORTED:
        with pytest.raises(ClientError) as e:
            eks.create_cluster(name="old", version=version, roleArn=CLUSTER_ROLE, resourcesVpcConfig=vpc)
        assert error_of(e) == (400, "InvalidParameterException", f"unsupported Kubernetes version {version}")
    assert eks.list_clusters()["clusters"] == []
    # The oldest version still offered (extended support) and the newest are both taken.
    for name, version in (("oldest", "1.32"), ("newest", "1.37")):
        created = eks.create_cluster(name=name, version=version, roleArn=CLUSTER_ROLE, resourcesVpcConfig=vpc)
        assert created["cluster"]["version"] == version


def _utc(value: datetime) -> datetime:
    """botocore gives epoch timestamps in the local time zone; EKS's dates are days in UTC."""
    return value.astimezone(timezone.utc)


def _day(value: datetime) -> str:
    return _utc(value).date().isoformat()


def test_the_catalogue_stands_as_on_2026_12_03(eks, network):
    """The day after 1.34's standard support ended: 1.29–1.31 past extended support, 1.32–1.34 in extended support,
    1.35–1.37 in standard support, and 1.36 the default. Statuses are fixed, whatever today's date."""
    everything = {v["clusterVersion"]: v for v in eks.describe_cluster_versions(includeAll=True)["clusterVersions"]}
    statuses = {version: v["versionStatus"] for version, v in everything.items()}
    assert statuses == {
        "1.37": "STANDARD_SUPPORT", "1.36": "STANDARD_SUPPORT", "1.35": "STANDARD_SUPPORT",
        "1.34": "EXTENDED_SUPPORT", "1.33": "EXTENDED_SUPPORT", "1.32": "EXTENDED_SUPPORT",
        "1.31": "UNSUPPORTED", "1.30": "UNSUPPORTED", "1.29": "UNSUPPORTED",
    }  # fmt: skip
    # The statuses agree with the dates on 2026-12-03: support ends at the start of the day it names.
    day = "2026-12-03"
    for version, v in everything.items():
        standard, extended = _day(v["endOfStandardSupportDate"]), _day(v["endOfExtendedSupportDate"])
        expected = "STANDARD_SUPPORT" if day < standard else "EXTENDED_SUPPORT" if day < extended else "UNSUPPORTED"
        assert v["versionStatus"] == expected, version
        assert _day(v["releaseDate"]) <= day, version
    # EKS's calendar: 14 months of standard support from the release, 12 more of extended support.
    for version, v in everything.items():
        released, standard, extended = (
            _utc(v[k]) for k in ("releaseDate", "endOfStandardSupportDate", "endOfExtendedSupportDate")
        )
        months = lambda a, b: (b.year - a.year) * 12 + b.month - a.month  # noqa: E731
        assert (months(released, standard), months(standard, extended)) == (14, 12), version
        assert released.day == standard.day == extended.day, version
    assert _day(everything["1.34"]["endOfStandardSupportDate"]) == "2026-12-02"
    assert _day(everything["1.31"]["endOfExtendedSupportDate"]) == "2026-11-26"
    assert _day(everything["1.36"]["releaseDate"]) == "2026-06-02"
    assert [v for v, info in everything.items() if info["defaultVersion"]] == ["1.36"]

    vpc = {"subnetIds": network.subnets}
    with pytest.raises(ClientError) as e:
        eks.create_cluster(name="gone", version="1.31", roleArn=CLUSTER_ROLE, resourcesVpcConfig=vpc)
    assert error_of(e) == (400, "InvalidParameterException", "unsupported Kubernetes version 1.31")
    assert eks.create_cluster(name="plain", roleArn=CLUSTER_ROLE, resourcesVpcConfig=vpc)["cluster"]["version"] == "1.36"
    assert eks.create_cluster(name="extended", version="1.32", roleArn=CLUSTER_ROLE, resourcesVpcConfig=vpc)[
        "cluster"
    ]["version"] == "1.32"
