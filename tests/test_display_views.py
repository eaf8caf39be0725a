"""The displaCy views of ``spacy_mstparse.display``: the k best trees of
``doc._.parses`` and the candidate heads of ``doc._.arc_probs``, through a
trained pipeline loaded with ``n_best`` / ``probabilities`` on, and the CLI's
``show --view``."""
import re

import pytest
import spacy

from spacy_mstparse.corpus.conll import read_conllu
from spacy_mstparse.display import (
    ROOT_WORD,
    arc_probability_view,
    kbest_views,
    render_arc_probabilities,
    render_kbest,
)
from spacy_mstparse.pipeline_input import make_input_docs

from conftest import run_cli


@pytest.fixture(scope="module")
def parsed(trained_pipeline, sample_dev):
    """Two dev sentences in one doc, parsed with 4 best trees and probabilities."""
    nlp = spacy.load(trained_pipeline, config={"components": {"mst_parser": {
        "probabilities": True, "n_best": 4}}})
    gold = list(read_conllu(sample_dev, nlp.vocab, n_sents=2))[:1]
    doc = make_input_docs(gold, nlp.vocab, gold_tags=True)[0]
    return nlp(doc)


def _heads_of(view):
    """{child position: head position} of a tree view's arcs."""
    out = {}
    for arc in view["arcs"]:
        head, child = ((arc["end"], arc["start"]) if arc["dir"] == "left"
                       else (arc["start"], arc["end"]))
        assert child not in out
        out[child] = head
    return out


def test_kbest_views_draw_each_tree_of_doc_parses(parsed):
    sents = list(parsed.sents)
    assert len(parsed._.parses) == len(sents) == 2
    for k, sent in enumerate(sents):
        views = kbest_views(parsed, k)
        trees = parsed._.parses[k]
        assert len(views) == len(trees) >= 2
        for rank, (view, tree) in enumerate(zip(views, trees), 1):
            assert [w["text"] for w in view["words"]] == [ROOT_WORD] + [t.text for t in sent]
            heads = _heads_of(view)
            assert sorted(heads) == list(range(1, len(sent) + 1))
            for c, token in enumerate(sent, 1):
                h = tree["heads"][c - 1]
                assert heads[c] == (0 if h == token.i else h - sent.start + 1)
            assert [a["label"] for a in sorted(view["arcs"], key=lambda a: _child(a))] == tree["deps"]
            assert view["title"].startswith(f"parse {rank} of {len(trees)}: score {tree['score']:.2f}")
            assert f"p = {tree['prob']:.3f}" in view["title"]
        # the first view is the parse written to the tokens
        assert _heads_of(views[0]) == {t.i - sent.start + 1: (0 if t.head.i == t.i else
                                                              t.head.i - sent.start + 1)
                                       for t in sent}


def _child(arc):
    return arc["start"] if arc["dir"] == "left" else arc["end"]


def test_arc_probability_view_lists_the_heads_above_the_threshold(parsed):
    start, marginals = parsed._.arc_probs[1]
    sent = list(parsed.sents)[1]
    assert start == sent.start
    view = arc_probability_view(parsed, 1, min_prob=0.1)
    n = len(sent)
    expected = {(h, c) for c in range(1, n + 1) for h in range(n + 1)
                if h != c and marginals[h, c] >= 0.1}
    drawn = {}
    for arc in view["arcs"]:
        head, child = ((arc["end"], arc["start"]) if arc["dir"] == "left"
                       else (arc["start"], arc["end"]))
        drawn[head, child] = arc
        assert arc["prob"] == pytest.approx(marginals[head, child])
    predicted = {(0 if t.head.i == t.i else t.head.i - start + 1, t.i - start + 1): t for t in sent}
    # every head above the threshold, plus the predicted head even when below it
    assert set(drawn) == expected | set(predicted)
    for (h, c), arc in drawn.items():
        if (h, c) in predicted:
            token = predicted[h, c]
            assert arc["label"] == f"{token.dep_} {token._.head_prob:.2f}"
        else:
            assert arc["label"] == f"{marginals[h, c]:.2f}"
    # a lower threshold draws more arcs
    assert len(arc_probability_view(parsed, 1, min_prob=0.001)["arcs"]) >= len(view["arcs"])


def test_rendered_svgs(parsed):
    svg = render_kbest(parsed, 0)
    views = kbest_views(parsed, 0)
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    assert svg.count('class="displacy"') == len(views)  # one displaCy drawing per tree
    for view in views:
        assert view["title"] in svg
    prob_svg = render_arc_probabilities(parsed, 0, min_prob=0.1)
    view = arc_probability_view(parsed, 0, min_prob=0.1)
    opacities = [float(x) for x in re.findall(r'class="displacy-arrow" opacity="([0-9.]+)"', prob_svg)]
    assert opacities == [pytest.approx(max(a["prob"], 0.15), abs=0.005) for a in view["arcs"]]


def test_missing_annotations_and_bad_arguments_are_named(trained_pipeline, sample_dev):
    nlp = spacy.load(trained_pipeline)
    gold = list(read_conllu(sample_dev, nlp.vocab, n_sents=1))[:1]
    doc = nlp(make_input_docs(gold, nlp.vocab, gold_tags=True)[0])
    with pytest.raises(ValueError, match=r"doc\._\.parses is not set.*n_best"):
        kbest_views(doc)
    with pytest.raises(ValueError, match=r"doc\._\.arc_probs is not set.*probabilities"):
        arc_probability_view(doc)


def test_sentence_index_and_threshold_are_checked(parsed):
    with pytest.raises(ValueError, match="no sentence 5 in doc._.parses: it has 2"):
        kbest_views(parsed, 5)
    with pytest.raises(ValueError, match="min_prob"):
        arc_probability_view(parsed, 0, min_prob=0)


@pytest.mark.parametrize("view", ["probs", "kbest"])
def test_show_view_writes_the_svg(trained_pipeline, sample_dev, tmp_path, view):
    out = tmp_path / f"{view}.svg"
    result = run_cli("show", trained_pipeline, sample_dev, "--n", 1, "--gold-tags",
                     "--svg", out, "--view", view, "--n-best", 3)
    assert result.exit_code == 0, result.output
    svg = out.read_text(encoding="utf8")
    assert svg.startswith("<svg")
    if view == "kbest":
        assert 2 <= svg.count('class="displacy"') <= 3
        assert "parse 1 of" in svg
    else:
        assert 'opacity="' in svg and ROOT_WORD in svg


def test_show_view_errors_are_one_line(trained_pipeline, sample_dev, tmp_path):
    out = tmp_path / "x.svg"
    for args, message in ((("--view", "nope"), "view must be one of"),
                          (("--view", "kbest", "--n-best", 1), "needs n_best >= 2"),
                          (("--view", "probs", "--min-prob", 0), "min_prob must be in")):
        result = run_cli("show", trained_pipeline, sample_dev, "--gold-tags", "--svg", out, *args)
        assert result.exit_code == 1
        assert message in result.output
        assert not out.exists()
