"""One in-process moto server with the extension for the whole session, reset before every test.

The server runs in this process, so tests can switch the latency profile with `timed(...)` between requests.
"""

from __future__ import annotations

import json
import os
from types import SimpleNamespace

import boto3
import pytest
import requests
from botocore.config import Config
from moto.server import ThreadedMotoServer

import kbp_emulator
from kbp_emulator import lifecycle, profile

REGION = "us-west-2"
ACCOUNT = "123456789012"
CLUSTER_ROLE = f"arn:aws:iam::{ACCOUNT}:role/cluster"
NODE_ROLE = f"arn:aws:iam::{ACCOUNT}:role/node"
#: A trust policy AWS accepts for CreateRole: the emulator refuses an empty document or statement list, as AWS does.
TRUST_POLICY = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"}, "Action": "sts:AssumeRole"}],
    }
)


@pytest.fixture(scope="session")
def endpoint():
    # These tests are of the AWS side: no control plane per cluster (kbp's integration tests run against those).
    os.environ["KBP_EMULATOR_KUBE"] = "none"
    kbp_emulator.install(profile.load("instant"))
    server = ThreadedMotoServer("127.0.0.1", 0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture(autouse=True)
def fresh(endpoint):
    requests.post(f"{endpoint}/moto-api/reset", timeout=10).raise_for_status()
    lifecycle.use(profile.load("instant"))
    yield
    lifecycle.use(profile.load("instant"))


@pytest.fixture
def timed():
    """Switches to a latency profile, e.g. timed("realistic", 0.001) makes a cluster take 0.6 s."""

    def use(name: str = "realistic", scale: float = 0.001) -> None:
        lifecycle.use(profile.load(name, scale))

    return use


def _client(endpoint: str, service: str, **kwargs):
    return boto3.client(
        service,
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        **kwargs,
    )


@pytest.fixture
def eks(endpoint):
    return _client(endpoint, "eks")


@pytest.fixture
def ec2(endpoint):
    return _client(endpoint, "ec2")


@pytest.fixture
def iam(endpoint):
    return _client(endpoint, "iam")


@pytest.fixture
def sts(endpoint):
    return _client(endpoint, "sts")


@pytest.fixture
def s3(endpoint):
    """Path-style (http://host:port/bucket/key), as kbp's S3 state backend addresses the emulator."""
    return _client(endpoint, "s3", config=Config(s3={"addressing_style": "path"}))


@pytest.fixture
def network(ec2):
    """A VPC with one subnet in each of two zones, as EKS requires."""
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    subnets = [
        ec2.create_subnet(VpcId=vpc, CidrBlock=f"10.0.{i}.0/24", AvailabilityZone=f"{REGION}{zone}")["Subnet"]["SubnetId"]
        for i, zone in enumerate("ab")
    ]
    return SimpleNamespace(vpc=vpc, subnets=subnets)


@pytest.fixture
def make_cluster(eks, network):
    """Creates a cluster and returns its name; extra keyword arguments go to CreateCluster."""

    def make(name: str = "c1", **kwargs):
        kwargs.setdefault("version", "1.33")
        kwargs.setdefault("accessConfig", {"authenticationMode": "API_AND_CONFIG_MAP"})
        eks.create_cluster(
            name=name, roleArn=CLUSTER_ROLE, resourcesVpcConfig={"subnetIds": network.subnets}, **kwargs
        )
        return name

    return make


@pytest.fixture
def cluster(make_cluster):
    """An ACTIVE cluster (instant profile) with API_AND_CONFIG_MAP authentication."""
    return make_cluster()


def error_of(excinfo) -> tuple[int, str, str]:
    """(HTTP status, error code, message) of a botocore ClientError."""
    response = excinfo.value.response
    return response["ResponseMetadata"]["HTTPStatusCode"], response["Error"]["Code"], response["Error"]["Message"]


@pytest.fixture
def node_group(eks, cluster, network):
    """Creates a managed node group of `size` nodes in the cluster; extra keyword arguments go to CreateNodegroup."""

    def make(name: str = "ng", size: int = 2, **kwargs):
        eks.create_nodegroup(clusterName=cluster, nodegroupName=name, nodeRole=NODE_ROLE, subnets=network.subnets,
                             scalingConfig={"minSize": size, "maxSize": max(size, 1), "desiredSize": size}, **kwargs)
        return name

    return make
