"""benchmarks/tag_temperatures.py: the temperature of every word from its
tag's, and per-tag temperatures fitted on trees sampled with known ones
recover them."""
import numpy as np

from benchmarks.tag_temperatures import fit_tag_temperatures, word_temperatures
from spacy_mstparse.graph.temperature import fit_temperature, gold_head_log_probs
from tests.test_decoders import enumerate_trees


def test_word_temperatures_from_the_tag_table():
    tags = ["NOUN", "VERB", "NOUN", "PUNCT", "X"]
    table = {"NOUN": 0.5, "VERB": 2.0, "PUNCT": 0.25}
    assert word_temperatures(tags, 1.5, table).tolist() == [1.0, 0.5, 2.0, 0.5, 0.25, 1.5]
    assert word_temperatures(tags, 1.5, None) == 1.5


def test_tag_temperatures_recover_the_sampling_temperatures():
    """Trees sampled with T = 0.5 for the words tagged A and T = 3 for those
    tagged B: the fitted per-tag temperatures land near them, and the
    likelihood beats the best single temperature."""
    rs = np.random.RandomState(2)
    n = 4
    trees, single, proj, arcs = enumerate_trees(n)
    keep = single & proj
    trees, arcs = trees[keep], arcs[keep]
    true = {"A": 0.5, "B": 3.0}
    items, tags = [], []
    for _ in range(300):
        arc = (rs.randn(n + 1, n + 1) * 2).astype(np.float32)
        sent = [("A", "B")[i] for i in rs.randint(0, 2, size=n)]
        t = word_temperatures(sent, 1.0, true)
        values = (arc.astype(np.float64) / t[None, :]).ravel()[arcs].sum(axis=1)
        p = np.exp(values - values.max())
        gold = trees[rs.choice(len(trees), p=p / p.sum())].astype(np.int32)
        gold[0] = -1
        items.append((arc, gold))
        tags.append(sent)
    single_t, single_ll = fit_temperature(items, projective=True)
    table = fit_tag_temperatures(items, tags, True, single_t, min_words=10)
    assert 0.3 < table["A"] < 0.8 and 2.0 < table["B"] < 4.5
    total, count = gold_head_log_probs(
        items, [word_temperatures(s, single_t, table) for s in tags], True)
    assert total / count > single_ll
