"""Latency profiles: the shipped ones load, and a mistake in one is an error that names it."""

import pytest

from kbp_emulator import profile


def test_shipped_profiles_cover_every_operation():
    realistic = profile.load("realistic")
    assert set(realistic.seconds) == set(profile.OPERATIONS)
    assert realistic.delay("eks.create_cluster") == 600
    assert realistic.delay("ec2.create_nat_gateway") == 90
    instant = profile.load("instant")
    assert all(instant.delay(op) == 0 for op in profile.OPERATIONS)


def test_time_scale_multiplies_delays():
    assert profile.load("realistic", 0.01).delay("eks.create_cluster") == pytest.approx(6)
    assert profile.load("realistic", "0.5").delay("eks.delete_addon") == 15


def test_default_is_instant(monkeypatch):
    monkeypatch.delenv("KBP_EMULATOR_PROFILE", raising=False)
    monkeypatch.delenv("KBP_EMULATOR_TIME_SCALE", raising=False)
    assert profile.from_env().name == "instant"


def test_env_selects_profile_and_scale(monkeypatch):
    monkeypatch.setenv("KBP_EMULATOR_PROFILE", "realistic")
    monkeypatch.setenv("KBP_EMULATOR_TIME_SCALE", "0.1")
    assert profile.from_env().delay("eks.create_nodegroup") == pytest.approx(18)


def test_profile_by_path_with_table_syntax(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text("[eks]\ncreate_cluster = 5\n")
    mine = profile.load(str(path))
    assert mine.name == "mine"
    assert mine.delay("eks.create_cluster") == 5
    assert mine.delay("eks.delete_cluster") == 0


@pytest.mark.parametrize(
    "text, complaint",
    [
        ("eks.create_clusters = 5", "unknown operation 'eks.create_clusters'"),
        ("eks.create_cluster = -1", "must be a number of seconds >= 0"),
        ("eks.create_cluster = 'slow'", "must be a number of seconds >= 0"),
        ("eks.create_access_entry = 3", "must be 0"),
        ("create_cluster = 3", "is not a service"),
        ("eks.create_cluster = ", "bad.toml"),
    ],
)
def test_mistakes_are_errors(tmp_path, text, complaint):
    path = tmp_path / "bad.toml"
    path.write_text(text + "\n")
    with pytest.raises(profile.ProfileError, match=complaint.replace("(", r"\(")):
        profile.load(str(path))


def test_unknown_profile_name_lists_shipped_ones():
    with pytest.raises(profile.ProfileError, match="shipped: instant, realistic"):
        profile.load("glacial")


@pytest.mark.parametrize("scale", ["fast", "-1"])
def test_bad_time_scale(scale):
    with pytest.raises(profile.ProfileError, match="KBP_EMULATOR_TIME_SCALE"):
        profile.load("instant", scale)
