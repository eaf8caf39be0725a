"""Explanations (graph.explain via ``MSTParser.explain``): the listed feature
weights of an arc sum to the arc score the decoder used, those of a label to
its label score; the chosen head is the parse's head, the competitor is the
head in the best tree without the chosen arc; attribute values are the
tokens' (checked by hand for the h-pos+c-pos template). Numbering: token
indices in Python, CoNLL IDs in the CLI; tag rows named by what they hold."""
import re

import numpy as np
import pytest

from spacy_mstparse.graph.explain import Explanation

from conftest import run_cli


@pytest.fixture(scope="module")
def parser_and_docs(trained_pipeline, sample_dev):
    import spacy

    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.pipeline_input import make_input_docs

    nlp = spacy.load(trained_pipeline)
    gold = list(read_conllu(sample_dev, nlp.vocab))[:12]
    docs = make_input_docs(gold, nlp.vocab, gold_tags=True)
    return nlp.get_pipe("mst_parser"), docs


def test_weights_sum_to_the_scores(parser_and_docs):
    parser, docs = parser_and_docs
    checked = 0
    for doc in docs:
        doc = parser(doc)
        sentence = parser.encoder.encode(doc, [(0, len(doc))])[0]
        arc = parser.graph.scores(sentence).arc
        position = lambda token: 0 if token is None else token + 1  # noqa: E731
        for i in range(0, len(doc), 3):
            expl = parser.explain(doc, i)
            assert isinstance(expl, Explanation) and expl.token == i
            c = i + 1
            head = expl.head  # token indices, None = the root
            assert head.token == doc[i].head.i or (head.token is None and doc[i].head.i == i)
            assert head.arc_score == pytest.approx(float(arc[position(head.token), c]), abs=1e-4)
            total = sum(r["weight"] for r in head.features)
            assert total == pytest.approx(head.arc_score, rel=1e-4, abs=1e-3)
            comp = expl.competitor
            if comp is not None:
                assert comp.token != head.token
                assert comp.arc_score == pytest.approx(float(arc[position(comp.token), c]),
                                                       abs=1e-4)
                assert sum(r["weight"] for r in comp.features) == pytest.approx(
                    comp.arc_score, rel=1e-4, abs=1e-3)
                assert expl.tree_score_difference >= -1e-4
            label = expl.label
            assert label.label == doc[i].dep_  # as the Doc says it (ROOT for the root)
            if not label.forced_root_label:
                assert sum(r["weight"] for r in label.features) == pytest.approx(
                    label.score, rel=1e-4, abs=1e-3)
            if not label.forced_root_label and label.competitor is not None:
                # (no competitor: the only label seen for these tags and direction)
                assert sum(r["competitor_weight"] for r in label.features) == pytest.approx(
                    label.competitor_score, rel=1e-4, abs=1e-3)
                assert label.score >= label.competitor_score
            checked += 1
    assert checked > 20


def test_attribute_values_and_conjunctions(parser_and_docs):
    parser, docs = parser_and_docs
    doc = parser(docs[1])
    i = next(t.i for t in doc if t.head.i != t.i)
    expl = parser.explain(doc, i)
    head = doc[i].head
    # the tag rows named by what they hold (the first is UPOS, the second XPOS)
    templates = {r["template"] for r in expl.head.features}
    assert "hp+cp/upos" in templates and "hp+cp/xpos" in templates
    assert not any("/tag" in t for t in templates)
    rows = [r for r in expl.head.features if r["template"] == "hp+cp/upos"]
    d = abs(head.i - i)
    dist = str(d) if d <= 5 else ("6-10" if d <= 10 else ">10")
    direction = "R" if i > head.i else "L"
    assert [r["conjunction"] for r in rows] == ["", f"dir={direction} dist={dist}",
                                               f"dir={direction}"]
    assert all(r["values"] == f"{head.pos_} {doc[i].pos_}" for r in rows)
    assert [r["values"] for r in expl.head.features if r["template"] == "hp+cp/xpos"][0] == \
        f"{head.tag_} {doc[i].tag_}"
    # printable: words by token index, as token.i
    text = str(expl)
    assert "dir=" in text
    assert text.splitlines()[0].startswith(f"{doc[i].text}/{i}: head {head.text}/{head.i} ")
    assert expl.format(conll_ids=True).splitlines()[0].startswith(
        f"{doc[i].text}/{i + 1}: head {head.text}/{head.i + 1} ")
    assert set(expl.to_dict()) >= {"token", "head", "competitor", "label"}


def test_explain_honours_fixed_heads(parser_and_docs):
    parser, docs = parser_and_docs
    doc = next(d for d in docs if len(d) > 4)
    doc[2]._.fixed_head = doc[1]
    try:
        expl = parser.explain(doc, 2)
        assert expl.head.token == 1 and expl.competitor is None
        assert "no competing head" in str(expl)
    finally:
        doc[2]._.fixed_head = None
    with pytest.raises(ValueError, match="no token 99"):
        parser.explain(doc, 99)


def test_cli_numbers_words_by_conll_id(trained_pipeline, sample_dev):
    """``explain --word 10`` prints word 10 and its head by CoNLL ID, the
    head being the one ``parse`` writes."""
    import spacy

    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.pipeline_input import make_input_docs

    nlp = spacy.load(trained_pipeline)
    gold = list(read_conllu(sample_dev, nlp.vocab))
    sent = next(k for k, d in enumerate(gold, 1) if len(d) >= 12)
    doc = nlp(make_input_docs(gold[sent - 1:sent], nlp.vocab, gold_tags=True)[0])
    word = doc[9]
    head_id = 0 if word.head.i == word.i else word.head.i + 1
    head_name = "ROOT" if head_id == 0 else f"{word.head.text}/{head_id}"
    result = run_cli("explain", trained_pipeline, sample_dev, "--sent", sent, "--word", 10,
                     "--gold-tags", "--top", 3)
    assert result.exit_code == 0, result.output
    first = result.stdout.splitlines()[0]
    assert first.startswith(f"{word.text}/10: head {head_name} "), first
    competitor = re.search(r"best competing head (\S+)", result.stdout)
    if competitor and competitor.group(1) != "ROOT":
        text, number = competitor.group(1).rsplit("/", 1)
        assert doc[int(number) - 1].text == text


def test_tag_rows_are_named_by_what_they_hold():
    from spacy_mstparse.features import feature_groups as fg
    from spacy_mstparse.features.config import FeatureConfig
    from spacy_mstparse.features.templates import FIRST_ORDER_TEMPLATES, TAG_COLUMN_STRIDE

    rows = FeatureConfig("upos", False, 2**10, supertags=True, cluster_bits=4).tag_row_names()
    assert rows == ["upos", "supertag", "cluster"]
    assert FeatureConfig("both", False, 2**10, cluster_bits=4).tag_row_names() == \
        ["upos", "xpos", "cluster"]
    pairs = next(t.id for t in FIRST_ORDER_TEMPLATES.values() if t.name == "hp+cp")
    names = [fg.group_name(column * TAG_COLUMN_STRIDE + pairs, rows) for column in range(3)]
    assert names == ["hp+cp/upos", "hp+cp/supertag", "hp+cp/cluster"]
    # without row names (e.g. a learner's report): numbered, the ids unchanged
    assert fg.group_name(2 * TAG_COLUMN_STRIDE + pairs) == "hp+cp/tag3"
    assert fg.with_row_names("c-pos/tag2", rows) == "c-pos/supertag"
    assert fg.with_row_names("bias", rows) == "bias"
