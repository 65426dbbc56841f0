"""GetCallerIdentity as AWS answers it for an IAM user.

For credentials it has no user for, moto answers `arn:aws:sts::ACCOUNT:user/moto`; AWS names an IAM user
caller `arn:aws:iam::ACCOUNT:user/NAME` (only assumed roles and federated users get `sts` ARNs). Tools that
grant the caller access (an EKS access entry for whoever runs `kbp apply`) need the IAM form.
"""

from __future__ import annotations

import functools
from typing import Any

from moto.sts import models


def install() -> None:
    original = models.STSBackend.get_caller_identity

    @functools.wraps(original)
    def get_caller_identity(self: Any, access_key_id: str, region: str) -> Any:
        user_id, arn, account_id = original(self, access_key_id, region)
        if ":sts::" in arn and ":user/" in arn:
            arn = arn.replace(":sts::", ":iam::", 1)
        return user_id, arn, account_id

    models.STSBackend.get_caller_identity = get_caller_identity
