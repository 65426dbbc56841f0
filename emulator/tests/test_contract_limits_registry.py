"""The documented limits as a whole (kbp_emulator/contract/limits): every rule is listed in emulator/README.md, and
no rule fails on a request of an unexpected shape (the middleware would let such a request through unchecked)."""

from __future__ import annotations

import random
import re
from pathlib import Path

from limits_support import check

from kbp_emulator.contract.limits import registry

README = Path(__file__).resolve().parents[1] / "README.md"


def test_every_rule_is_in_the_readme_table():
    section = README.read_text().split("### Documented limits the models lack", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"`((?:iam|ec2|eks|sqs|events|kms)\.[a-z_]+)`", section))
    registered = {rule_id for rules in registry.RULES.values() for rule_id, _ in rules}
    assert registered == listed


def test_no_rule_fails_on_a_request_of_an_unexpected_shape():
    odd = [None, "", "x", 0, [], {}, [None], [{}], {"a": None}, [1, "a"], {"k": [1]}, "{}", '{"Statement":[{}]}']
    names = ["Tags", "tags", "TagSpecifications", "Resources", "IpPermissions", "labels", "taints", "resourcesVpcConfig",
             "kubernetesGroups", "Attributes", "EventPattern", "PolicyDocument", "AssumeRolePolicyDocument", "RoleName",
             "PolicyArn", "QueueUrl", "KeyId", "ResourceARN", "resourceArn", "VpcId", "CidrBlock", "GroupName",
             "Description", "AliasName", "Policy", "LaunchTemplateData", "clusterName", "nodegroupName", "namespace",
             "serviceAccount", "username", "QueueName"]
    rnd = random.Random(20261205)
    for service, operation in registry.RULES:
        for _ in range(100):
            params = {name: rnd.choice(odd) for name in rnd.sample(names, 10)}
            check(service, "CreateTags" if operation == registry.ANY else operation, params)
