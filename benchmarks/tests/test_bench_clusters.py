"""benchmarks/bench_clusters.py: system names spell the component config."""
import pytest

from benchmarks.bench_clusters import system_config


def test_suffixes_set_their_settings():
    config = system_config("o2c6b24smk10")
    features = config["features"]
    assert config["order"] == 2 and features["cluster_bits"] == 6
    assert features["n_buckets"] == 2**24 and features["sibling_stops"] and features["use_morph"]
    assert config["learner"]["k"] == 10 and "quantize_weights" not in config
    plain = system_config("o2")
    assert not plain["features"]["use_morph"] and not plain["features"]["sibling_stops"]
    assert "learner" not in plain   # bench_grandparents' 5-best MIRA then
    clipped = system_config("o2c6b24sC0.003")["learner"]
    assert clipped["C"] == 0.003 and clipped["k"] == 5
    assert system_config("o2k10C0.5")["learner"] == {**clipped, "k": 10, "C": 0.5}


@pytest.mark.parametrize("name", ["o1s", "o2k", "o4", "o2ms", "o2C", "o2Cx", "o2C1.2.3", "o2C."])
def test_unknown_names_are_refused(name):
    with pytest.raises(ValueError, match="unknown system"):
        system_config(name)
