"""Each parser factory's signature names exactly the settings of its
``DEFAULT_CONFIG`` (the one source of the defaults) and repeats none of
their values; a component built without settings takes those defaults."""
import inspect

import pytest
import spacy

from spacy_mstparse.components import arcstandard_settings, mst_parser_settings
from spacy_mstparse.components.arcstandard_svm import ArcStandardSVM, make_arcstandard_svm
from spacy_mstparse.components.mst_parser import make_mst_parser

FACTORIES = [(make_mst_parser, mst_parser_settings.DEFAULT_CONFIG),
             (make_arcstandard_svm, arcstandard_settings.DEFAULT_CONFIG)]


@pytest.mark.parametrize("factory, config", FACTORIES)
def test_factory_signature_and_default_config_agree(factory, config):
    params = inspect.signature(factory).parameters
    assert list(params)[:2] == ["nlp", "name"]
    assert set(list(params)[2:]) == set(config)
    assert all(p.default is inspect.Parameter.empty for p in params.values())


@pytest.mark.parametrize("name, config", [("mst_parser", mst_parser_settings.DEFAULT_CONFIG),
                                          ("arcstandard_svm", arcstandard_settings.DEFAULT_CONFIG)])
def test_registered_default_config_is_the_settings_module(name, config):
    meta = spacy.blank("en").get_factory_meta(name)
    assert meta.default_config == config


def test_arcstandard_constructor_takes_the_default_config():
    parser = ArcStandardSVM(spacy.blank("en").vocab)
    assert parser.cfg == {k: v for k, v in arcstandard_settings.DEFAULT_CONFIG.items()
                          if k != "scorer"}
