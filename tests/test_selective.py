"""Selective parsing (``spacy_mstparse.selective``, ``parse --min-prob``):
the arcs kept are exactly those whose probability reaches the threshold,
the joint probability is the product, CoNLL-U output carries HeadProb /
DepProb / Confident in MISC and reads back."""
import pytest
from typer.testing import CliRunner

from spacy_mstparse.cli import app
from spacy_mstparse.selective import confident_arcs, mark_confident

PROBS = {"components": {"mst_parser": {"probabilities": True}}}


@pytest.fixture(scope="module")
def parsed(trained_pipeline, sample_dev):
    import spacy

    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.pipeline_input import make_input_docs

    nlp = spacy.load(trained_pipeline, config=PROBS)
    gold = list(read_conllu(sample_dev, nlp.vocab))[:30]
    return nlp, list(nlp.pipe(make_input_docs(gold, nlp.vocab, gold_tags=True)))


def test_confident_arcs_are_those_at_the_threshold(parsed):
    _, docs = parsed
    for threshold in (0.0, 0.3, 0.6):
        for joint in (False, True):
            for doc in docs:
                arcs = confident_arcs(doc, threshold, joint)
                kept = {arc.token.i for arc in arcs}
                for token in doc:
                    p = token._.head_prob * (token._.dep_prob if joint else 1.0)
                    assert (token.i in kept) == (p >= threshold)
                for arc in arcs:
                    assert arc.head.i == arc.token.head.i and arc.dep == arc.token.dep_
                assert doc._.confident_arcs(threshold, joint) == arcs
                assert mark_confident(doc, threshold, joint) == len(arcs)
                assert [t._.confident for t in doc] == [t.i in kept for t in doc]
    everything = sum(len(confident_arcs(doc, 0.0)) for doc in docs)
    assert everything == sum(len(doc) for doc in docs)
    assert sum(len(confident_arcs(doc, 0.6, True)) for doc in docs) <= sum(
        len(confident_arcs(doc, 0.6)) for doc in docs)
    with pytest.raises(ValueError, match="min_prob"):
        confident_arcs(docs[0], 1.5)


def test_without_probabilities_the_error_says_how(trained_pipeline, parsed):
    import spacy

    nlp, docs = parsed
    plain = spacy.load(trained_pipeline)
    doc = plain.get_pipe("mst_parser")(plain.make_doc("a b"))  # untagged: warns, parses
    with pytest.raises(ValueError, match="probabilities = true"):
        confident_arcs(doc)


def test_parse_min_prob_marks_words_in_misc(trained_pipeline, sample_dev, tmp_path):
    import spacy

    from spacy_mstparse.corpus.conll import read_conllu

    out = tmp_path / "out.conllu"
    result = CliRunner().invoke(app, ["parse", str(trained_pipeline), str(sample_dev), str(out),
                                      "--gold-tags", "--min-prob", "0.5"])
    assert result.exit_code == 0, result.output
    rows = [line.split("\t") for line in out.read_text().splitlines()
            if line and not line.startswith("#") and line.split("\t")[0].isdigit()]
    misc = [dict(item.split("=", 1) for item in row[9].split("|") if "=" in item) for row in rows]
    assert all("HeadProb" in m and "DepProb" in m for m in misc)
    confident = [m["Confident"] == "Yes" for m in misc]
    # HeadProb is rounded to 4 decimals: within 5e-5 of the threshold either way
    assert all(yes == (float(m["HeadProb"]) >= 0.5) for yes, m in zip(confident, misc)
               if abs(float(m["HeadProb"]) - 0.5) > 5e-5)
    assert f"{sum(confident)} words" in result.output
    assert sum(len(doc) for doc in read_conllu(out, spacy.blank("en").vocab)) == len(rows)   # reads back
    bad = CliRunner().invoke(app, ["parse", str(trained_pipeline), str(sample_dev),
                                   str(tmp_path / "x.conllu"), "--min-prob", "2"])
    assert bad.exit_code != 0 and "Traceback" not in bad.output
