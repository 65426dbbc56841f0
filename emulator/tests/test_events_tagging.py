"""EventBridge rules are in GetResources with their tags, as AWS lists them; event buses still are."""

from conftest import _client


def test_rules_are_found_by_tag_and_type(endpoint):
    events = _client(endpoint, "events")
    tagging = _client(endpoint, "resourcegroupstaggingapi")
    mine = events.put_rule(
        Name="s-Spot", EventPattern='{"source": ["aws.ec2"]}', Tags=[{"Key": "kbp:stack", "Value": "s"}]
    )["RuleArn"]
    events.tag_resource(ResourceARN=mine, Tags=[{"Key": "team", "Value": "x"}])
    events.put_rule(Name="t-Spot", EventPattern='{"source": ["aws.ec2"]}', Tags=[{"Key": "kbp:stack", "Value": "t"}])
    events.put_rule(Name="untagged", EventPattern='{"source": ["aws.ec2"]}')

    found = tagging.get_resources(TagFilters=[{"Key": "kbp:stack", "Values": ["s"]}])["ResourceTagMappingList"]
    assert [(m["ResourceARN"], sorted((t["Key"], t["Value"]) for t in m["Tags"])) for m in found] == [
        (mine, [("kbp:stack", "s"), ("team", "x")])
    ]
    by_type = tagging.get_resources(ResourceTypeFilters=["events:rule"])["ResourceTagMappingList"]
    assert sorted(m["ResourceARN"].rsplit("/", 1)[1] for m in by_type) == ["s-Spot", "t-Spot"]

    events.untag_resource(ResourceARN=mine, TagKeys=["team"])
    found = tagging.get_resources(TagFilters=[{"Key": "kbp:stack", "Values": ["s"]}])["ResourceTagMappingList"]
    assert [t["Key"] for t in found[0]["Tags"]] == ["kbp:stack"]


def test_event_buses_are_still_listed(endpoint):
    events = _client(endpoint, "events")
    tagging = _client(endpoint, "resourcegroupstaggingapi")
    events.create_event_bus(Name="bus", Tags=[{"Key": "kbp:stack", "Value": "s"}])
    found = tagging.get_resources(ResourceTypeFilters=["events:event-bus"])["ResourceTagMappingList"]
    assert [m["ResourceARN"].rsplit("/", 1)[1] for m in found] == ["bus"]
