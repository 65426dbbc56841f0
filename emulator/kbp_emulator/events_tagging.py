"""EventBridge rules in the Resource Groups Tagging API.

moto 5.2.5's GetResources reports event buses only; AWS also reports rules (resource type `events:rule`), with
the tags TagResource or PutRule gave them. kbp reads a stack's tags with one GetResources during refresh.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

from moto.core.resource_tagging import TaggedResource
from moto.events import models


def install() -> None:
    original = models.EventsBackend.iter_tagged_resources

    @functools.wraps(original)
    def iter_tagged_resources(self: Any) -> Iterator[TaggedResource]:
        yield from original(self)
        for bus in self.event_buses.values():
            for rule in bus.rules.values():
                yield TaggedResource(
                    arn=rule.arn,
                    tags=self.tagger.get_tag_dict_for_resource(rule.arn),
                    resource_type="events:rule",
                )

    models.EventsBackend.iter_tagged_resources = iter_tagged_resources
