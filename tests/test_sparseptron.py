"""Sparseptron (Smith & Martins 2013, Figure 3): feature groups, the budgeted
group shrink against a dense numpy reference, debiasing, sparse saving."""
import itertools
import math

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc

from spacy_mstparse.features import feature_groups as fg
from spacy_mstparse.features.doc_arrays import SentenceEncoder
from spacy_mstparse.features.first_order import FirstOrderFeatures
from spacy_mstparse.learners import WeightTable, sparse_weights
from spacy_mstparse.learners.sparseptron import Sparseptron

WORD_GROUPS = {"word", "prefix", "hw", "cw", "hx", "cx"}


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("en")


def encode(nlp, words, pos, tags, tag_columns="both", morphs=None, use_morph=False):
    doc = Doc(nlp.vocab, words=words, pos=pos, tags=tags, morphs=morphs)
    return SentenceEncoder(nlp.vocab, tag_columns, use_morph).encode(doc, [(0, len(doc))])[0]


WORDS = ["She", "reads", "long", "books", "at", "night", "."]
POS = ["PRON", "VERB", "ADJ", "NOUN", "ADP", "NOUN", "PUNCT"]
TAGS = ["PRP", "VBZ", "JJ", "NNS", "IN", "NN", "."]
HEADS = np.array([-1, 2, 0, 4, 2, 6, 2, 2], dtype="int32")


def per_group(ids, groups):
    return {int(g): sorted(ids[groups == g].tolist()) for g in np.unique(groups)}


def reads_words(gid):
    name = fg.group_name(gid).split("/")[0]
    return any(part in WORD_GROUPS or part.startswith(("h-word", "c-word", "h-prefix", "c-prefix"))
               for part in name.split("+"))


@pytest.mark.parametrize("use_morph,backoff", [(False, False), (True, False), (False, True)])
def test_grouped_ids_equal_tree_features(nlp, use_morph, backoff):
    morphs = ["Case=Nom", "Number=Sing", "", "Number=Plur", "", "Number=Sing", ""]
    s = encode(nlp, ["Wonderful"] + WORDS[1:], POS, TAGS, morphs=morphs, use_morph=use_morph)
    f = FirstOrderFeatures(2**20, 2, use_morph, backoff)
    rng = np.random.default_rng(0)
    for heads in [HEADS] + [np.r_[-1, rng.integers(0, 8, 7)].astype("int32") for _ in range(5)]:
        heads[1:][heads[1:] == np.arange(1, 8)] = 0
        ids, groups = fg.tree_features_grouped(f, s, heads)
        assert np.array_equal(ids, f.tree_features(s, heads))
        assert set(groups.tolist()) <= set(fg.group_ids(2, use_morph))
        # Every template of the configuration fires somewhere on a tree
        # (morph ones only with use_morph).
    if use_morph:
        assert {33, 34, 35} <= set(groups.tolist())
    else:
        assert not {33, 34, 35} & set(groups.tolist())


def test_changing_a_word_changes_only_the_word_groups(nlp):
    f = FirstOrderFeatures(2**22, 2, False)
    a = fg.tree_features_grouped(f, encode(nlp, WORDS, POS, TAGS), HEADS)
    words = list(WORDS)
    words[1] = "eats"  # the root verb, head of three words; short, no prefix
    b = fg.tree_features_grouped(f, encode(nlp, words, POS, TAGS), HEADS)
    ga, gb = per_group(*a), per_group(*b)
    assert ga.keys() == gb.keys()
    for g in ga:
        if reads_words(g) and "prefix" not in fg.group_name(g) and "hx" not in fg.group_name(g) \
                and "cx" not in fg.group_name(g):
            assert ga[g] != gb[g], fg.group_name(g)
        elif not reads_words(g):
            assert ga[g] == gb[g], fg.group_name(g)


@pytest.mark.parametrize("column", [0, 1])
def test_changing_a_tag_changes_only_that_columns_groups(nlp, column):
    f = FirstOrderFeatures(2**22, 2, False)
    a = fg.tree_features_grouped(f, encode(nlp, WORDS, POS, TAGS), HEADS)
    pos, tags = list(POS), list(TAGS)
    if column == 0:
        pos[3] = "PROPN"
    else:
        tags[3] = "NNP"
    b = fg.tree_features_grouped(f, encode(nlp, WORDS, pos, tags), HEADS)
    ga, gb = per_group(*a), per_group(*b)
    for g in ga:
        name = fg.group_name(g)
        if name.endswith(f"/tag{column + 1}"):
            assert ga[g] != gb[g], name
        else:
            assert ga[g] == gb[g], name


# ---------------------------------------------------------------- the learner

N_BUCKETS = 512
SIZES = [40, 30, 60, 8, 20, 50, 16, 32]   # buckets per synthetic group


def synthetic_learner(B, m, sparse_epochs, n_train, debias="MIRA", overlap="any", k=1):
    learner = Sparseptron(B=B, shrink_every=m, sparse_epochs=sparse_epochs, debias=debias,
                          overlap=overlap, k=k)
    learner.begin(FirstOrderFeatures(N_BUCKETS, 1, False), n_train)
    gid = np.repeat(np.arange(1, len(SIZES) + 1), SIZES).astype(np.uint8)
    learner.assign_groups(np.arange(len(gid), dtype=np.uint64), gid)
    return learner, gid


def random_update(rng, n_used):
    k = int(rng.integers(1, 25))
    idx = np.sort(rng.choice(n_used, k, replace=False)).astype(np.uint64)
    val = rng.choice([-2.0, -1.0, 1.0, 2.0], k)
    return idx, val, int(rng.integers(0, 4))


def reference_shrink(w, gid, B):
    """Figure 3's shrink on a dense vector, straight from the figure."""
    groups = np.unique(gid)
    norms = np.array([np.linalg.norm(w[gid == g]) for g in groups])
    logs = np.array([max(1.0, math.log2((gid == g).sum())) for g in groups])
    scaled = np.sort(norms / logs)[::-1]
    r = np.r_[scaled, np.zeros(B + 1)]
    sigma = (r[B - 1] + r[B]) / 2
    out = w.copy()
    for g, norm, lg in zip(groups, norms, logs):
        sel = gid == g
        out[sel] = 0.0 if norm == 0 else max(0.0, (norm - sigma * lg) / norm) * w[sel]
    return out


@pytest.mark.parametrize("B,m", [(3, 1), (2, 4), (5, 3), (20, 1)])
def test_sparse_stage_matches_dense_reference(B, m):
    rng = np.random.default_rng(B * 10 + m)
    n_train = 12
    learner, gid = synthetic_learner(B, m, sparse_epochs=3, n_train=n_train, debias="none")
    table = WeightTable(N_BUCKETS)
    w = np.zeros(N_BUCKETS)
    for t in range(1, 3 * n_train + 1):
        idx, val, n_wrong = random_update(rng, len(gid))
        learner.step(table, [(idx, val, n_wrong)])
        if n_wrong:
            np.add.at(w, idx.astype(int), math.sqrt(n_train / t) * val)
        if t % m == 0 or t == 3 * n_train:
            w[: len(gid)] = reference_shrink(w[: len(gid)], gid, B)
        np.testing.assert_allclose(table.current(), w, rtol=2e-5, atol=1e-4 * np.abs(w).max())
    active = {g for g in np.unique(gid) if np.any(w[: len(gid)][gid == g] != 0)}
    assert len(active) <= B
    kept = {row["id"] for row in learner.groups() if row["kept"]}
    assert kept == active
    # The prediction weights are zero outside the kept groups.
    final = learner.finalize_weights(table.current())
    assert set(np.unique(gid[final[: len(gid)] != 0]).tolist()) <= kept
    assert not learner.debiasing and not learner.predicts_with_average()


def reference_overlap_shrink(w, member, B):
    """Figure 3's shrink with overlapping groups: ``member`` is a (buckets x
    groups) boolean matrix; norms and |F_g| over all member buckets, each
    bucket scaled by the largest factor of its groups."""
    norms = np.array([np.linalg.norm(w[member[:, g]]) for g in range(member.shape[1])])
    sizes = member.sum(axis=0)
    logs = np.array([max(1.0, math.log2(n)) if n else 1.0 for n in sizes])
    scaled = np.sort(np.where(sizes > 0, norms / logs, 0.0))[::-1]
    r = np.r_[scaled, np.zeros(B + 1)]
    sigma = (r[B - 1] + r[B]) / 2
    factor = np.array([max(0.0, 1 - sigma * lg / n) if n > 0 else 0.0
                       for n, lg in zip(norms, logs)])
    bucket_factor = np.where(member, factor[None, :], 0.0).max(axis=1)
    return w * bucket_factor, factor > 0


@pytest.mark.parametrize("overlap", ["any", "first", "refill"])
@pytest.mark.parametrize("B,m", [(3, 1), (2, 5)])
def test_overlapping_groups_match_dense_reference(overlap, B, m):
    """Buckets shared by groups (hash collisions), some shared only after
    they already carry weight: "any" keeps a bucket if one of its groups is
    kept, "first" gives it to the first group that met it, "refill" is
    "first" in the sparse stage and "any" when debiasing."""
    rng = np.random.default_rng(B + 7 * m)
    n_train, n_used, n_groups = 10, 160, 6
    learner = Sparseptron(B=B, shrink_every=m, sparse_epochs=3, debias="MIRA", overlap=overlap)
    learner.begin(FirstOrderFeatures(N_BUCKETS, 1, False), n_train)
    first = rng.integers(0, n_groups, n_used)
    member = np.zeros((N_BUCKETS, n_groups), dtype=bool)
    member[np.arange(n_used), first] = True
    member_first = member.copy()    # the first group of each bucket
    learner.assign_groups(np.arange(n_used, dtype=np.uint64), (first + 1).astype(np.uint8))
    table = WeightTable(N_BUCKETS)
    w = np.zeros(N_BUCKETS)
    for t in range(1, 3 * n_train + 1):
        if t % 4 == 0:
            # Another group meets a few buckets (which may carry weight now).
            ids = rng.choice(n_used, 6, replace=False)
            gs = rng.integers(0, n_groups, 6)
            learner.assign_groups(ids.astype(np.uint64), (gs + 1).astype(np.uint8))
            if overlap != "first":
                member[ids, gs] = True
        idx, val, n_wrong = random_update(rng, n_used)
        learner.step(table, [(idx, val, n_wrong)])
        if n_wrong:
            np.add.at(w, idx.astype(int), math.sqrt(n_train / t) * val)
        if t % m == 0 or t == 3 * n_train:
            w, kept = reference_overlap_shrink(
                w, member_first if overlap == "refill" else member, B)
        if t == 3 * n_train:
            # The switch to debiasing rescales w by one positive factor.
            w *= (table.current() @ w) / (w @ w)
        np.testing.assert_allclose(table.current(), w, rtol=2e-5,
                                   atol=1e-4 * max(1e-9, np.abs(w).max()))
    # Now debiasing: the kept buckets are those with a kept group.
    assert learner.debiasing
    assert sum(kept) <= B
    kept_ids = {g + 1 for g in np.flatnonzero(kept)}
    assert {row["id"] for row in learner.groups() if row["kept"]} == kept_ids
    ref_mask = (member & kept[None, :]).any(axis=1)
    assert np.array_equal(learner.kept_buckets(), ref_mask)
    for b in rng.choice(n_used, 20, replace=False):
        assert set(learner.bucket_groups(int(b))) == {g + 1 for g in np.flatnonzero(member[b])}
    w = table.current().astype(np.float64)
    for _ in range(15):
        idx, val, n_wrong = random_update(rng, n_used)
        learner.step(table, [(idx, val, n_wrong)])
        x = np.zeros(N_BUCKETS)
        np.add.at(x, idx.astype(int), val)
        x[~ref_mask] = 0.0
        if n_wrong and x @ x > 0:
            w = w + max(0.0, (n_wrong - w @ x) / (x @ x)) * x
        np.testing.assert_allclose(table.current(), w, rtol=1e-4, atol=1e-4)
    final = learner.finalize_weights(table.averaged())
    assert not np.any(final[~ref_mask])


def test_debiasing_is_masked_mira_and_exactly_sparse():
    rng = np.random.default_rng(7)
    n_train, B = 10, 3
    learner, gid = synthetic_learner(B, 1, sparse_epochs=2, n_train=n_train, debias="MIRA")
    table = WeightTable(N_BUCKETS)
    for _ in range(2 * n_train):
        learner.step(table, [random_update(rng, len(gid))])
    assert learner.debiasing and learner.predicts_with_average()
    kept = np.array([row["id"] for row in learner.groups() if row["kept"]])
    assert 0 < len(kept) <= B
    mask = np.zeros(N_BUCKETS, dtype=bool)
    mask[: len(gid)] = np.isin(gid, kept)
    w = table.current().astype(np.float64)
    assert table.n_ticks == 1   # the averaging restarted at the warm start
    for _ in range(30):
        idx, val, n_wrong = random_update(rng, len(gid))
        learner.step(table, [(idx, val, n_wrong)])
        x = np.zeros(N_BUCKETS)
        np.add.at(x, idx.astype(int), val)
        x[~mask] = 0.0
        sq = x @ x
        if n_wrong and sq > 0:
            tau = max(0.0, (n_wrong - w @ x) / sq)
            w = w + tau * x
        np.testing.assert_allclose(table.current(), w, rtol=1e-4, atol=1e-4)
    assert not np.any(table.averaged()[~mask])
    assert not np.any(table.current()[~mask])


def reference_k_constraint_step(w, xs, losses):
    """argmin ||w' - w||^2 s.t. w'.x_i >= L_i, by trying every active set:
    the KKT point (alpha >= 0, every constraint met) of the dual."""
    pairs = [(x, L) for x, L in zip(xs, losses) if x @ x > 0]
    xs, losses = [x for x, _ in pairs], [L for _, L in pairs]
    best = None
    for r in range(len(xs) + 1):
        for active in itertools.combinations(range(len(xs)), r):
            alpha = np.zeros(len(xs))
            if active:
                X = np.array([xs[i] for i in active])
                b = np.array([losses[i] - w @ xs[i] for i in active])
                sol = np.linalg.lstsq(X @ X.T, b, rcond=None)[0]
                if np.any(sol < -1e-9):
                    continue
                alpha[list(active)] = sol
            w2 = w + sum(a * x for a, x in zip(alpha, xs)) if xs else w
            if all(w2 @ x >= L - 1e-7 for x, L in zip(xs, losses)):
                if best is None or np.sum((w2 - w) ** 2) < np.sum((best - w) ** 2):
                    best = w2
    return best


def test_k_best_debiasing_solves_the_masked_k_constraint_qp():
    """With k trees per sentence the sparse stage steps on the first (best)
    tree only, and debiasing solves the k-constraint MIRA QP over the kept
    groups' part of each tree's update (checked against every active set)."""
    rng = np.random.default_rng(11)
    n_train, B = 10, 3
    plain, gid = synthetic_learner(B, 1, sparse_epochs=2, n_train=n_train)
    kbest, _ = synthetic_learner(B, 1, sparse_epochs=2, n_train=n_train, k=3)
    assert kbest.k_best == 3 and plain.k_best == 1
    t_plain, t_kbest = WeightTable(N_BUCKETS), WeightTable(N_BUCKETS)
    for _ in range(2 * n_train):
        trees = [random_update(rng, len(gid)) for _ in range(3)]
        plain.step(t_plain, [trees[0]])
        kbest.step(t_kbest, [trees])
    np.testing.assert_array_equal(t_plain.current(), t_kbest.current())
    assert kbest.debiasing
    kept = np.array([row["id"] for row in kbest.groups() if row["kept"]])
    mask = np.zeros(N_BUCKETS, dtype=bool)
    mask[: len(gid)] = np.isin(gid, kept)
    w = t_kbest.current().astype(np.float64)
    n_multi = 0
    for _ in range(40):
        trees = [random_update(rng, len(gid)) for _ in range(3)]
        kbest.step(t_kbest, [trees])
        xs, losses = [], []
        for idx, val, n_wrong in trees:
            x = np.zeros(N_BUCKETS)
            np.add.at(x, idx.astype(int), val)
            x[~mask] = 0.0
            if n_wrong:
                xs.append(x)
                losses.append(n_wrong)
        n_multi += len(xs) > 1
        w = reference_k_constraint_step(w, xs, losses)
        np.testing.assert_allclose(t_kbest.current(), w, rtol=1e-4, atol=1e-4)
    assert n_multi > 10
    assert not np.any(t_kbest.averaged()[~mask])


def test_invalid_settings_and_missing_initialisation():
    with pytest.raises(ValueError, match="B"):
        Sparseptron(B=0)
    with pytest.raises(ValueError, match="debias"):
        Sparseptron(debias="SVM")
    with pytest.raises(ValueError, match="k must be"):
        Sparseptron(k=0)
    with pytest.raises(ValueError, match="k > 1 needs debias"):
        Sparseptron(k=5, debias="PA-I", C=1.0)
    with pytest.raises(ValueError, match="begin_training"):
        Sparseptron().step(WeightTable(8), [(np.zeros(0, np.uint64), np.zeros(0), 0)])
    learner, _ = synthetic_learner(2, 1, 1, 5)
    with pytest.raises(ValueError, match="no feature group"):
        learner.step(WeightTable(N_BUCKETS),
                     [(np.array([N_BUCKETS - 1], np.uint64), np.array([1.0]), 1)])


def test_gold_support_skips_buckets_outside_the_feature_space():
    """support = "gold": once the gold trees are in, updates touch only
    buckets with a group, exactly as the same updates filtered beforehand."""
    rng = np.random.default_rng(11)
    n_train, n_used = 10, 200
    frozen = Sparseptron(B=3, shrink_every=2, sparse_epochs=2, overlap="refill", support="gold")
    plain = Sparseptron(B=3, shrink_every=2, sparse_epochs=2, overlap="refill")
    gid = np.repeat(np.arange(1, len(SIZES) + 1), SIZES).astype(np.uint8)
    member = np.zeros(N_BUCKETS, dtype=bool)
    member[:n_used] = True
    for learner in (frozen, plain):
        learner.begin(FirstOrderFeatures(N_BUCKETS, 1, False), n_train)
        learner.assign_groups(np.arange(n_used, dtype=np.uint64), gid[:n_used])
    frozen.freeze_support()
    plain.freeze_support()   # support = "all": no effect
    t_frozen, t_plain = WeightTable(N_BUCKETS), WeightTable(N_BUCKETS)
    for _ in range(4 * n_train):
        idx, val, n_wrong = random_update(rng, len(gid))   # some beyond n_used
        idx = np.r_[idx, np.uint64(N_BUCKETS - 1)]
        val = np.r_[val, 1.0]
        frozen.step(t_frozen, [(idx, val, n_wrong)])
        keep = member[idx.astype(int)]
        plain.step(t_plain, [(idx[keep], val[keep], n_wrong)])
    assert frozen.debiasing and plain.debiasing
    np.testing.assert_allclose(t_frozen.current(), t_plain.current(), rtol=1e-5, atol=1e-6)
    assert not np.any(t_frozen.current()[~member])
    assert not np.any(t_frozen.averaged()[~member])
    with pytest.raises(ValueError, match="support"):
        Sparseptron(support="predicted")


def test_sparse_weights_round_trip_and_errors():
    rng = np.random.default_rng(3)
    w = np.where(rng.random(1001) < 0.2, rng.normal(size=1001), 0).astype(np.float32)
    data = sparse_weights.pack(w)
    assert data["nonzero_bits"].nbytes == 126 and len(data["values"]) == np.count_nonzero(w)
    assert np.array_equal(sparse_weights.unpack(data), w)
    bad = dict(data, values=data["values"][:-1])
    with pytest.raises(ValueError, match="non-zero"):
        sparse_weights.unpack(bad, "x.npz")
    with pytest.raises(ValueError, match="missing field 'n'"):
        sparse_weights.unpack({"values": data["values"]}, "x.npz")


# ------------------------------------------------------------ in the component

@pytest.mark.parametrize("overlap,support", [("any", "all"), ("first", "all"),
                                             ("refill", "all"), ("refill", "gold")])
def test_component_trains_saves_sparse_and_reloads(tmp_path, sample_train, sample_dev, overlap,
                                                   support):
    from spacy.training import Example
    from spacy.util import minibatch

    from spacy_mstparse.components import mst_parser  # noqa: F401
    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.corpus.readers import gold_annotated_doc

    nlp = spacy.blank("en")
    nlp.add_pipe("mst_parser", config={"learner": {
        "@mst_learners": "spacy_mstparse.Sparseptron.v1", "B": 12, "shrink_every": 8,
        "sparse_epochs": 1, "overlap": overlap, "support": support}})

    def examples(path, n):
        out = []
        for ref in read_conllu(path, nlp.vocab):
            out.append(Example(gold_annotated_doc(Example(ref.copy(), ref)), ref))
            if len(out) == n:
                break
        return out

    train, dev = examples(sample_train, 150), examples(sample_dev, 60)
    nlp.initialize(lambda: train)
    parser = nlp.get_pipe("mst_parser")
    assert parser.learner.n_train == 150
    for _ in range(2):
        for batch in minibatch(train, 16):
            parser.update(batch)
    assert parser.learner.debiasing
    kept = [row["id"] for row in parser.learner.groups() if row["kept"]]
    assert 0 < len(kept) <= 12
    # the report names tag rows by what they hold, given the model's row names
    rows = parser.model_features.tag_row_names()
    named = {row["id"]: row["name"] for row in parser.learner.groups(rows)}
    numbered = {row["id"]: row["name"] for row in parser.learner.groups()}
    assert set(named) == set(numbered) and any("/tag" in n for n in numbered.values())
    assert not any("/tag" in n for n in named.values())
    for gid, name in numbered.items():
        base, _, number = name.rpartition("/tag")
        assert named[gid] == (f"{base}/{rows[int(number) - 1]}" if number.isdigit() else name)
    arc = parser.prediction_weights()[0]
    if overlap == "first":
        group_map = parser.learner.group_map
        assert set(np.unique(group_map[arc != 0]).tolist()) <= set(kept)
    else:
        # Every non-zero bucket is used by a kept group (maybe others too).
        for b in np.flatnonzero(arc)[::50]:
            assert set(parser.learner.bucket_groups(int(b))) & set(kept)
    assert not np.any(arc[~parser.learner.kept_buckets()])
    # The kept groups' buckets on the gold trees: with support = "gold" every
    # non-zero weight is one of them; otherwise wrong arcs add others.
    gold_kept = np.zeros(arc.size, dtype=bool)
    for sentence, heads, _ in parser.training_sentences(train):
        ids, groups = fg.tree_features_grouped(parser.model_features.first_order, sentence, heads)
        gold_kept[ids[np.isin(groups, kept)].astype(np.int64)] = True
    outside = np.count_nonzero(arc[~gold_kept])
    if support == "gold":
        assert outside == 0
    elif overlap == "refill":
        assert outside > 0
    nlp.to_disk(tmp_path / "model")
    files = {p.name for p in (tmp_path / "model" / "mst_parser").iterdir()}
    assert "arc_weights.npz" in files and "arc_weights.npy" not in files
    assert (tmp_path / "model" / "mst_parser" / "arc_weights.npz").stat().st_size < \
        4 * arc.size / 2
    loaded = spacy.load(tmp_path / "model")
    assert np.array_equal(loaded.get_pipe("mst_parser").prediction_weights()[0], arc)
    docs = [eg.predicted for eg in dev]
    for a, b in zip(nlp.pipe([d.copy() for d in docs]), loaded.pipe([d.copy() for d in docs])):
        assert [t.head.i for t in a] == [t.head.i for t in b]
    assert nlp.evaluate(dev)["dep_uas"] > 0.6
    again = spacy.blank("en")
    again.add_pipe("mst_parser", config={"learner": {
        "@mst_learners": "spacy_mstparse.Sparseptron.v1", "B": 12}})
    again.get_pipe("mst_parser").from_bytes(parser.to_bytes())
    assert np.array_equal(again.get_pipe("mst_parser").prediction_weights()[0], arc)


def test_second_order_is_rejected(sample_train):
    from spacy.training import Example

    from spacy_mstparse.components import mst_parser  # noqa: F401
    from spacy_mstparse.corpus.conll import read_conllu

    nlp = spacy.blank("en")
    nlp.add_pipe("mst_parser", config={"order": 2, "learner": {
        "@mst_learners": "spacy_mstparse.Sparseptron.v1"}})
    refs = list(read_conllu(sample_train, nlp.vocab))[:5]
    with pytest.raises(ValueError, match="order = 1"):
        nlp.initialize(lambda: [Example(r.copy(), r) for r in refs])


def test_prune_and_compact_keep_the_largest_weights_and_are_idempotent():
    """``prune`` keeps the largest magnitudes up to the density, ``compact``
    also rounds to ``levels`` magnitudes per sign; both leave their own
    output as it is, and the defaults change nothing."""
    from spacy_mstparse.features.weights import quantize

    rng = np.random.default_rng(3)
    w = (rng.normal(size=20_000) * (rng.random(20_000) < 0.6)).astype("float32")
    pruned = sparse_weights.prune(w, 0.1)
    assert np.count_nonzero(pruned) == 2_000
    kept = pruned != 0
    assert np.abs(w[kept]).min() >= np.abs(w[~kept & (w != 0)]).max()
    assert np.array_equal(pruned[kept], w[kept])
    assert np.array_equal(sparse_weights.prune(pruned, 0.1), pruned)
    assert np.array_equal(sparse_weights.prune(w, 0.9), w)   # already that sparse
    compacted = sparse_weights.compact(w, 0.1, 15)
    assert np.count_nonzero(compacted) == 2_000
    assert np.unique(compacted[compacted != 0]).shape[0] <= 30
    assert np.array_equal(np.sign(compacted[kept]), np.sign(w[kept]))
    assert np.array_equal(sparse_weights.compact(compacted, 0.1, 15), compacted)
    assert np.array_equal(quantize(compacted).dequantize(), compacted)   # saved codes: exact
    assert np.array_equal(sparse_weights.compact(w, *sparse_weights.NO_COMPACTION[1:]), w)
    for bad in ((0.0, 1.0, 127), (1.0, 1.5, 127), (1.0, 1.0, 1), (1.0, 1.0, 128)):
        with pytest.raises(ValueError):
            sparse_weights.check_compaction(bad)
