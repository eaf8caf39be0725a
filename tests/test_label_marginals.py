"""The labeler's label marginals (``labeler.chain_marginals``) against
enumeration of every labelling of small trees: p(labels | tree) proportional
to exp(sequence_score / T), summed per word and label."""
import itertools

import numpy
import pytest
from test_labeler import encode, nlp, random_tree  # noqa: F401  (nlp: fixture)

from spacy_mstparse.labeler.arc_labeler import CHAIN, CONTEXT, RESTRICT, VERSION_FLAGS, ArcLabeler
from spacy_mstparse.labeler.chain_marginals import label_marginals, label_marginals_at


def enumerated_marginals(labeler, s, heads, weights, root_label, temperature):
    n, L = len(heads) - 1, labeler.n_labels
    scores, labellings = [], []
    for combo in itertools.product(range(L), repeat=n):
        labels = numpy.array([-1, *combo], dtype="int32")
        scores.append(labeler.sequence_score(s, heads, labels, weights, root_label))
        labellings.append(labels)
    scores = numpy.array(scores) / temperature
    p = numpy.exp(scores - scores[numpy.isfinite(scores)].max())
    p /= p.sum()
    out = numpy.zeros((n + 1, L))
    for prob, labels in zip(p, labellings):
        out[numpy.arange(1, n + 1), labels[1:]] += prob
    return out


@pytest.mark.parametrize("version,flags", [(1, None), (2, CHAIN), (2, CHAIN | RESTRICT),
                                           (2, CONTEXT | RESTRICT), (2, VERSION_FLAGS[2])])
def test_marginals_equal_enumeration(nlp, version, flags):
    rng = numpy.random.RandomState(len(str(flags)) + version)
    tags = ["DET", "NOUN", "VERB", "ADJ", "ADP", "PRON"]
    n_labels = 3
    for trial in range(12):
        n = rng.randint(1, 6)
        s = encode(nlp, [f"w{i}" for i in range(n)], list(rng.choice(tags, n)))
        heads = random_tree(rng, n)
        labeler = ArcLabeler(2**6, n_labels, False, version, -1 if flags is None else flags)
        if flags and flags & RESTRICT:
            gold = numpy.array([-1] + list(rng.randint(n_labels, size=n)), dtype="int32")
            labeler.fit_restrictions([(s, heads, gold)])
        weights = rng.normal(size=labeler.n_weights).astype("float32")
        root_label = 0 if trial % 2 else -1
        temperature = [1.0, 0.5, 3.0][trial % 3]
        got = label_marginals(labeler, s, heads, weights, root_label, temperature)
        want = enumerated_marginals(labeler, s, heads, weights, root_label, temperature)
        numpy.testing.assert_allclose(got, want, atol=1e-9)
        numpy.testing.assert_allclose(got[1:].sum(axis=1), 1.0)


def test_low_temperature_concentrates_on_the_viterbi_labels(nlp):
    rng = numpy.random.RandomState(3)
    s = encode(nlp, ["a", "b", "c", "d", "e"], ["DET", "NOUN", "VERB", "ADV", "ADJ"])
    heads = numpy.array([-1, 2, 3, 0, 3, 4], dtype="int32")
    labeler = ArcLabeler(2**6, 4, False, 2)
    weights = rng.normal(size=labeler.n_weights).astype("float32")
    best = labeler.predict(s, heads, weights, 0)
    cold = label_marginals(labeler, s, heads, weights, 0, 1e-3)
    assert (cold[numpy.arange(1, 6), best[1:]] > 0.999).all()
    with pytest.raises(ValueError, match="temperature"):
        label_marginals(labeler, s, heads, weights, 0, 0.0)


def test_several_temperatures_at_once_equal_one_at_a_time(nlp):
    # long sentences, many labels, restricted and chained: the temperatures
    # the calibration searches, from very cold to hot
    rng = numpy.random.RandomState(11)
    tags = ["DET", "NOUN", "VERB", "ADJ", "ADP", "PRON", "ADV"]
    labeler = ArcLabeler(2**10, 12, False, 2)
    temperatures = [0.02, 0.3, 1.0, 20.0]
    for trial in range(4):
        n = rng.randint(20, 60)
        s = encode(nlp, [f"w{i}" for i in range(n)], list(rng.choice(tags, n)))
        heads = random_tree(rng, n)
        if trial == 0:
            gold = numpy.array([-1] + list(rng.randint(12, size=n)), dtype="int32")
            labeler.fit_restrictions([(s, heads, gold)])
        weights = (rng.normal(size=labeler.n_weights) * 5).astype("float32")
        together = label_marginals_at(labeler, s, heads, weights, 0, temperatures)
        assert len(together) == len(temperatures)
        for t, marg in zip(temperatures, together):
            alone = label_marginals(labeler, s, heads, weights, 0, t)
            numpy.testing.assert_array_equal(marg, alone)
            assert numpy.isfinite(marg).all()
            numpy.testing.assert_allclose(marg[1:].sum(axis=1), 1.0)
        # colder is more certain of the Viterbi labelling
        best = labeler.predict(s, heads, weights, 0)[1:]
        words = numpy.arange(1, n + 1)
        assert together[0][words, best].mean() > together[-1][words, best].mean()
    with pytest.raises(ValueError, match="temperature"):
        label_marginals_at(labeler, s, heads, weights, 0, [1.0, -1.0])
