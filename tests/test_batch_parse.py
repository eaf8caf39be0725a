"""The fast prediction path: 8-bit quantized arc weights (``features.weights``)
against the float weights they stand for, the C batch parser
(``graph.batch``, ``GraphModel.parse_batch``) against the Python path
sentence by sentence, one thread against two, and the component's
``n_threads`` / ``quantize_weights`` settings, also given at load time."""
import threading

import numpy as np
import pytest
import spacy
from spacy.training import Example

from spacy_mstparse.corpus.conll import read_conllu
from spacy_mstparse.corpus.readers import gold_annotated_doc
from spacy_mstparse.features.config import FeatureConfig
from spacy_mstparse.features.doc_arrays import SentenceEncoder
from spacy_mstparse.features.weights import QuantizedWeights, quantize
from spacy_mstparse.graph import GraphModel
from spacy_mstparse.components.mst_parser import MSTParser
from spacy_mstparse.graph.analysis import analyse

N_BUCKETS = 2**14


@pytest.fixture(scope="module")
def sentences(sample_dev):
    nlp = spacy.blank("en")
    encoder = SentenceEncoder(nlp.vocab, "both", False)
    out = []
    for ref in read_conllu(sample_dev, nlp.vocab):
        doc = gold_annotated_doc(Example(ref.copy(), ref))
        out.append(encoder.encode(doc, [(0, len(doc))])[0])
        if len(out) == 40:
            break
    return out


def random_model(order, decoder, quantized=False, seed=0):
    rng = np.random.default_rng(seed)
    labels = ["root", "nsubj", "obj", "det", "punct"]
    model = GraphModel(FeatureConfig("both", False, N_BUCKETS, True), order=order,
                       decoder=decoder, labels=labels, root_label="root", label_buckets=2**8,
                       quantize_weights=quantized)
    # sparse weights, as a trained table: most buckets 0
    arc = rng.normal(size=N_BUCKETS).astype("float32") * (rng.random(N_BUCKETS) < 0.3)
    model.set_weights(arc, rng.normal(size=model.n_label_weights).astype("float32"))
    return model


def test_quantize_is_exact_for_few_distinct_values():
    rng = np.random.default_rng(1)
    values = rng.normal(size=200).astype("float32")
    w = np.where(rng.random(5000) < 0.5, 0.0, values[rng.integers(0, 200, 5000)]).astype("float32")
    q = quantize(w)
    assert isinstance(q, QuantizedWeights) and len(q) == w.shape[0]
    assert q.codes.dtype == np.uint8 and q.codebook.shape == (256,) and q.codebook[0] == 0
    np.testing.assert_array_equal(q.dequantize(), w)


def test_quantize_keeps_zeros_signs_and_a_bounded_relative_error():
    rng = np.random.default_rng(2)
    w = (rng.standard_t(3, size=100_000) * 1e-3 * (rng.random(100_000) < 0.4)).astype("float32")
    q = quantize(w)
    d = q.dequantize()
    np.testing.assert_array_equal(d == 0, w == 0)
    np.testing.assert_array_equal(np.sign(d), np.sign(w))
    magnitude = np.abs(w[w != 0])
    lo, hi = np.percentile(magnitude, 0.5), magnitude.max()
    # 127 geometric levels from lo to hi: within half a step (in log scale)
    half_step = np.exp(np.log(hi / lo) / 126 / 2)
    big = np.abs(w) >= lo
    ratio = d[big] / w[big]
    assert ratio.min() >= 1 / half_step - 1e-6 and ratio.max() <= half_step + 1e-6
    assert np.isclose(np.abs(d).max(), hi)          # the largest weight is exact
    small = (w != 0) & ~big
    np.testing.assert_allclose(np.abs(d[small]), lo, rtol=1e-6)


def numpy_codes(w, levels=127):
    """The codes ``quantize`` documents, computed with numpy on the whole table."""
    distinct = np.unique(w)
    distinct = distinct[distinct != 0]
    if len(distinct) <= (255 if levels == 127 else 2 * levels):
        codes = np.searchsorted(distinct, w) + 1
    else:
        magnitude = np.abs(w[w != 0]).astype("float64")
        lo, hi = np.percentile(magnitude, 0.5), magnitude.max()
        level = np.rint(np.log(np.maximum(np.abs(w).astype("float64"), lo) / lo)
                        / (np.log(hi / lo) / (levels - 1)))
        level = np.clip(level, 0, levels - 1)
        codes = np.where(w > 0, 1 + level, 1 + levels + level)
    return np.where(w == 0, 0, codes).astype("uint8")


@pytest.mark.parametrize("levels", [127, 20])
@pytest.mark.parametrize("n_values", [50, 255, 256, None])
def test_quantize_gives_the_documented_codes_on_a_large_table(levels, n_values):
    # a table of millions of entries (as the parser's): few distinct values
    # (exact codes while they fit), or continuous ones (geometric levels)
    rng = np.random.default_rng(3)
    n = 3_000_000 + 12345
    if n_values is None:
        values = rng.standard_t(3, size=n).astype("float32")
    else:
        values = rng.normal(size=n_values).astype("float32")[rng.integers(0, n_values, n)]
    w = np.where(rng.random(n) < 0.5, 0.0, values).astype("float32")
    w[-3:] = w[:3]   # the same values at both ends of the table
    q = quantize(w, levels)
    codes = np.asarray(q.codes)
    np.testing.assert_array_equal(codes, numpy_codes(w, levels))
    np.testing.assert_array_equal(codes[-3:], codes[:3])
    if n_values is not None and n_values <= (255 if levels == 127 else 2 * levels):
        np.testing.assert_array_equal(q.dequantize(), w)


def test_quantize_of_an_empty_or_all_zero_table():
    for w in (np.zeros(0, dtype="float32"), np.zeros(1000, dtype="float32")):
        q = quantize(w)
        assert len(q) == len(w) and not np.asarray(q.codes).any()


@pytest.mark.parametrize("order", [1, 2])
def test_scores_with_codes_equal_scores_with_the_weights_they_stand_for(sentences, order):
    model = random_model(order, "eisner")
    q = quantize(model.arc_weights)
    dense = q.dequantize()
    for s in sentences[:10]:
        fq, fd = model.scores(s, q), model.scores(s, dense)
        np.testing.assert_array_equal(fq.arc, fd.arc)
        if order == 2:
            np.testing.assert_array_equal(fq.sib, fd.sib)


@pytest.mark.parametrize("order,decoder", [(1, "eisner"), (1, "chu_liu_edmonds"),
                                           (2, "eisner"), (2, "chu_liu_edmonds"),
                                           (3, "eisner")])
@pytest.mark.parametrize("quantized", [False, True])
def test_batch_parse_equals_the_python_path_on_any_number_of_threads(sentences, order, decoder,
                                                                     quantized):
    model = random_model(order, decoder, quantized)
    expected = [analyse(model, s) for s in sentences]
    for n_threads in (1, 2, 3):
        got = model.parse_batch(sentences, n_threads=n_threads)
        assert len(got) == len(sentences)
        for (heads, labels), parse in zip(got, expected):
            np.testing.assert_array_equal(heads, parse.heads)
            np.testing.assert_array_equal(labels, parse.labels)


@pytest.mark.parametrize("order,decoder", [(1, "eisner"), (2, "eisner")])
def test_python_threads_sharing_a_batch_parse_each_sentence_once(sentences, order, decoder):
    """Several Python threads running one ``batch_parse`` job (as the pipe's
    worker and caller do) give the parses of the Python path."""
    model = random_model(order, decoder, quantized=True)
    expected = [analyse(model, s) for s in sentences]
    for threads in ((1, 1), (2, 1), (1, 1, 1)):
        job = model.batch_parse(sentences * 3)
        workers = [threading.Thread(target=job.run, args=(n,)) for n in threads]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        got = job.results()
        assert len(got) == 3 * len(sentences)
        for (heads, labels), parse in zip(got, expected * 3):
            np.testing.assert_array_equal(heads, parse.heads)
            np.testing.assert_array_equal(labels, parse.labels)
    with pytest.raises(RuntimeError, match="run"):
        model.batch_parse(sentences).results()


def test_quantized_prediction_reads_the_codes(sentences):
    """With quantize_weights the model's scores are those of the dequantized
    weights (not of the float ones)."""
    model = random_model(1, "eisner", quantized=True)
    dense = quantize(model.arc_weights).dequantize()
    s = sentences[0]
    np.testing.assert_array_equal(model.scores(s).arc, model.scores(s, dense).arc)
    assert not np.array_equal(model.scores(s).arc, model.scores(s, model.arc_weights).arc)


def test_batch_parse_rejects_bad_input(sentences):
    model = random_model(1, "eisner")
    with pytest.raises(ValueError, match="n_threads"):
        model.parse_batch(sentences, n_threads=0)
    with pytest.raises(TypeError, match="Sentence"):
        model.parse_batch(["not a sentence"])


def parses(nlp, docs):
    return [[(t.head.i, t.dep_) for t in doc] for doc in nlp.pipe(docs)]


def dev_docs(vocab, sample_dev, n=30):
    docs = []
    for ref in read_conllu(sample_dev, vocab):
        docs.append(gold_annotated_doc(Example(ref.copy(), ref)))
        if len(docs) == n:
            break
    return docs


def test_n_threads_and_quantize_weights_set_at_load_time(trained_pipeline, sample_dev,
                                                         monkeypatch):
    nlp1 = spacy.load(trained_pipeline)
    docs = dev_docs(nlp1.vocab, sample_dev)
    one = parses(nlp1, docs)
    nlp2 = spacy.load(trained_pipeline,
                      config={"components": {"mst_parser": {"n_threads": 2}}})
    parser = nlp2.get_pipe("mst_parser")
    assert parser.cfg["n_threads"] == 2
    calls = []
    original = MSTParser.parse_prepared

    def recording(self, prepared, n_threads):
        calls.append(threading.get_ident())
        return original(self, prepared, n_threads)

    monkeypatch.setattr(MSTParser, "parse_prepared", recording)
    assert parses(nlp2, docs) == one
    assert len(set(calls)) == 2   # a worker thread and the caller's parse the batches
    nlp3 = spacy.load(trained_pipeline,
                      config={"components": {"mst_parser": {"quantize_weights": True}}})
    parser3 = nlp3.get_pipe("mst_parser")
    assert parser3.cfg["quantize_weights"]
    quantized = parses(nlp3, docs)
    assert isinstance(parser3.graph.prediction_arc_weights, QuantizedWeights)
    # the same trees as the Python path on the quantized scores
    encoder = parser3.encoder
    for doc, got in zip(docs, quantized):
        sentence = encoder.encode(doc, [(0, len(doc))])[0]
        heads = analyse(parser3.graph, sentence).heads
        assert [h for h, _ in got] == [i if h == 0 else h - 1 for i, h in enumerate(heads[1:])]


def test_n_threads_must_be_positive():
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match="n_threads"):
        nlp.add_pipe("mst_parser", config={"n_threads": 0})


# -- arc pruning ------------------------------------------------------------------------
def test_keep_best_heads_against_brute_force():
    from spacy_mstparse.decoders.pruning import prune_heads

    rng = np.random.default_rng(3)
    for n in range(1, 9):
        for k in (1, 2, 3, 8):
            scores = rng.integers(0, 4, size=(n + 1, n + 1)).astype("float32")  # ties
            mask = prune_heads(scores, k)
            for c in range(1, n + 1):
                heads = [h for h in range(n + 1) if h != c]
                column = sorted((scores[h, c] for h in heads), reverse=True)
                threshold = column[min(k, n) - 1]
                expected = {h for h in heads if scores[h, c] >= threshold} | {c - 1}
                assert set(np.flatnonzero(mask[:, c])) == expected
            assert not mask[:, 0].any() and not mask.diagonal().any()


def test_pruned_scores_always_hold_a_projective_tree():
    from spacy_mstparse.decoders import eisner, is_valid_tree
    from spacy_mstparse.decoders.pruning import prune

    rng = np.random.default_rng(4)
    for n in range(1, 12):
        scores = rng.normal(size=(n + 1, n + 1)).astype("float32")
        heads = eisner(prune(scores.copy(), 1))
        assert is_valid_tree(heads)


def test_pruned_arc_scores_keep_the_full_scores_of_kept_arcs(sentences):
    from spacy_mstparse.decoders.pruning import prune_heads

    model = random_model(1, "eisner")
    first = model.first_order
    for s in sentences[:10]:
        full = first.score(s, model.arc_weights)
        first_pass = first.score(s, model.arc_weights, first_pass=True)
        pruned = first.score(s, model.arc_weights, keep=3)
        kept = prune_heads(first_pass, 3)
        np.testing.assert_array_equal(pruned[kept], full[kept])
        inner = ~kept & ~np.eye(s.n + 1, dtype=bool)
        inner[:, 0] = False
        assert np.all(pruned[inner] == -np.inf)


@pytest.mark.parametrize("order", [1, 2, 3])
def test_batch_parse_with_pruning_equals_the_python_path(sentences, order):
    model = random_model(order, "eisner", quantized=True)
    model.keep_heads = 3
    for n_threads in (1, 2):
        for (heads, labels), s in zip(model.parse_batch(sentences, n_threads), sentences):
            parse = analyse(model, s)
            np.testing.assert_array_equal(heads, parse.heads)
            np.testing.assert_array_equal(labels, parse.labels)


def test_two_threads_overlap_batches_with_the_same_annotations(trained_pipeline, sample_dev):
    """n_threads = 2 in ``pipe``: a worker parses a batch while the caller
    prepares and annotates the others; docs that are not plain-parsed (fixed
    heads) and empty docs in between change nothing."""
    nlp = spacy.load(trained_pipeline)
    docs = dev_docs(nlp.vocab, sample_dev, n=23)
    docs.insert(5, nlp.make_doc(""))

    def fresh():
        copies = [d.copy() for d in docs]
        copies[9][1]._.fixed_head = copies[9][0]
        return copies

    parser = nlp.get_pipe("mst_parser")
    expected = [[(t.head.i, t.dep_) for t in doc] for doc in parser.pipe(fresh(), batch_size=4)]
    assert expected[9][1][0] == 0 and expected[5] == []   # the fixed head held
    parser.cfg["n_threads"] = 2
    for batch_size in (1, 4, 100):
        got = [[(t.head.i, t.dep_) for t in doc] for doc in parser.pipe(fresh(), batch_size=batch_size)]
        assert got == expected
