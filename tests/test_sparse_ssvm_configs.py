"""configs/mst_parser_sparse.cfg (and the sparseptron in its place) and
configs/mst_parser_ssvm.cfg train through spaCy's own loop (spacy train) on
the bundled sample."""
from pathlib import Path

import numpy as np
import pytest
import spacy
from spacy.training.initialize import init_nlp
from spacy.training.loop import train

from spacy_mstparse.corpus.convert import convert

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "assets" / "en_ewt_sample"


@pytest.fixture(scope="module")
def docbins(tmp_path_factory):
    out = tmp_path_factory.mktemp("corpus")
    convert(SAMPLE / "train.conllu", out / "train.spacy", n_sents=1, vocab_lang="en")
    convert(SAMPLE / "dev.conllu", out / "dev.spacy", n_sents=10, vocab_lang="en")
    return out


def trained(name, docbins, tmp_path, **overrides):
    config = spacy.util.load_config(ROOT / "configs" / name, overrides={
        "paths.train": str(docbins / "train.spacy"), "paths.dev": str(docbins / "dev.spacy"),
        "corpora.train.limit": 300, **overrides})
    nlp = init_nlp(config)
    nlp, _ = train(nlp, tmp_path, stdout=open("/dev/null", "w"))
    dev = list(spacy.registry.resolve(config.interpolate()["corpora"])["dev"](nlp))
    return nlp, dev


# The sparseptron as the sparse config had it before the compaction settings.
SPARSEPTRON = {"components.mst_parser.learner.@mst_learners": "spacy_mstparse.Sparseptron.v1",
               "components.mst_parser.learner.B": 40, "components.mst_parser.learner.k": 5,
               "components.mst_parser.learner.sparse_epochs": 1,
               "components.mst_parser.learner.overlap": "refill",
               "components.mst_parser.learner.support": "gold",
               "components.mst_parser.arc_density": 1.0, "components.mst_parser.label_density": 1.0,
               "components.mst_parser.weight_levels": 127}


def test_sparseptron_trains_and_saves_only_kept_groups(docbins, tmp_path):
    nlp, dev = trained("mst_parser_sparse.cfg", docbins, tmp_path, **{
        "training.max_epochs": 2, **SPARSEPTRON})
    parser = nlp.get_pipe("mst_parser")
    assert parser.learner.debiasing
    kept = {g["id"] for g in parser.learner.groups() if g["kept"]}
    assert parser.learner.B == 40 and parser.learner.support == "gold" and parser.learner.k == 5
    assert parser.graph.first_order.direction_backoff  # v2 features
    assert 0 < len(kept) <= 40
    assert (tmp_path / "model-last" / "mst_parser" / "arc_weights.npz").exists()
    loaded = spacy.load(tmp_path / "model-last")
    arc = loaded.get_pipe("mst_parser").prediction_weights()[0]
    # Only buckets used by a kept group are non-zero (a bucket can be shared
    # by several groups: hash collisions).
    assert not np.any(arc[~parser.learner.kept_buckets()])
    for b in np.flatnonzero(arc)[::100]:
        assert set(parser.learner.bucket_groups(int(b))) & kept
    assert nlp.evaluate(dev)["dep_uas"] > 0.6


def test_sparse_config_saves_compacted_weights_and_few_strings(docbins, tmp_path):
    """The shipped sparse config: model-last predicts with and holds at most
    25% / 1% non-zero arc / label weights of at most 2 * 11 values, its
    strings.json only the labels; loaded, it parses the dev docs as the
    trained pipeline does."""
    import srsly

    nlp, dev = trained("mst_parser_sparse.cfg", docbins, tmp_path, **{"training.max_epochs": 2})
    parser = nlp.get_pipe("mst_parser")
    arc, label = parser.prediction_weights()
    assert 0 < np.count_nonzero(arc) <= 0.25 * arc.shape[0]
    assert 0 < np.count_nonzero(label) <= 0.01 * label.shape[0]
    assert np.unique(arc[arc != 0]).shape[0] <= 22
    saved = tmp_path / "model-last"
    assert set(srsly.read_json(saved / "vocab" / "strings.json")) == set(parser.labels)
    loaded = spacy.load(saved)
    assert np.array_equal(loaded.get_pipe("mst_parser").prediction_weights()[0], arc)
    docs = [eg.predicted for eg in dev]
    expected = [[(t.head.i, t.dep_) for t in doc] for doc in nlp.pipe(d.copy() for d in docs)]
    got = [[(t.head.i, t.dep_) for t in doc] for doc in loaded.pipe(d.copy() for d in docs)]
    assert got == expected


def test_ssvm_config_trains_with_its_cache(docbins, tmp_path):
    nlp, dev = trained("mst_parser_ssvm.cfg", docbins, tmp_path, **{"training.max_epochs": 4,
                       "components.mst_parser.learner.verbose": False})
    learner = nlp.get_pipe("mst_parser").learner
    assert learner.n_train == 300 and learner.cache_size == 20 and learner.exact_every == 3
    assert len(learner.history) == 4
    # the warm-start pass and two online passes (no exact primal, a gap
    # estimate), then a pass with w fixed: the exact primal; weak duality
    online = learner.history[:3]
    exact = [h for h in learner.history if h["exact"]]
    assert all(h["primal"] is None and h["online_gap"] >= 0.0 for h in online)
    assert online[0]["dual_after"] > 0.0 and exact == learner.history[3:]
    assert all(h["primal"] >= h["dual"] - 1e-9 for h in exact)
    assert all(0 < h["cached_trees"] <= 2 * 20 * 300 for h in learner.history)
    # keep_best: the model predicts with the decoded iterate of the lowest primal
    best = min(exact, key=lambda h: h["primal"])
    assert learner.best_iteration == best["iteration"] >= 1
    assert nlp.evaluate(dev)["dep_uas"] > 0.5
