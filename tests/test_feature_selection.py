"""What the graph parser reads, chosen from the training treebank
(``features.selection``, the ``auto`` feature settings) and the word
clusters' sources (``clusters = "auto"``): hand-made treebanks whose columns
say what must be chosen, saved and loaded back."""
import math
from collections import Counter

import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from spacy_mstparse.features.config import FeatureConfig
from spacy_mstparse.features.selection import (FEATS_MIN_SHARE, TokenRow, choose_features,
                                               conditional_entropy)


def rows(n=40, upos=("NOUN", "VERB"), xpos=None, feats="Case=Nom", lemma=None):
    """n words; XPOS a function of (i) when given, lemma = word unless given."""
    out = []
    for i in range(n):
        u = upos[i % len(upos)]
        x = xpos(i, u) if xpos else "_"
        word = f"w{i % 7}"
        out.append(TokenRow(u, x, feats(i) if callable(feats) else feats,
                            lemma(i, word) if lemma else word, word))
    return out


def test_conditional_entropy_against_hand_computed_values():
    # Y a copy of X: no uncertainty left (the Miller-Madow terms cancel)
    assert conditional_entropy(Counter({("a", 1): 10, ("b", 2): 10})) == pytest.approx(0.0)
    # Y a fair coin independent of X, 40 pairs: 1 bit, plus the correction
    # (4 - 1) / (2 * 40 ln 2) - (2 - 1) / (2 * 40 ln 2)
    pairs = Counter({("a", 0): 10, ("a", 1): 10, ("b", 0): 10, ("b", 1): 10})
    assert conditional_entropy(pairs) == pytest.approx(1 + 2 / (80 * math.log(2)))
    assert conditional_entropy(Counter()) == 0.0


def test_xpos_absent_a_copy_or_richer():
    chosen, report = choose_features(rows())                              # XPOS "_"
    assert chosen["tag_columns"] == "upos" and not report["xpos_given"]
    chosen, _ = choose_features(rows(xpos=lambda i, u: u.lower()))         # a copy of UPOS
    assert chosen["tag_columns"] == "upos"
    chosen, report = choose_features(rows(xpos=lambda i, u: f"{u}{i % 4}"))  # finer than UPOS
    assert chosen["tag_columns"] == "both" and report["xpos_bits_given_upos"] > 0.9  # 1 bit
    # a column the parser will not be given at parse time is never chosen
    chosen, _ = choose_features(rows(xpos=lambda i, u: f"{u}{i % 4}"),
                                available={"POS", "MORPH", "LEMMA"})
    assert chosen["tag_columns"] == "upos"


def test_xpos_that_spells_out_the_feats_is_not_read_beside_them():
    cases = ("Nom", "Acc", "Gen", "Dat")
    feats = lambda i: f"Case={cases[i // 2 % 4]}|Number=Sing"              # noqa: E731
    positional = lambda i, u: f"{u[0]}{cases[i // 2 % 4][0]}S"               # noqa: E731
    chosen, report = choose_features(rows(n=80, xpos=positional, feats=feats))
    assert report["xpos_bits_given_upos"] > 1.9                         # 2 bits beyond UPOS
    assert report["xpos_bits_given_upos_feats"] == pytest.approx(0.0, abs=0.05)   # none beyond FEATS
    assert chosen["tag_columns"] == "upos"
    # where templates read tags without the FEATS (siblings, from order 2) it is read
    assert choose_features(rows(n=80, xpos=positional, feats=feats),
                           feats_in_every_template=False)[0]["tag_columns"] == "both"
    # without FEATS (absent, or set off) the same XPOS is read
    assert choose_features(rows(n=80, xpos=positional, feats=feats),
                           use_morph=False)[0]["tag_columns"] == "both"
    # reading only Number, the case letters of XPOS say something FEATS do not
    assert choose_features(rows(n=80, xpos=positional, feats=feats),
                           use_morph=["Number"])[0]["tag_columns"] == "both"
    # an XPOS with a distinction of its own (1 bit) beside the FEATS is read
    finer = lambda i, u: f"{positional(i, u)}{i // 8 % 2}"           # noqa: E731
    chosen, report = choose_features(rows(n=80, xpos=finer, feats=feats))
    assert report["xpos_bits_given_upos_feats"] > 0.9
    assert chosen["tag_columns"] == "both"


def test_feats_read_where_the_treebank_has_them():
    assert choose_features(rows())[0]["use_morph"] is True
    sparse = rows(feats=lambda i: "Case=Nom" if i % 10 == 0 else "_")   # 10% of the words
    assert 0.1 < FEATS_MIN_SHARE
    assert choose_features(sparse)[0]["use_morph"] is False
    assert choose_features(rows(feats="_"))[0]["use_morph"] is False
    assert choose_features(rows(), available={"POS", "TAG"})[0]["use_morph"] is False
    # settings given in the config are kept as they are
    assert choose_features(rows(feats="_"), use_morph=["Case"])[0]["use_morph"] == ["Case"]


def test_lemma_where_it_differs_from_the_word():
    inflecting = rows(lemma=lambda i, w: w + "x" if i % 2 else w)       # half differ
    assert choose_features(inflecting)[0]["lemma"] is True
    assert choose_features(rows())[0]["lemma"] is False                 # lemma = word
    assert choose_features(rows(lemma=lambda i, w: "_"))[0]["lemma"] is False
    assert choose_features(inflecting, available={"POS"})[0]["lemma"] is False


def test_resolve_keeps_given_settings_and_the_tag_row_budget():
    auto = FeatureConfig("auto", "auto", 2**10, lemma="auto")
    assert not auto.is_resolved and auto.first_order is None
    concrete = auto.resolve({"tag_columns": "both", "use_morph": ["Case"], "lemma": True})
    assert concrete.is_resolved and concrete.n_tagsets == 2
    assert concrete.morph_keys == frozenset({"Case"}) and concrete.lemma is True
    forced = FeatureConfig("xpos", "auto", 2**10, lemma=False)
    assert forced.resolve({"tag_columns": "both", "use_morph": True, "lemma": True}).to_dict() \
        == {**forced.to_dict(), "use_morph": True}
    # supertags and clusters leave room for one tag column only
    crowded = FeatureConfig("auto", False, 2**10, cluster_bits=2, supertags=True, lemma=False)
    assert crowded.resolve({"tag_columns": "both"}).tag_columns == "upos"
    with pytest.raises(ValueError, match="use_morph"):
        FeatureConfig("upos", "Case", 2**10)
    with pytest.raises(ValueError, match="lemma"):
        FeatureConfig("upos", False, 2**10, lemma="yes")


SENTENCES = [
    # words, UPOS, XPOS, FEATS, lemmas, heads, labels
    (["Psi", "stekaji", "."], ["NOUN", "VERB", "PUNCT"], ["NNMP1", "VB-P", "Z:"],
     ["Case=Nom|Number=Plur", "Number=Plur", ""], ["pes", "stekat", "."], [1, 1, 1],
     ["nsubj", "root", "punct"]),
    (["Kocky", "spi"], ["NOUN", "VERB"], ["NNFP1", "VB-S"], ["Case=Nom|Number=Plur",
     "Number=Sing"], ["kocka", "spat"], [1, 1], ["nsubj", "root"]),
    (["Pes", "vidi", "kocku"], ["NOUN", "VERB", "NOUN"], ["NNMS1", "VB-S", "NNFS4"],
     ["Case=Nom|Number=Sing", "Number=Sing", "Case=Acc|Number=Sing"], ["pes", "videt", "kocka"],
     [1, 1, 1], ["nsubj", "root", "obj"]),
]
CONFIG = {"features": {"@mst_features": "spacy_mstparse.GraphFeatures.v2", "n_buckets": 2**12,
                       "tag_columns": "auto", "use_morph": "auto", "lemma": "auto"},
          "label_buckets": 2**8}


def examples(nlp, with_xpos=True):
    out = []
    for words, pos, tags, morphs, lemmas, heads, deps in SENTENCES:
        annotation = dict(words=words, pos=pos, morphs=morphs, lemmas=lemmas)
        if with_xpos:
            annotation["tags"] = tags
        ref = Doc(nlp.vocab, heads=heads, deps=deps, **annotation)
        out.append(Example(Doc(nlp.vocab, **annotation), ref))
    return out


def test_the_pipe_chooses_saves_and_loads_what_it_reads(tmp_path):
    nlp = spacy.blank("xx")
    parser = nlp.add_pipe("mst_parser", config=CONFIG)
    train = examples(nlp)
    nlp.initialize(lambda: train)
    assert parser.cfg["feature_choice"] == {"tag_columns": "both", "use_morph": True,
                                            "lemma": True, "cluster_bits": 0}
    assert set(parser.tag_attrs) == {"POS", "TAG", "MORPH", "LEMMA"}
    for _ in range(5):
        parser.update(train)
    expected = [t.head.i for t in nlp(examples(nlp)[2].predicted)]
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    again = loaded.get_pipe("mst_parser")
    assert again.cfg["feature_choice"] == parser.cfg["feature_choice"]
    assert again.model_features.to_dict() == parser.model_features.to_dict()
    assert [t.head.i for t in loaded(examples(loaded)[2].predicted)] == expected


def test_columns_the_training_docs_lack_are_not_read():
    nlp = spacy.blank("xx")
    parser = nlp.add_pipe("mst_parser", config=CONFIG)
    train = examples(nlp, with_xpos=False)
    nlp.initialize(lambda: train)
    assert parser.cfg["feature_choice"]["tag_columns"] == "upos"
    assert "TAG" not in parser.tag_attrs


def test_clusters_auto_induces_classes_for_a_language_without_a_table():
    nlp = spacy.blank("xx")
    parser = nlp.add_pipe("mst_parser", config={**CONFIG, "features": {
        **CONFIG["features"], "cluster_bits": 2}})
    nlp.initialize(lambda: examples(nlp) * 2)   # clusters = "auto"; words seen twice get one
    assert parser.model_features.cluster_bits == 2 and len(parser.encoder.clusters) > 0


def test_a_clusters_source_without_the_language_trains_without_them():
    pytest.importorskip("spacy_lookups_data")
    nlp = spacy.blank("xx")
    parser = nlp.add_pipe("mst_parser", config={**CONFIG, "features": {
        **CONFIG["features"], "cluster_bits": 2}})
    nlp.config["initialize"]["components"]["mst_parser"] = {"clusters": "spacy-lookups-data"}
    with pytest.warns(UserWarning, match="training without word clusters"):
        nlp.initialize(lambda: examples(nlp))
    assert parser.cfg["feature_choice"]["cluster_bits"] == 0
    assert parser.encoder.clusters is None and parser.model_features.n_tagsets == 2
    parser.update(examples(nlp))
    assert len(list(nlp.pipe([eg.predicted for eg in examples(nlp)]))) == 3


def test_an_xpos_spelling_out_the_feats_is_read_at_second_order_only():
    """First order reads FEATS wherever it reads tags: such an XPOS adds
    nothing there; the sibling templates of order 2 read tags alone."""
    for order, expected in ((1, "upos"), (2, "both")):
        nlp = spacy.blank("xx")
        parser = nlp.add_pipe("mst_parser", config={**CONFIG, "order": order})
        train = examples(nlp)
        for eg in train:   # XPOS = UPOS + FEATS
            for doc in (eg.reference, eg.predicted):
                for token in doc:
                    token.tag_ = f"{token.pos_}|{token.morph}"
        nlp.initialize(lambda: train)
        assert parser.cfg["feature_choice"]["tag_columns"] == expected
        assert parser.cfg["feature_report"]["xpos_bits_given_upos"] > 0.05
