"""The launcher as scripts/emulator.sh runs it: a separate process that serves the extension, or refuses to start
with a profile it cannot use."""

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import boto3
import requests

EMULATOR_DIR = Path(__file__).resolve().parents[1]


def launch(port: int, **env: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "kbp_emulator", "-H", "127.0.0.1", "-p", str(port)],
        env={**os.environ, "PYTHONPATH": str(EMULATOR_DIR), **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serves_the_extension_with_the_chosen_profile():
    port = free_port()
    server = launch(port, KBP_EMULATOR_PROFILE="realistic", KBP_EMULATOR_TIME_SCALE="0.5")
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                requests.get(f"http://127.0.0.1:{port}/moto-api/", timeout=1)
                break
            except requests.ConnectionError:
                assert server.poll() is None and time.monotonic() < deadline, "the launcher did not come up"
                time.sleep(0.1)
        eks = boto3.client("eks", endpoint_url=f"http://127.0.0.1:{port}", region_name="us-west-2",
                           aws_access_key_id="testing", aws_secret_access_key="testing")
        # moto 5.2.5 answers this path with a 404 HTML page; the extension serves it.
        assert eks.describe_addon_versions(addonName="coredns")["addons"][0]["addonName"] == "coredns"
    finally:
        server.kill()
        output = server.communicate()[0]
    assert "latency profile realistic x0.5" in output
    assert "eks.create_cluster=300s" in output


def test_refuses_a_bad_profile():
    server = launch(free_port(), KBP_EMULATOR_PROFILE="glacial")
    output, _ = server.communicate(timeout=60)
    assert server.returncode != 0
    assert "no latency profile 'glacial'" in output
