"""Arc probabilities, k-best parses and calibration (graph.marginals,
graph.analysis, graph.temperature, graph.calibration_metrics, the
mst_parser settings ``probabilities`` / ``n_best``, ``calibrate``).

Against brute force where it is cheap (tree probabilities over all trees of a
short sentence sum to 1; the temperature fitted on trees sampled from a
known distribution recovers it; ECE on a hand-computed case) and by
consistency on the trained sample pipeline (columns of the marginals sum to
1, head_prob is the marginal of the predicted arc, dep_prob the softmax of
the label scores, the k-best trees are distinct, sorted, the first is the
1-best parse), and the calibrate command writes T into a model that reloads
with it."""
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from test_decoders import enumerate_trees

from spacy_mstparse.graph.calibration_metrics import calibration_report, expected_calibration_error
from spacy_mstparse.graph.marginals import arc_marginals
from spacy_mstparse.graph.temperature import fit_temperature

REPO = Path(__file__).resolve().parents[1]
PROB_CONFIG = {"components": {"mst_parser": {"probabilities": True, "n_best": 5}}}


def test_ece_by_hand():
    probs = [0.95, 0.95, 0.55, 0.55, 0.55, 0.05]
    correct = [True, False, True, True, False, False]
    # bins: 0.95 -> acc 0.5 (|0.5-0.95| * 2), 0.55 -> acc 2/3, 0.05 -> acc 0
    expected = (2 * 0.45 + 3 * abs(2 / 3 - 0.55) + 1 * 0.05) / 6
    assert expected_calibration_error(probs, correct, 15) == pytest.approx(expected)
    report = calibration_report(probs, correct, (0.9, 0.5))
    assert report["coverage@0.9"] == pytest.approx(2 / 6)
    assert report["accuracy@0.9"] == pytest.approx(0.5)
    assert report["accuracy@0.5"] == pytest.approx(3 / 5)


def test_fitted_temperature_recovers_the_sampling_temperature():
    rs = np.random.RandomState(0)
    n, true_t = 4, 2.0
    trees, single, proj, arcs = enumerate_trees(n)
    keep = single & proj
    trees, arcs = trees[keep], arcs[keep]
    items = []
    for _ in range(400):
        arc = (rs.randn(n + 1, n + 1) * 3).astype(np.float32)
        values = arc.astype(np.float64).ravel()[arcs].sum(axis=1) / true_t
        p = np.exp(values - values.max())
        gold = trees[rs.choice(len(trees), p=p / p.sum())].astype(np.int32)
        gold[0] = -1
        items.append((arc, gold))
    t, loglik = fit_temperature(items, projective=True)
    assert 1.6 < t < 2.5
    # the optimum beats its neighbours
    from spacy_mstparse.graph.temperature import head_log_likelihood

    assert loglik >= head_log_likelihood(items, t * 1.5, True)
    assert loglik >= head_log_likelihood(items, t / 1.5, True)


def test_nonprojective_marginals_fall_back_to_a_higher_temperature():
    rs = np.random.RandomState(1)
    n = 30
    arc = (rs.randn(n + 1, n + 1) * 200).astype(np.float32)
    marg = arc_marginals(arc, 0.01, projective=False)
    assert marg.temperature >= 0.01
    np.testing.assert_allclose(marg.probs[:, 1:].sum(axis=0), 1.0, atol=1e-6)


def test_per_word_temperatures_match_brute_force():
    """p(tree) proportional to exp(sum_c s(h_c, c) / T_c), summed over all
    projective single-root trees, first and second order."""
    from test_second_order_decoders import all_trees

    from spacy_mstparse.graph.marginals import scaled_scores

    rs = np.random.RandomState(5)
    n = 5
    trees, arcs, sib_idx = all_trees(n, True)
    t = np.array([1.0, 0.5, 2.0, 0.5, 0.25, 1.5])
    words = np.arange(1, n + 1)
    for with_sib in (False, True):
        arc = rs.randn(n + 1, n + 1).astype(np.float32)
        sib = rs.randn(n + 1, n + 1, n + 1).astype(np.float32) if with_sib else None
        # every factor divided by its dependent's temperature
        per_arc = arc.astype(np.float64) / t[None, :]
        values = per_arc.ravel()[arcs].sum(axis=1)
        if with_sib:
            flat = np.append((sib.astype(np.float64) / t[None, None, :]).ravel(), 0.0)
            values = values + flat[sib_idx].sum(axis=1)
        p = np.exp(values - values.max())
        p /= p.sum()
        expected = np.zeros((n + 1, n + 1))
        for tree, weight in zip(trees, p):
            expected[tree[1:], words] += weight
        marg = arc_marginals(arc, t, True, sib)
        np.testing.assert_allclose(marg.probs, expected, atol=1e-6)
        # a constant vector is the single temperature
        same = arc_marginals(arc, np.full(n + 1, 0.7), True, sib).probs
        np.testing.assert_allclose(same, arc_marginals(arc, 0.7, True, sib).probs, atol=1e-6)
        arc_t, _, one = scaled_scores(arc, sib, t)
        assert one == 1.0 and arc_t[2, 1] == pytest.approx(arc[2, 1] / 0.5)
    with pytest.raises(ValueError, match="per-word temperatures"):
        arc_marginals(arc, np.ones(3), True)


# -- the component --------------------------------------------------------------------
@pytest.fixture(scope="module")
def loaded(trained_pipeline, sample_dev):
    import spacy

    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.pipeline_input import make_input_docs

    plain = spacy.load(trained_pipeline)
    nlp = spacy.load(trained_pipeline, config=PROB_CONFIG)
    gold = list(read_conllu(sample_dev, nlp.vocab))[:60]
    docs = make_input_docs(gold, nlp.vocab, gold_tags=True)
    return plain, nlp, docs


def copies(docs):
    from spacy.tokens import Doc

    return [Doc(d.vocab).from_bytes(d.to_bytes()) for d in docs]


def test_settings_are_runtime_settings(loaded):
    plain, nlp, _ = loaded
    assert nlp.get_pipe("mst_parser").cfg["probabilities"] is True
    assert nlp.get_pipe("mst_parser").cfg["n_best"] == 5
    assert plain.get_pipe("mst_parser").cfg["probabilities"] is False
    assert plain.get_pipe("mst_parser").cfg["n_best"] == 1


def test_head_and_dep_probabilities(loaded):
    plain, nlp, docs = loaded
    parser = nlp.get_pipe("mst_parser")
    for doc, free in zip(parser.pipe(copies(docs)), plain.get_pipe("mst_parser").pipe(copies(docs))):
        assert [t.head.i for t in doc] == [t.head.i for t in free]
        assert [t.dep_ for t in doc] == [t.dep_ for t in free]
        assert free[0]._.head_prob is None and free._.parses is None
        (start, probs), = doc._.arc_probs
        n = len(doc)
        assert probs.shape == (n + 1, n + 1)
        np.testing.assert_allclose(probs[:, 1:].sum(axis=0), 1.0, atol=1e-6)
        for c, token in enumerate(doc, 1):
            h = 0 if token.head.i == token.i else token.head.i - start + 1
            assert token._.head_prob == pytest.approx(probs[h, c])
            assert 0.0 < token._.dep_prob <= 1.0
    # dep_prob is the label marginal of the labeler's chains at its temperature
    doc = parser(copies(docs[:1])[0])
    sentence = parser.encoder.encode(doc, [(0, len(doc))])[0]
    heads, labels = parser.graph.parse(sentence)
    marg = parser.graph.label_marginals(sentence, heads, parser.cfg["label_temperature"])
    for c, token in enumerate(doc, 1):
        assert token._.dep_prob == pytest.approx(marg[c, labels[c]])
        assert token.dep_ == parser.cfg["labels"][labels[c]]


def test_n_best_parses(loaded):
    _, nlp, docs = loaded
    n_multi = 0
    for doc in nlp.get_pipe("mst_parser").pipe(copies(docs)):
        (parses,) = doc._.parses
        assert 1 <= len(parses) <= 5
        n_multi += len(parses) > 1
        assert parses[0]["heads"] == [t.head.i for t in doc]
        assert parses[0]["deps"] == [t.dep_ for t in doc]
        # best first, unless the final-word rule moved the best tree's final
        # word to its root word; the others in score order
        scores = [p["score"] for p in parses]
        heads = parses[0]["heads"]
        root = next(i for i, h in enumerate(heads) if h == i)
        rule_moved = heads[-1] == root != len(heads) - 1
        assert scores[0] == max(scores) or rule_moved
        assert scores[1:] == sorted(scores[1:], reverse=True)
        assert len({tuple(p["heads"]) for p in parses}) == len(parses)
        probs = [p["prob"] for p in parses]
        assert all(0.0 <= p <= 1.0 for p in probs) and sum(probs) <= 1.0 + 1e-9
        assert probs[1:] == sorted(probs[1:], reverse=True)
    assert n_multi > 10


def test_tree_probabilities_of_all_trees_sum_to_one(trained_pipeline):
    import spacy
    from spacy.tokens import Doc

    nlp = spacy.load(trained_pipeline, config={"components": {"mst_parser": {
        "probabilities": True, "n_best": 1000}}})
    words = ["The", "dog", "saw", "a", "cat"]
    doc = Doc(nlp.vocab, words=words, pos=["DET", "NOUN", "VERB", "DET", "NOUN"],
              tags=["DT", "NN", "VBD", "DT", "NN"])
    parser = nlp.get_pipe("mst_parser")
    doc = parser(doc)
    trees, single, proj, _ = enumerate_trees(len(words))
    # the trees the arc filter allows (features/arc_filter.pyx) have all the probability
    allowed = parser.graph.arc_filter.allowed(parser.encoder.encode(doc, [(0, len(doc))])[0])
    kept = allowed[trees[:, 1:], np.arange(1, len(words) + 1)].all(axis=1)
    (parses,) = doc._.parses
    assert 0 < len(parses) == int((single & proj & kept).sum()) < int((single & proj).sum())
    assert sum(p["prob"] for p in parses) == pytest.approx(1.0, abs=1e-6)


def test_calibrate_writes_the_temperature(trained_pipeline, sample_dev, tmp_path):
    import spacy

    from spacy_mstparse.calibration import calibrate

    model = tmp_path / "model"
    shutil.copytree(trained_pipeline, model)
    result = calibrate(model, sample_dev, gold_tags=True)
    t, lt = result["head"]["temperature"], result["label"]["temperature"]
    assert t > 0 and t != 1.0 and lt > 0 and lt != 1.0
    assert result["head"]["after"]["words"] == result["head"]["before"]["words"] > 100
    assert 0 < result["label"]["after"]["words"] < result["head"]["after"]["words"]
    for part in ("head", "label"):  # fitted on these words: better than T = 1
        assert result[part]["after"]["ece"] < result[part]["before"]["ece"]
    cfg = json.loads((model / "mst_parser" / "cfg").read_text())
    assert cfg["temperature"] == pytest.approx(t)
    assert cfg["label_temperature"] == pytest.approx(lt)
    assert cfg["calibration"]["label"]["ece"] == pytest.approx(result["label"]["after"]["ece"])
    nlp = spacy.load(model, config=PROB_CONFIG)
    assert nlp.get_pipe("mst_parser").cfg["temperature"] == pytest.approx(t)
    assert nlp.get_pipe("mst_parser").cfg["label_temperature"] == pytest.approx(lt)
    # the probabilities use it
    from spacy.tokens import Doc

    doc = Doc(nlp.vocab, words=["I", "like", "green", "tea"], pos=["PRON", "VERB", "ADJ", "NOUN"],
              tags=["PRP", "VBP", "JJ", "NN"])
    parser = nlp.get_pipe("mst_parser")
    doc = parser(doc)
    arc = parser.graph.scores(parser.encoder.encode(doc, [(0, 4)])[0]).arc
    expected = arc_marginals(arc, t, True).probs
    assert doc[3]._.head_prob == pytest.approx(expected[doc[3].head.i + 1, 4])


def test_calibrate_and_explain_cli(trained_pipeline, sample_dev, tmp_path):
    from typer.testing import CliRunner

    from spacy_mstparse.cli import app

    model = tmp_path / "model"
    shutil.copytree(trained_pipeline, model)
    runner = CliRunner()
    result = runner.invoke(app, ["calibrate", str(model), str(sample_dev), "--gold-tags"])
    assert result.exit_code == 0, result.output
    assert "ECE" in result.output and ">= 0.9: coverage" in result.output
    assert "dep_prob" in result.output
    assert "temperature" in json.loads((model / "mst_parser" / "cfg").read_text())
    bad = runner.invoke(app, ["calibrate", str(model / "nothing"), str(sample_dev)])
    assert bad.exit_code == 1 and "Traceback" not in bad.output
    result = runner.invoke(app, ["explain", str(model), str(sample_dev), "--sent", "2",
                                 "--word", "2", "--gold-tags"])
    assert result.exit_code == 0, result.output
    assert "head" in result.output and "dir=" in result.output
    bad = runner.invoke(app, ["explain", str(model), str(sample_dev), "--sent", "100000",
                              "--word", "1"])
    assert bad.exit_code == 1 and "--sent must be" in bad.output


def test_second_order_probabilities_are_exact(train_examples_o2):
    """An order-2 Eisner pipe: head_prob is the second-order marginal of its
    arc and sibling scores, and the probabilities of all the trees of a
    5-word sentence (exp(arc + sibling score / T - log Z)) sum to 1."""
    from spacy.tokens import Doc

    from spacy_mstparse.decoders import second_order_marginals

    nlp, parser = train_examples_o2
    parser.cfg.update(probabilities=True, n_best=1000, temperature=0.8)
    try:
        words = ["The", "dog", "saw", "a", "cat"]
        doc = Doc(nlp.vocab, words=words, pos=["DET", "NOUN", "VERB", "DET", "NOUN"],
                  tags=["DT", "NN", "VBD", "DT", "NN"])
        doc = parser(doc)
        (parses,) = doc._.parses
        trees, single, proj, _ = enumerate_trees(len(words))
        sentence = parser.encoder.encode(doc, [(0, 5)])[0]
        kept = parser.graph.arc_filter.allowed(sentence)[trees[:, 1:], np.arange(1, 6)].all(axis=1)
        assert len(parses) == int((single & proj & kept).sum())
        assert sum(p["prob"] for p in parses) == pytest.approx(1.0, abs=1e-6)
        factors = parser.graph.scores(sentence)
        arc, sib = factors.arc, factors.sib
        assert sib is not None and np.abs(sib).sum() > 0
        expected, _ = second_order_marginals(arc, sib, 0.8)
        for c, token in enumerate(doc, 1):
            h = 0 if token.head.i == token.i else token.head.i + 1
            assert token._.head_prob == pytest.approx(expected[h, c])
        first_order = arc_marginals(arc, 0.8, True).probs
        assert not np.allclose(first_order, expected, atol=1e-3)
    finally:
        parser.cfg.update(probabilities=False, n_best=1, temperature=1.0)


@pytest.fixture(scope="module")
def train_examples_o2():
    import spacy
    from test_mst_parser import SAMPLE, examples_from, new_parser, train

    examples = examples_from(SAMPLE / "train.conllu", spacy.blank("en"), 100)
    nlp, parser, examples = new_parser({"order": 2}, examples)
    train(parser, examples, 2)
    return nlp, parser


def test_third_order_probabilities_are_those_of_the_sibling_model():
    """An order-3 pipe (grandparent factors): head_prob is the second-order
    marginal of its arc and sibling scores (the grandparent factors are left
    out of the distribution), and k-best trees carry probabilities."""
    import spacy
    from spacy.tokens import Doc
    from test_mst_parser import SAMPLE, examples_from, new_parser, train

    from spacy_mstparse.decoders import second_order_marginals

    examples = examples_from(SAMPLE / "train.conllu", spacy.blank("en"), 60)
    nlp, parser, examples = new_parser({"order": 3}, examples)
    train(parser, examples, 1)
    parser.cfg.update(probabilities=True, n_best=3, temperature=0.7)
    words = ["The", "dog", "saw", "a", "cat"]
    doc = Doc(nlp.vocab, words=words, pos=["DET", "NOUN", "VERB", "DET", "NOUN"],
              tags=["DT", "NN", "VBD", "DT", "NN"])
    doc = parser(doc)
    factors = parser.graph.scores(parser.encoder.encode(doc, [(0, 5)])[0])
    assert factors.order == 3
    expected, _ = second_order_marginals(factors.arc, factors.sib, 0.7)
    for c, token in enumerate(doc, 1):
        h = 0 if token.head.i == token.i else token.head.i + 1
        assert token._.head_prob == pytest.approx(expected[h, c])
    (parses,) = doc._.parses
    assert 1 <= len(parses) <= 3
    assert all(0.0 < p["prob"] <= 1.0 for p in parses)


def test_evaluation_after_updates_calibrates(trained_pipeline, sample_dev):
    """What spaCy's training loop does: evaluating on dev after updates fits
    the head and label temperatures there (and reports the errors); a loaded
    pipeline evaluated without updates keeps its temperatures."""
    import spacy
    from spacy.training import Example

    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.corpus.readers import gold_annotated_doc

    nlp = spacy.load(trained_pipeline)
    parser = nlp.get_pipe("mst_parser")
    gold = list(read_conllu(sample_dev, nlp.vocab))[:80]
    examples = [Example(gold_annotated_doc(Example(g.copy(), g)), g) for g in gold]
    scores = nlp.evaluate(examples)
    assert parser.cfg["temperature"] == 1.0 and parser.cfg["label_temperature"] == 1.0
    assert scores["head_ece"] == scores["head_ece_t1"] > 0.05   # uncalibrated
    parser.update(examples[:10])
    scores = nlp.evaluate(examples)
    t, lt = parser.cfg["temperature"], parser.cfg["label_temperature"]
    assert t != 1.0 and lt != 1.0
    assert scores["head_ece"] < scores["head_ece_t1"] and scores["dep_ece"] < scores["dep_ece_t1"]
    assert parser.cfg["calibration"]["head"]["ece"] == pytest.approx(scores["head_ece"])
    assert parser.cfg["calibration"]["label"]["temperature"] == lt
    again = nlp.evaluate(examples)
    assert parser.cfg["temperature"] == t and again["head_ece"] == pytest.approx(scores["head_ece"])


def test_fitted_temperatures_follow_the_scale_of_the_weights(trained_pipeline, sample_dev):
    """p(tree) and p(labels | tree) depend on score / T only, so weights
    scaled by c are fitted c times the temperature, also far above what a
    model trained on a small sample needs (label temperatures of 13-17 are
    common on full treebanks)."""
    import spacy
    from spacy.training import Example

    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.corpus.readers import gold_annotated_doc

    nlp = spacy.load(trained_pipeline)
    parser = nlp.get_pipe("mst_parser")
    gold = list(read_conllu(sample_dev, nlp.vocab))[:80]
    examples = [Example(gold_annotated_doc(Example(g.copy(), g)), g) for g in gold]
    parser.calibrate(examples)
    t, lt = parser.cfg["temperature"], parser.cfg["label_temperature"]
    arc, label = parser.prediction_weights()
    scale = 60.0 / lt
    arc *= 40.0 / t
    label *= scale
    parser.calibrate(examples)
    assert parser.cfg["temperature"] == pytest.approx(40.0, rel=0.05)
    assert parser.cfg["label_temperature"] == pytest.approx(60.0, rel=0.05)


def test_before_to_disk_callback_calibrates_an_updated_parser(sample_train, sample_dev, tmp_path):
    """The shipped configs' [training.before_to_disk]: the temperatures of a
    parser updated since its last evaluation (the final model-last) are
    fitted on the config's dev corpus (no full evaluation); a calibrated
    one is left."""
    from spacy.training.initialize import init_nlp
    from spacy.util import load_config, resolve_dot_names

    from spacy_mstparse.corpus.convert import convert
    from spacy_mstparse.registry import make_calibrate_before_to_disk

    for name, path in (("train", sample_train), ("dev", sample_dev)):
        convert(path, tmp_path / f"{name}.spacy", n_sents=1, vocab_lang="en")
    config = load_config(REPO / "configs" / "mst_parser.cfg", overrides={
        "paths.train": str(tmp_path / "train.spacy"), "paths.dev": str(tmp_path / "dev.spacy"),
        "components.mst_parser.features.n_buckets": 2**16})
    assert config["training"]["before_to_disk"]["@callbacks"] == \
        "spacy_mstparse.calibrate_before_to_disk.v1"
    nlp = init_nlp(config)
    parser = nlp.get_pipe("mst_parser")
    # zero weights after initialize: nothing to fit or report (spaCy's evaluation
    # at step 0: every distribution uniform)
    dev, = resolve_dot_names(nlp.config.interpolate(), ["corpora.dev"])
    assert parser.calibrated
    at_zero = nlp.evaluate(list(dev(nlp)))
    assert "dep_uas" in at_zero and "head_ece" not in at_zero
    assert parser.cfg["temperature"] == 1.0 and parser.cfg["calibration"] is None
    corpus, = resolve_dot_names(nlp.config.interpolate(), ["corpora.train"])
    parser.update(list(corpus(nlp))[:100])
    assert not parser.calibrated and parser.cfg["temperature"] == 1.0

    def no_evaluation(*args, **kwargs):
        raise AssertionError("the callback fits without a full evaluation")

    nlp.evaluate = no_evaluation
    assert make_calibrate_before_to_disk()(nlp) is nlp
    t = parser.cfg["temperature"]
    assert parser.calibrated and t != 1.0 and parser.cfg["calibration"]["head"]["words"] > 100
    make_calibrate_before_to_disk()(nlp)   # nothing to do: no update since
    assert parser.cfg["temperature"] == t


def test_aligned_parse_reads_the_reference_like_spacy(sample_dev):
    """Calibration's gold trees (``aligned_parse``) are spaCy's
    ``get_aligned_parse(projectivize=False)``: read from the reference's
    arrays when the words are the same (also with heads missing), through
    the alignment when the tokenization differs."""
    import spacy
    from spacy.tokens import Doc
    from spacy.training import Example

    from spacy_mstparse.components.mst_calibration import aligned_parse
    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.corpus.readers import gold_annotated_doc

    nlp = spacy.blank("xx")
    gold = list(read_conllu(sample_dev, nlp.vocab))[:40]
    # heads and labels missing on every third word of the first doc
    words = [t.text for t in gold[0]]
    heads = [t.head.i if i % 3 else None for i, t in enumerate(gold[0])]
    deps = [t.dep_ if i % 3 else None for i, t in enumerate(gold[0])]
    gold.append(Doc(nlp.vocab, words=words, heads=heads, deps=deps))
    examples = [Example(gold_annotated_doc(Example(g.copy(), g)), g) for g in gold]
    # a doc whose first two words are one token: spaCy's alignment decides
    merged = Doc(nlp.vocab, words=[words[0] + words[1]] + words[2:])
    examples.append(Example(merged, gold[0]))
    for eg in examples:
        got, want = aligned_parse(eg), eg.get_aligned_parse(projectivize=False)
        assert list(got[0]) == list(want[0]) and list(got[1]) == list(want[1])
    assert None in list(aligned_parse(examples[-1])[0])     # unaligned: unknown
    assert examples[-2].reference.has_annotation("DEP")
    assert "" in aligned_parse(examples[-2])[1]              # missing labels kept missing


def test_the_fit_leaves_out_long_sentences_while_enough_words_remain(trained_pipeline,
                                                                       sample_dev, monkeypatch):
    """A fit in training (the parser's ``calibrate``) scores only the
    sentences of at most MAX_FIT_LENGTH words when those hold at least half
    the words (the cost of scores and marginals grows with the cube of the
    length), else all; the temperatures are fitted and the errors measured
    on the same words."""
    import spacy
    from spacy.training import Example

    from spacy_mstparse.components import mst_calibration
    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.corpus.readers import gold_annotated_doc

    nlp = spacy.load(trained_pipeline)
    parser = nlp.get_pipe("mst_parser")
    gold = list(read_conllu(sample_dev, nlp.vocab))[:80]
    assert all(len(list(g.sents)) == 1 for g in gold)
    examples = [Example(gold_annotated_doc(Example(g.copy(), g)), g) for g in gold]
    lengths = sorted(len(g) for g in gold)
    total = sum(lengths)
    assert total < mst_calibration.MAX_FIT_WORDS
    # the shortest limit whose sentences hold at least 60% of the words
    limit = next(n for n in lengths if sum(m for m in lengths if m <= n) >= 0.6 * total)
    assert limit < lengths[-1]
    for max_length, fitted_words in ((limit, sum(m for m in lengths if m <= limit)),
                                     (lengths[0] - 1, total)):
        monkeypatch.setattr(mst_calibration, "MAX_FIT_LENGTH", max_length)
        parser.calibrate(examples)
        calibration = parser.cfg["calibration"]
        assert calibration["fitted_on_words"] == fitted_words
        assert calibration["head"]["words"] == fitted_words
