"""Explanations (graph.explain via ``MSTParser.explain``): the listed feature
weights of an arc sum to the arc score the decoder used, those of a label to
its label score; the chosen head is the parse's head, the competitor is the
head in the best tree without the chosen arc; attribute values are the
tokens' (checked by hand for the h-pos+c-pos template)."""
import numpy as np
import pytest


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
        for i in range(0, len(doc), 3):
            expl = parser.explain(doc, i)
            c = i + 1
            head = expl["head"]
            assert head["token"] == doc[i].head.i or (head["token"] is None and doc[i].head.i == i)
            assert head["arc_score"] == pytest.approx(float(arc[head["position"], c]), abs=1e-4)
            total = sum(r["weight"] for r in head["features"])
            assert total == pytest.approx(head["arc_score"], rel=1e-4, abs=1e-3)
            comp = expl["competitor"]
            if comp is not None:
                assert comp["position"] != head["position"]
                assert sum(r["weight"] for r in comp["features"]) == pytest.approx(
                    comp["arc_score"], rel=1e-4, abs=1e-3)
                assert expl["tree_score_difference"] >= -1e-4
            label = expl["label"]
            assert label["label"] == doc[i].dep_
            if not label["forced_root_label"]:
                assert sum(r["weight"] for r in label["features"]) == pytest.approx(
                    label["score"], rel=1e-4, abs=1e-3)
            if not label["forced_root_label"] and label["competitor"] is not None:
                # (no competitor: the only label seen for these tags and direction)
                assert sum(r["competitor_weight"] for r in label["features"]) == pytest.approx(
                    label["competitor_score"], rel=1e-4, abs=1e-3)
                assert label["score"] >= label["competitor_score"]
            checked += 1
    assert checked > 20


def test_attribute_values_and_conjunctions(parser_and_docs):
    parser, docs = parser_and_docs
    doc = parser(docs[1])
    i = next(t.i for t in doc if t.head.i != t.i)
    expl = parser.explain(doc, i)
    head = doc[i].head
    rows = [r for r in expl["head"]["features"] if r["template"] == "hp+cp/tag1"]
    d = abs(head.i - i)
    dist = str(d) if d <= 5 else ("6-10" if d <= 10 else ">10")
    direction = "R" if i > head.i else "L"
    assert [r["conjunction"] for r in rows] == ["", f"dir={direction} dist={dist}",
                                               f"dir={direction}"]
    assert all(r["values"] == f"{head.pos_} {doc[i].pos_}" for r in rows)
    assert "dir=" in expl["text"] and doc[i].text in expl["text"]


def test_explain_honours_fixed_heads(parser_and_docs):
    parser, docs = parser_and_docs
    doc = next(d for d in docs if len(d) > 4)
    doc[2]._.fixed_head = doc[1]
    try:
        expl = parser.explain(doc, 2)
        assert expl["head"]["token"] == 1 and expl["competitor"] is None
    finally:
        doc[2]._.fixed_head = None
    with pytest.raises(ValueError, match="no token 99"):
        parser.explain(doc, 99)
