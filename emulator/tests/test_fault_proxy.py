"""The fault proxy (kbp_emulator/fault_proxy.py) between boto3 and the emulator: it names each call in every
protocol kbp uses, answers injected faults in each service's own error shape (as botocore reads them), loses an
answer after the emulator made the change, lands a held request after its client gave up, repeats a seeded fault
sequence, counts, and forwards requests byte for byte otherwise.

Clients here make one attempt (`total_max_attempts: 1`), so each injected fault is seen as it was sent.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError, HTTPClientError, ReadTimeoutError
from conftest import CLUSTER_ROLE, NODE_ROLE, TRUST_POLICY, _client, error_of

from kbp_emulator.fault_proxy import FaultProxy
from kbp_emulator.fault_proxy_calls import eks_operation

EMULATOR_DIR = Path(__file__).resolve().parents[1]
ONE_ATTEMPT = {"total_max_attempts": 1}


class Proxy:
    """An in-process proxy in front of `upstream`, serving on its own thread."""

    def __init__(self, upstream: str, log: Path):
        self.server = FaultProxy(("127.0.0.1", 0), upstream, {}, str(log))
        self.url = self.server.url
        self.log_path = log
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def admin(self, method: str, what: str, body: dict | None = None) -> tuple[int, dict]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"{self.url}/__fault_proxy/{what}", data=data, method=method)
        try:
            with urllib.request.urlopen(request, timeout=5) as r:
                return r.status, json.load(r)
        except urllib.error.HTTPError as e:
            return e.code, json.load(e)

    def configure(self, **config) -> None:
        status, answer = self.admin("POST", "config", config)
        assert status == 200, answer

    def stats(self) -> dict:
        return self.admin("GET", "stats")[1]

    def log(self) -> str:
        return self.log_path.read_text()

    def wait_for_log(self, text: str, timeout: float = 3) -> None:
        """The log line of a request is written once its answer is out, so a test may see the answer first."""
        deadline = time.monotonic() + timeout
        while text not in self.log():
            assert time.monotonic() < deadline, f"{text!r} not in the proxy's log:\n{self.log()}"
            time.sleep(0.02)

    def client(self, service: str, **config):
        config.setdefault("retries", ONE_ATTEMPT)
        if service == "s3":
            config["s3"] = {"addressing_style": "path"}
        return _client(self.url, service, config=Config(**config))

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def proxy(endpoint, tmp_path):
    p = Proxy(endpoint, tmp_path / "proxy.log")
    yield p
    p.close()


# One cheap call per service and protocol, with what a throttle and a 5xx look like to botocore.
CALLS = {
    "ec2": ("DescribeVpcs", lambda c: c.describe_vpcs(), (503, "RequestLimitExceeded"), "InternalError", "Unavailable"),
    "iam": ("ListRoles", lambda c: c.list_roles(), (400, "Throttling"), "InternalFailure", "ServiceUnavailable"),
    "sts": ("GetCallerIdentity", lambda c: c.get_caller_identity(), (400, "Throttling"), "InternalFailure",
            "ServiceUnavailable"),
    "kms": ("ListKeys", lambda c: c.list_keys(), (400, "ThrottlingException"), "InternalFailure", "ServiceUnavailable"),
    "events": ("ListRules", lambda c: c.list_rules(), (400, "ThrottlingException"), "InternalFailure",
               "ServiceUnavailable"),
    "sqs": ("ListQueues", lambda c: c.list_queues(), (400, "RequestThrottled"), "InternalFailure",
            "ServiceUnavailable"),
    "eks": ("ListClusters", lambda c: c.list_clusters(), (429, "ThrottlingException"), "ServerException",
            "ServiceUnavailableException"),
    "s3": ("ListBuckets", lambda c: c.list_buckets(), (503, "SlowDown"), "InternalError", "ServiceUnavailable"),
}


def failure(call, client) -> tuple[int, str, str]:
    with pytest.raises(ClientError) as e:
        call(client)
    return error_of(e)


# --- naming the call ------------------------------------------------------------------------------------------


def test_names_each_protocols_operation(proxy, ec2, network):
    iam, sts, kms = proxy.client("iam"), proxy.client("sts"), proxy.client("kms")
    events, sqs, eks, s3 = proxy.client("events"), proxy.client("sqs"), proxy.client("eks"), proxy.client("s3")
    proxy.client("ec2").create_vpc(CidrBlock="10.1.0.0/16")
    role = iam.create_role(RoleName="r", AssumeRolePolicyDocument=TRUST_POLICY)["Role"]["Arn"]
    sts.get_caller_identity()
    kms.create_key()
    events.put_rule(Name="rule", EventPattern='{"source": ["aws.ec2"]}')
    sqs.create_queue(QueueName="q")
    eks.create_cluster(name="c", roleArn=CLUSTER_ROLE, resourcesVpcConfig={"subnetIds": network.subnets},
                       accessConfig={"authenticationMode": "API_AND_CONFIG_MAP"})
    eks.describe_cluster(name="c")
    eks.create_nodegroup(clusterName="c", nodegroupName="ng", nodeRole=NODE_ROLE, subnets=network.subnets)
    eks.create_addon(clusterName="c", addonName="vpc-cni")
    eks.create_access_entry(clusterName="c", principalArn=role)
    eks.create_pod_identity_association(clusterName="c", namespace="kube-system", serviceAccount="sa",
                                        roleArn=NODE_ROLE)
    eks.delete_nodegroup(clusterName="c", nodegroupName="ng")
    s3.create_bucket(Bucket="bkt", CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    s3.put_object(Bucket="bkt", Key="dir/state.json", Body=b"{}")
    s3.get_object(Bucket="bkt", Key="dir/state.json")["Body"].read()
    s3.get_bucket_versioning(Bucket="bkt")
    s3.delete_object(Bucket="bkt", Key="dir/state.json")

    seen = proxy.stats()["operations"]
    assert set(seen) == {
        "ec2:CreateVpc", "iam:CreateRole", "sts:GetCallerIdentity", "kms:CreateKey", "events:PutRule",
        "sqs:CreateQueue", "eks:CreateCluster", "eks:DescribeCluster", "eks:CreateNodegroup", "eks:CreateAddon",
        "eks:CreateAccessEntry", "eks:CreatePodIdentityAssociation", "eks:DeleteNodegroup", "s3:CreateBucket",
        "s3:PutObject", "s3:GetObject", "s3:GetBucketVersioning", "s3:DeleteObject",
    }, seen
    proxy.wait_for_log("eks:CreateCluster POST /clusters -> 200")


@pytest.mark.parametrize("method, path, operation", [
    ("POST", "/clusters/c/node-groups", "CreateNodegroup"),
    ("POST", "/clusters/c/node-groups/ng/update-config", "UpdateNodegroupConfig"),
    ("DELETE", "/clusters/c/addons/vpc-cni", "DeleteAddon"),
    ("POST", "/clusters/c/addons/vpc-cni/update", "UpdateAddon"),
    ("GET", "/clusters/c/access-entries/arn%3Aaws%3Aiam%3A%3A1%3Arole%2Fx", "DescribeAccessEntry"),
    ("DELETE", "/clusters/c/access-entries/arn%3Ax/access-policies/arn%3Ay", "DisassociateAccessPolicy"),
    ("GET", "/clusters/c/pod-identity-associations/a-1", "DescribePodIdentityAssociation"),
    ("GET", "/addons/supported-versions", "DescribeAddonVersions"),
    ("POST", "/tags/arn:aws:eks:us-west-2:1:cluster/c", "TagResource"),
    ("GET", "/clusters/c/nothing-here", "GET /clusters/c/nothing-here"),
])
def test_names_eks_operations_by_route(method, path, operation):
    assert eks_operation(method, path) == operation


# --- faults in each protocol's shape ---------------------------------------------------------------------------


@pytest.mark.parametrize("service", CALLS)
def test_throttling_is_each_services_own_throttling_error(proxy, service):
    operation, call, (status, code), _, _ = CALLS[service]
    proxy.configure(rules=[{"operation": operation, "action": "throttle", "rate": 1.0}])
    assert failure(call, proxy.client(service))[:2] == (status, code)
    assert proxy.stats()["faults_by_operation"] == {f"{service}:{operation}": {"throttle": 1}}


@pytest.mark.parametrize("service", CALLS)
def test_server_errors_are_each_services_own_5xx(proxy, service):
    operation, call, _, code_500, code_503 = CALLS[service]
    client = proxy.client(service)
    proxy.configure(rules=[{"service": service, "action": "server_error", "status": 500}])
    assert failure(call, client)[:2] == (500, code_500)
    proxy.configure(rules=[{"service": service, "action": "server_error", "status": 503}])
    assert failure(call, client)[:2] == (503, code_503)
    assert proxy.stats()["forwarded"] == 0


def test_a_fail_rule_answers_its_code_count_times_then_forwards(proxy):
    ec2 = proxy.client("ec2")
    proxy.configure(rules=[{"operation": "CreateVpc", "action": "fail", "status": 500, "code": "InternalError",
                            "message": "boom", "count": 2}])
    for _ in range(2):
        assert failure(lambda c: c.create_vpc(CidrBlock="10.2.0.0/16"), ec2) == (500, "InternalError", "boom")
    ec2.create_vpc(CidrBlock="10.2.0.0/16")
    ec2.describe_vpcs()
    stats = proxy.stats()
    assert stats["rules"][0] == {"operation": "CreateVpc", "action": "fail", "count": 2, "after": 0, "rate": 1.0,
                                 "matched": 3, "fired": 2}
    assert stats["operations"] == {"ec2:CreateVpc": 3, "ec2:DescribeVpcs": 1}
    assert stats["statuses"] == {"200": 2, "500": 2}


def test_drop_response_makes_the_change_and_loses_the_answer(proxy, ec2):
    proxy.configure(rules=[{"operation": "CreateVpc", "action": "drop_response", "count": 1}])
    tag = [{"ResourceType": "vpc", "Tags": [{"Key": "test", "Value": "dropped"}]}]
    with pytest.raises(HTTPClientError):  # botocore's ConnectionClosedError: the server closed, no answer
        proxy.client("ec2").create_vpc(CidrBlock="10.3.0.0/16", TagSpecifications=tag)
    vpcs = ec2.describe_vpcs(Filters=[{"Name": "tag:test", "Values": ["dropped"]}])["Vpcs"]
    assert len(vpcs) == 1, "the emulator made the VPC even though the client never heard back"
    assert proxy.stats()["faults"]["drop_response"] == 1
    proxy.wait_for_log("ec2:CreateVpc POST / drop_response -> emulator answered 200; connection closed without an")


def test_delay_forward_lands_the_request_after_its_client_gave_up(proxy, ec2):
    proxy.configure(rules=[{"operation": "CreateVpc", "action": "delay_forward", "seconds": 1.0, "count": 1}])
    tag = [{"ResourceType": "vpc", "Tags": [{"Key": "test", "Value": "late"}]}]
    impatient = proxy.client("ec2", read_timeout=0.3, connect_timeout=1)
    started = time.monotonic()
    with pytest.raises(ReadTimeoutError):
        impatient.create_vpc(CidrBlock="10.4.0.0/16", TagSpecifications=tag)
    late = [{"Name": "tag:test", "Values": ["late"]}]
    assert ec2.describe_vpcs(Filters=late)["Vpcs"] == [], "still held by the proxy"
    while not ec2.describe_vpcs(Filters=late)["Vpcs"]:
        assert time.monotonic() - started < 5, "the held request never reached the emulator"
        time.sleep(0.1)
    assert time.monotonic() - started >= 1.0
    proxy.wait_for_log("(the client had gone; not relayed)")


# --- seeded rates ----------------------------------------------------------------------------------------------


def outcomes(client, n: int, interleave=None) -> str:
    """'.' for an answer, 'T' for a throttle, for n calls of GetCallerIdentity."""
    out = ""
    for _ in range(n):
        if interleave:
            interleave()
        try:
            client.get_caller_identity()
            out += "."
        except ClientError as e:
            assert e.response["Error"]["Code"] == "Throttling"
            out += "T"
    return out


def test_a_seed_repeats_its_fault_sequence_per_operation(proxy):
    sts, ec2 = proxy.client("sts"), proxy.client("ec2")
    proxy.configure(seed=42, throttle_rate=0.5)
    first = outcomes(sts, 24)
    assert "T" in first and "." in first, first
    proxy.configure(seed=42, throttle_rate=0.5)
    # Other operations in between (as concurrent calls would be) do not shift this operation's sequence.
    def other_call():
        try:
            ec2.describe_vpcs()
        except ClientError:
            pass

    assert outcomes(sts, 24, interleave=other_call) == first
    proxy.admin("POST", "reset")
    assert outcomes(sts, 24) == first, "a reset restarts the sequence"
    proxy.configure(seed=43, throttle_rate=0.5)
    assert outcomes(sts, 24) != first
    throttles = proxy.stats()["faults"]["throttle"]
    assert throttles > 0


def test_rates_leave_unsigned_and_admin_requests_alone(proxy, endpoint):
    proxy.configure(throttle_rate=1.0, server_error_rate=1.0)
    with urllib.request.urlopen(f"{proxy.url}/moto-api/", timeout=5) as r:
        assert r.status == 200
    stats = proxy.stats()
    assert stats["operations"] == {"unsigned:GET /moto-api": 1}
    assert stats["faults"]["throttle"] == stats["faults"]["server_error"] == 0


def test_stats_count_and_reset(proxy):
    sts = proxy.client("sts")
    proxy.configure(seed=1, rules=[{"operation": "GetCallerIdentity", "action": "throttle", "after": 1, "count": 1}])
    sts.get_caller_identity()
    failure(lambda c: c.get_caller_identity(), sts)
    sts.get_caller_identity()
    proxy.client("iam").list_roles()
    stats = proxy.stats()
    assert stats["requests"] == 4 and stats["forwarded"] == 3
    assert stats["operations"] == {"sts:GetCallerIdentity": 3, "iam:ListRoles": 1}
    assert stats["faults"] == {"throttle": 1, "server_error": 0, "fail": 0, "drop_response": 0, "delay_forward": 0}
    assert stats["faults_by_operation"] == {"sts:GetCallerIdentity": {"throttle": 1}}
    assert stats["statuses"] == {"200": 3, "400": 1}
    assert stats["rules"][0]["matched"] == 3 and stats["rules"][0]["fired"] == 1
    _, reset = proxy.admin("POST", "reset")
    assert reset["requests"] == 0 and reset["operations"] == {} and reset["rules"][0]["fired"] == 0
    assert proxy.admin("GET", "config")[1]["rules"][0]["after"] == 1


def test_a_bad_config_is_refused_with_the_reason(proxy):
    status, answer = proxy.admin("POST", "config", {"rules": [{"operation": "CreateVpc", "action": "explode"}]})
    assert status == 400 and "rules[0]: action must be one of" in answer["error"]
    status, answer = proxy.admin("POST", "config", {"throttle_rate": 2})
    assert status == 400 and "throttle_rate must be a number from 0 to 1" in answer["error"]


# --- forwarding ------------------------------------------------------------------------------------------------


class RawUpstream:
    """An upstream that records each request's bytes as received and answers 200 with a chunked body."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.received: list[bytes] = []
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                data = b""
                conn.settimeout(5)
                # The proxy says Connection: close and sends a chunked body ending in an empty line after the
                # last chunk (and trailers), or no body at all.
                while not (data.endswith(b"\r\n\r\n") and (b"chunked" not in data or b"\r\n0\r\n" in data)):
                    piece = conn.recv(65536)
                    if not piece:
                        break
                    data += piece
                self.received.append(data)
                conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nx-seen: 1\r\n\r\n"
                             b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n")

    def close(self):
        self.sock.close()


def test_forwards_chunked_aws_chunked_uploads_with_host_and_framing(tmp_path):
    upstream = RawUpstream()
    proxy = Proxy(upstream.url, tmp_path / "proxy.log")
    try:
        port = int(proxy.url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
            aws_chunked = b"5;chunk-signature=aa\r\nhello\r\n0;chunk-signature=bb\r\n\r\n"
            c.sendall(
                b"PUT /bucket/key?x-id=PutObject HTTP/1.1\r\nHost: 127.0.0.1:" + str(port).encode() + b"\r\n"
                b"Authorization: AWS4-HMAC-SHA256 Credential=testing/20260101/us-west-2/s3/aws4_request, "
                b"SignedHeaders=host, Signature=00\r\n"
                b"Content-Encoding: aws-chunked\r\nx-amz-decoded-content-length: 5\r\n"
                b"Transfer-Encoding: chunked\r\nTrailer: x-amz-checksum-crc32\r\n\r\n"
                + b"%x\r\n%s\r\n" % (len(aws_chunked), aws_chunked)
                + b"0\r\nx-amz-checksum-crc32: NhCmhg==\r\n\r\n"
            )
            answer = b""
            while not answer.endswith(b"0\r\n\r\n"):
                answer += c.recv(65536)
        request = upstream.received[0]
        head, _, body = request.partition(b"\r\n\r\n")
        assert head.startswith(b"PUT /bucket/key?x-id=PutObject HTTP/1.1\r\n")
        assert f"\r\nHost: 127.0.0.1:{port}\r\n".encode() in head, "the Host the client signed"
        assert b"\r\nContent-Encoding: aws-chunked\r\n" in head and b"\r\nTransfer-Encoding: chunked\r\n" in head
        assert body == b"%x\r\n%s\r\n0\r\nx-amz-checksum-crc32: NhCmhg==\r\n\r\n" % (len(aws_chunked), aws_chunked)
        assert answer.startswith(b"HTTP/1.1 200 OK\r\n") and b"\r\nx-seen: 1\r\n" in answer
        assert answer.endswith(b"\r\n\r\nabcde") or b"abc" in answer and b"de" in answer
        assert proxy.stats()["operations"] == {"s3:PutObject": 1}
    finally:
        proxy.close()
        upstream.close()


def test_large_bodies_go_through_both_ways(proxy, s3):
    data = os.urandom(6 * 1024 * 1024)
    s3.create_bucket(Bucket="big", CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    via = proxy.client("s3")
    via.put_object(Bucket="big", Key="blob", Body=data)
    assert s3.get_object(Bucket="big", Key="blob")["Body"].read() == data
    assert via.get_object(Bucket="big", Key="blob")["Body"].read() == data
    assert via.head_object(Bucket="big", Key="blob")["ContentLength"] == len(data)


# --- the command ----------------------------------------------------------------------------------------------


def launch(*args: str, **env: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "kbp_emulator.fault_proxy", *args],
        env={**os.environ, "PYTHONPATH": str(EMULATOR_DIR), **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_the_command_announces_itself_serves_and_stops_on_sigterm(endpoint, tmp_path):
    config = tmp_path / "faults.json"
    config.write_text(json.dumps({"seed": 7, "throttle_rate": 1.0}))
    log = tmp_path / "proxy.log"
    proc = launch("--listen", "127.0.0.1:0", "--upstream", endpoint, "--config", str(config), "--log", str(log))
    try:
        ready = proc.stdout.readline()
        assert ready.startswith("fault_proxy: listening on http://127.0.0.1:"), ready + proc.stderr.read()
        url = ready.split()[3].rstrip(",")
        sts = _client(url, "sts", config=Config(retries=ONE_ATTEMPT))
        with pytest.raises(ClientError) as e:
            sts.get_caller_identity()
        assert error_of(e)[1] == "Throttling"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=5) == 0
    finally:
        proc.kill()
        proc.wait()
    lines = log.read_text().splitlines()
    assert "sts:GetCallerIdentity POST / throttle -> 400 (not forwarded)" in lines[1]
    assert lines[-1].endswith("stopped")


def test_the_command_dies_with_the_watched_process(endpoint):
    watched = subprocess.Popen(["sleep", "30"])
    proc = launch("--upstream", endpoint, KBP_EMULATOR_WATCH_PID=str(watched.pid))
    try:
        assert proc.stdout.readline().startswith("fault_proxy: listening on")
        watched.kill()
        watched.wait()
        assert proc.wait(timeout=5) == 0
    finally:
        watched.kill()
        proc.kill()
        proc.wait()


def test_the_command_refuses_a_bad_config(endpoint, tmp_path):
    config = tmp_path / "faults.json"
    config.write_text(json.dumps({"rules": [{"action": "delay_forward", "seconds": "soon"}]}))
    proc = launch("--upstream", endpoint, "--config", str(config))
    out, err = proc.communicate(timeout=10)
    assert proc.returncode != 0 and out == ""
    assert "rules[0]: delay_forward needs seconds" in err
