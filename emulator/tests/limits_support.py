"""Fixtures and helpers for the tests of AWS's documented limits (`kbp_emulator.contract.limits`).

Requests go through the in-process server with boto3's own validation off, so the emulator's front door, not
boto3, is what refuses them. `refused` checks the answer (status, code, message) and that the refusal log names
the expected rule, so a test cannot pass on an error moto happened to give for another reason.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from conftest import ACCOUNT, REGION, _client, error_of

from kbp_emulator.contract import limits, record
from kbp_emulator.contract.types import ContractRequest, Refusal

UNCHECKED = Config(parameter_validation=False, retries={"max_attempts": 1})


@pytest.fixture
def unchecked(endpoint) -> Callable[[str], Any]:
    """A client of `service` whose requests boto3 does not validate, so what reaches the emulator is what the test
    wrote, as from an SDK that checks less than boto3 (the Rust SDK checks nothing)."""

    def make(service: str) -> Any:
        return _client(endpoint, service, config=UNCHECKED)

    return make


@pytest.fixture
def iam_(unchecked):
    return unchecked("iam")


@pytest.fixture
def ec2_(unchecked):
    return unchecked("ec2")


@pytest.fixture
def eks_(unchecked):
    return unchecked("eks")


@pytest.fixture
def sqs_(unchecked):
    return unchecked("sqs")


@pytest.fixture
def events_(unchecked):
    return unchecked("events")


@pytest.fixture
def kms_(unchecked):
    return unchecked("kms")


def refused(call: Callable[[], Any], code: str, rule: str, message: str | None = None, status: int = 400,
            contains: str | None = None) -> str:
    """Asserts that `call` is refused by the front door's limit `rule` with AWS's status and code (and message,
    whole or in part). Returns the message."""
    before = len(record.entries())
    with pytest.raises(ClientError) as excinfo:
        call()
    got_status, got_code, got_message = error_of(excinfo)
    logged = record.entries()[before:]
    assert logged and logged[-1]["rule"] == rule, f"not refused by {rule}: {got_code} {got_message!r}, log {logged}"
    assert (got_status, got_code) == (status, code), got_message
    if message is not None:
        assert got_message == message
    if contains is not None:
        assert contains in got_message
    return got_message


def passes(call: Callable[[], Any]) -> Any:
    """Runs `call`, which the front door must let through (moto answers it)."""
    before = len(record.entries())
    result = call()
    assert record.entries()[before:] == []
    return result


def check(service: str, operation: str, params: dict[str, Any]) -> Refusal | None:
    """`limits.check` of one request, as the middleware calls it."""
    return limits.check(ContractRequest(service, operation, params, ACCOUNT, REGION))


def tags(n: int, prefix: str = "k", key: str = "Key", value: str = "Value") -> list[dict[str, str]]:
    return [{key: f"{prefix}{i}", value: f"v{i}"} for i in range(n)]


def tag_map(n: int, prefix: str = "k") -> dict[str, str]:
    return {f"{prefix}{i}": f"v{i}" for i in range(n)}


def padded(document: dict[str, Any], size: int, field: tuple[Any, ...]) -> str:
    """`document` as compact JSON of exactly `size` characters, by padding the string at `field` (a path of keys
    and indexes) with "x"."""
    base = json.dumps(document, separators=(",", ":"))
    missing = size - len(base)
    assert missing >= 0, f"the document is already {len(base)} characters"
    target: Any = document
    for step in field[:-1]:
        target = target[step]
    target[field[-1]] += "x" * missing
    text = json.dumps(document, separators=(",", ":"))
    assert len(text) == size
    return text
