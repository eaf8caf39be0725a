"""The shipped training configs: they load, accept the usual overrides, and
train something sensible on the bundled sample."""
from pathlib import Path

import pytest
import spacy
from spacy.training.initialize import init_nlp
from spacy.training.loop import train

from spacy_mstparse.corpus.convert import convert

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "assets" / "en_ewt_sample"


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
    assert nlp.get_pipe("mst_parser").order == (2 if "o2" in name else 1)


def test_second_order_config_trains(docbins):
    """configs/mst_parser_o2.cfg trains through spaCy's loop on the sample."""
    config = load("mst_parser_o2.cfg", docbins, **{"training.max_epochs": 2})
    nlp = init_nlp(config)
    nlp, _ = train(nlp, None, stdout=open("/dev/null", "w"))
    assert nlp.get_pipe("mst_parser").order == 2
    dev = list(spacy.registry.resolve(config.interpolate()["corpora"])["dev"](nlp))
    assert nlp.evaluate(dev)["dep_uas"] > 0.7


@pytest.mark.slow
def test_tagged_pipeline_trains_parser_on_predicted_tags(docbins):
    """Guards the annotating set-up: if the taggers' listeners got no
    tok2vec output during training, the parser would learn from constant tags
    and stay far below this."""
    config = load("mst_parser_tagged.cfg", docbins, **{"training.max_epochs": 3})
    nlp = init_nlp(config)
    nlp, _ = train(nlp, None, stdout=open("/dev/null", "w"))
    # the dev reader of the config gives gold words only
    dev = list(spacy.registry.resolve(config.interpolate()["corpora"])["dev"](nlp))
    scores = nlp.evaluate(dev)
    assert scores["tag_acc"] > 0.8
    assert scores["dep_uas"] > 0.6
