"""The shipped training configs: they are complete (as `spacy init
fill-config` writes them), pass `spacy debug config` / `spacy debug data`,
load, accept the usual overrides, and train something sensible on the bundled
sample."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
from spacy.training.initialize import init_nlp
from spacy.cli.init_config import fill_config
from spacy.training.loop import train

from spacy_mstparse.corpus.convert import convert

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "assets" / "en_ewt_sample"
CONFIGS = sorted(path.name for path in (ROOT / "configs").glob("*.cfg"))


@pytest.fixture(scope="module")
def docbins(tmp_path_factory):
    out = tmp_path_factory.mktemp("corpus")
    convert(SAMPLE / "train.conllu", out / "train.spacy", n_sents=10, vocab_lang="en")
    convert(SAMPLE / "dev.conllu", out / "dev.spacy", n_sents=10, vocab_lang="en")
    return out


def load(name, docbins, **overrides):
    overrides = {
        "paths.train": str(docbins / "train.spacy"),
        "paths.dev": str(docbins / "dev.spacy"),
        **overrides,
    }
    return spacy.util.load_config(ROOT / "configs" / name, overrides=overrides)


def test_every_config_is_shipped():
    assert len(CONFIGS) >= 6, CONFIGS


@pytest.mark.parametrize("name", CONFIGS)
def test_config_is_complete(name, tmp_path):
    """Nothing left for `spacy init fill-config` to add (spacy debug config
    rejects a config with missing settings such as nlp.disabled)."""
    filled_path = tmp_path / name
    fill_config(filled_path, ROOT / "configs" / name, silent=True)
    shipped = spacy.util.load_config(ROOT / "configs" / name)
    filled = spacy.util.load_config(filled_path)
    assert shipped == filled, (shipped, filled)


def spacy_cli(*args):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    result = subprocess.run(
        [sys.executable, "-m", "spacy", *map(str, args)], cwd=ROOT, env=env,
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


@pytest.mark.parametrize("name", CONFIGS)
def test_spacy_debug_config(name, docbins):
    out = spacy_cli(
        "debug", "config", ROOT / "configs" / name,
        "--paths.train", docbins / "train.spacy", "--paths.dev", docbins / "dev.spacy",
    )
    assert "Config is valid" in out, out


@pytest.mark.slow
@pytest.mark.parametrize("name", CONFIGS)
def test_spacy_debug_data(name, docbins):
    out = spacy_cli(
        "debug", "data", ROOT / "configs" / name,
        "--paths.train", docbins / "train.spacy", "--paths.dev", docbins / "dev.spacy",
    )
    assert "Corpus is loadable" in out, out
    assert "100 training docs" in out and "20 evaluation docs" in out, out
    assert "checks passed" in out and "failed" not in out, out


@pytest.mark.parametrize("name", ["mst_parser.cfg", "mst_parser_o2.cfg", "mst_parser_tagged.cfg"])
def test_config_overrides(name, docbins):
    config = load(
        name, docbins, **{"nlp.lang": "de", "components.mst_parser.decoder": "chu_liu_edmonds"}
    )
    nlp = spacy.util.load_model_from_config(config, auto_fill=True)
    assert nlp.lang == "de"
    assert "mst_parser" in nlp.pipe_names
    assert nlp.get_pipe("mst_parser").decoder == "chu_liu_edmonds"
    assert config["training"]["max_epochs"] > 0  # stops by itself
    # the accuracy configurations (gold tags, and the realistic pipeline) are second order
    assert nlp.get_pipe("mst_parser").order == (1 if name == "mst_parser.cfg" else 2)


def test_second_order_config_trains(docbins):
    """configs/mst_parser_o2.cfg trains through spaCy's loop on the sample."""
    config = load("mst_parser_o2.cfg", docbins, **{"training.max_epochs": 2})
    nlp = init_nlp(config)
    nlp, _ = train(nlp, None, stdout=open("/dev/null", "w"))
    assert nlp.get_pipe("mst_parser").order == 2
    dev = list(spacy.registry.resolve(config.interpolate()["corpora"])["dev"](nlp))
    assert nlp.evaluate(dev)["dep_uas"] > 0.7


def test_configs_name_the_graph_features_function():
    """The language-neutral configs and the factory's default use
    GraphFeatures.v2 (settings chosen from the treebank); GraphFeatures.v1 is
    the same with given settings and its former name FirstOrderFeatures.v2 the
    same function (registered and as an entry point), FirstOrderFeatures.v1
    the same without direction back-off."""
    import tomllib

    from spacy_mstparse.components.mst_parser_settings import DEFAULT_CONFIG

    v2 = "spacy_mstparse.GraphFeatures.v2"
    used = {DEFAULT_CONFIG["features"]["@mst_features"]}
    for config_name in ("mst_parser.cfg", "mst_parser_o2.cfg", "mst_parser_tagged.cfg"):
        config = spacy.util.load_config(ROOT / "configs" / config_name)
        used |= {component["features"]["@mst_features"]
                 for component in config["components"].values() if "features" in component}
    assert used == {v2}
    default = spacy.registry.resolve({"f": {"@mst_features": v2}})["f"]
    assert default.choices() == {"tag_columns": "auto", "use_morph": "auto", "lemma": "auto"}
    name = "spacy_mstparse.GraphFeatures.v1"
    assert spacy.registry.resolve({"f": {"@mst_features": name}})["f"].choices() == {
        "tag_columns": "both", "use_morph": False, "lemma": False}
    features = spacy.registry.mst_features
    assert features.get("spacy_mstparse.FirstOrderFeatures.v2") is features.get(name)
    entry_points = tomllib.loads((ROOT / "pyproject.toml").read_text())[
        "project"]["entry-points"]["spacy_mst_features"]
    assert entry_points[name] == entry_points["spacy_mstparse.FirstOrderFeatures.v2"]
    settings = {"tag_columns": "upos", "cluster_bits": 4, "sibling_stops": True}
    resolved = {alias: spacy.registry.resolve({"f": {"@mst_features": alias, **settings}})["f"]
                for alias in (name, "spacy_mstparse.FirstOrderFeatures.v2")}
    assert resolved[name].to_dict() == resolved["spacy_mstparse.FirstOrderFeatures.v2"].to_dict()
    v1 = spacy.registry.resolve({"f": {"@mst_features": "spacy_mstparse.FirstOrderFeatures.v1"}})["f"]
    assert v1.direction_backoff is False and resolved[name].direction_backoff is True
