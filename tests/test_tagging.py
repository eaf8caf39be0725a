"""The averaged-perceptron tagger (spacy_mstparse.tagging) against a dense
Python reference: the same features and decisions with numpy weights, the
average as the plain mean of the weights after every word."""
import numpy as np
import pytest

from spacy_mstparse.features.hashing import py_mix
from spacy_mstparse.features.selection import TokenRow
from spacy_mstparse.tagging.guesser import build_guesser
from spacy_mstparse.tagging.inventory import build_inventory
from spacy_mstparse.tagging.perceptron import TaggerModel
from spacy_mstparse.tagging.training import Jackknife, TaggedSentence, blend, jackknife, train_model
from spacy_mstparse.tagging.word_attributes import (
    AMBIGUITY, FLAGS, LOWER, N_ATTRS, N_FEATURE_ATTRS, PREFIX1, SHAPE, SUFFIX1, SUFFIX3, build_lexicon,
    with_lexicon, word_attributes, word_flags, word_shape)
from spacy_mstparse.features.hashing import string_id

N_BUCKETS = 1 << 16
K_UPOS, K_XPOS, K_FEATS, K_PAIR = 1, 2, 3, 4

# A toy language: a word's ending says its class (-on noun, -ons plural noun,
# -ed verb, -ish adjective), the first noun of a sentence is nominative.
STEMS = ["bal", "dor", "kip", "mun", "sar", "tol", "vek", "zim"]
ENDINGS = [("on", "NOUN", "NN"), ("ons", "NOUN", "NNS"), ("ed", "VERB", "VBD"),
           ("ish", "ADJ", "JJ")]


def toy_word(rng, k):
    if rng.random() < 0.25:
        return ("the" if rng.random() < 0.5 else "a", "DET", "DT", "_")
    stem = STEMS[int(rng.integers(len(STEMS)))]
    ending, upos, xpos = ENDINGS[int(rng.integers(len(ENDINGS)))]
    if upos == "NOUN":
        feats = f"Case={'Nom' if k == 0 else 'Acc'}|Number={'Plur' if xpos == 'NNS' else 'Sing'}"
    else:
        feats = "Tense=Past|VerbForm=Fin" if upos == "VERB" else "_"
    return (stem + ending, upos, xpos, feats)


def toy_sentences(n, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        words = [toy_word(rng, k) for k in range(int(rng.integers(2, 7)))]
        out.append([(w.capitalize() if k == 0 else w, u, x, f)
                    for k, (w, u, x, f) in enumerate(words)])
    return out


def encode(inventory, sentence):
    u, x, f = inventory.encode([w[1] for w in sentence], [w[2] for w in sentence],
                               [w[3] for w in sentence])
    return TaggedSentence(word_attributes([w[0] for w in sentence]), u, x, f)


def inventory_of(sentences, **kwargs):
    rows = [TokenRow(u, x, f, w.lower(), w.lower()) for s in sentences for w, u, x, f in s]
    return build_inventory(rows, **kwargs)[0]


# ---------------------------------------------------------------- the reference
def mix3(a, b, c):
    return py_mix(py_mix(a, b), c)


def word_keys(attrs, i):
    n = attrs.shape[0]

    def ctx(j, col):
        return 1 if j < 0 else 2 if j >= n else int(attrs[j, col])
    keys = [py_mix(1, 0)] + [py_mix(2 + t, int(attrs[i, t])) for t in range(N_FEATURE_ATTRS)]
    keys += [py_mix(20, ctx(i - 1, LOWER)), py_mix(21, ctx(i + 1, LOWER)),
             py_mix(22, ctx(i - 2, LOWER)), py_mix(23, ctx(i + 2, LOWER)),
             py_mix(24, ctx(i - 1, SUFFIX3)), py_mix(25, ctx(i + 1, SUFFIX3)),
             mix3(26, ctx(i - 1, LOWER), ctx(i, LOWER)), mix3(27, ctx(i, LOWER), ctx(i + 1, LOWER)),
             mix3(28, ctx(i + 1, SHAPE), ctx(i + 1, SUFFIX1)), py_mix(29, ctx(i + 1, AMBIGUITY)),
             mix3(30, ctx(i, AMBIGUITY), ctx(i + 1, AMBIGUITY)),
             mix3(31, ctx(i - 1, AMBIGUITY), ctx(i, AMBIGUITY))]
    return keys


class Reference:
    """The tagger written plainly: dense weights, every decision spelled out."""

    def __init__(self, inventory):
        self.inv = inventory
        self.pairs = inventory.pairs
        self.w = np.zeros(N_BUCKETS)
        self.sum = np.zeros(N_BUCKETS)
        self.ticks = 0
        self.errors = 0

    def buckets(self, keys, kind, c):
        # each key has a block of weights per kind of decision, one per class
        return [(py_mix(k, kind) + int(c)) & (N_BUCKETS - 1) for k in keys]

    def class_buckets(self, keys, kind, c):
        out = self.buckets(keys, kind, c)
        if kind == K_FEATS and self.inv.feats[c] != "_":
            for p in self.inv.feats[c].split("|"):
                out += self.buckets(keys, K_PAIR, self.pairs.index(p))
        return out

    def choose(self, keys, kind, cands, w):
        best, best_score = -1, 0.0
        for c in cands:
            score = sum(w[b] for b in self.class_buckets(keys, kind, c))
            if best < 0 or score > best_score:
                best, best_score = c, score
        return best

    def run(self, s, w, train):
        inv, attrs = self.inv, s.attrs
        out = [[], [], []]
        u1 = u2 = x1 = f1 = -1
        for i in range(attrs.shape[0]):
            base = word_keys(attrs, i)
            lower, suffix3 = int(attrs[i, LOWER]), int(attrs[i, SUFFIX3])
            keys = base + [py_mix(60, u1 + 3), mix3(61, u2 + 3, u1 + 3),
                           mix3(62, u1 + 3, lower), mix3(63, u1 + 3, suffix3)]
            u = self.decide(keys, K_UPOS, list(range(len(inv.upos))), s.upos[i], w, train)
            out[0].append(u)
            cond = base + [py_mix(70, u + 3), mix3(71, u + 3, suffix3), mix3(72, u + 3, lower)]
            if inv.xpos:
                x1 = self.decide(cond + [mix3(73, u + 3, x1 + 3)], K_XPOS,
                                 inv.xpos_by_upos[u], s.xpos[i], w, train)
                out[1].append(x1)
            if inv.feats:
                f1 = self.decide(cond + [mix3(74, u + 3, f1 + 3)], K_FEATS,
                                 inv.feats_by_upos[u], s.feats[i], w, train)
                out[2].append(f1)
            u2, u1 = u1, u
            if train:
                self.ticks += 1
                self.sum += self.w
        return out

    def decide(self, keys, kind, cands, gold, w, train):
        choice = self.choose(keys, kind, cands, w) if len(cands) else -1
        self.errors += bool(train and gold >= 0 and choice != gold)
        if train and gold >= 0 and choice != gold and (kind == K_UPOS or gold in cands):
            np.add.at(self.w, self.class_buckets(keys, kind, gold), 1.0)
            if choice >= 0:
                np.add.at(self.w, self.class_buckets(keys, kind, choice), -1.0)
        return choice


# ------------------------------------------------------------------- tests
def test_word_attributes_by_hand():
    attrs = word_attributes(["Dogs", "a", "x-9"])
    assert attrs.shape == (3, N_ATTRS) and attrs.dtype == np.uint64
    assert attrs[0, LOWER] == string_id("dogs")
    assert attrs[0, SHAPE] == string_id("Xx") and word_shape("x-9") == "x-d"
    assert attrs[0, SUFFIX1] == string_id("s") and attrs[0, SUFFIX3] == string_id("ogs")
    assert attrs[0, SUFFIX1 + 3] == 0          # "dogs" is not longer than 4 characters
    assert attrs[0, PREFIX1 + 2] == string_id("dog")
    assert attrs[1, SUFFIX1] == 0 and attrs[1, PREFIX1] == 0   # one letter: no affixes
    assert attrs[2, FLAGS] == string_id(word_flags("x-9")) and word_flags("x-9") == "cuDH"


def test_inventory_candidates_and_choice():
    sentences = toy_sentences(40)
    inv = inventory_of(sentences)
    assert inv.upos == sorted({"NOUN", "VERB", "DET", "ADJ"})
    assert inv.xpos and inv.feats        # XPOS says more than UPOS (NN / NNS), FEATS given
    noun = inv.upos.index("NOUN")
    assert {inv.xpos[i] for i in inv.xpos_by_upos[noun]} == {"NN", "NNS"}
    assert {inv.feats[i] for i in inv.feats_by_upos[noun]} == {
        f"Case={c}|Number={n}" for c in ("Nom", "Acc") for n in ("Sing", "Plur")}
    assert {inv.feats[i] for i in inv.feats_by_upos[inv.upos.index("DET")]} == {"_"}
    inv_no_xpos = inventory_of([[(w, u, u, f) for w, u, x, f in s] for s in sentences])
    assert inv_no_xpos.xpos == []       # XPOS a copy of UPOS: not predicted


def test_xpos_read_from_upos_and_feats_by_hand():
    # XPOS spells out UPOS and Number (a positional tag): 10 words, one of them off
    words = [("NOUN", "NNS1", "Number=Sing")] * 4 + [("NOUN", "NNP1", "Number=Plur")] * 3 \
        + [("VERB", "VB", "_")] * 2 + [("NOUN", "NNX1", "Number=Sing")]
    rows = [TokenRow(u, x, f, "w", "w") for u, x, f in words]
    inv, report = build_inventory(rows, predict_xpos=True, predict_feats=True)
    assert report["xpos_of_feats_share"] == 0.9       # 9 of 10 words have their pair's XPOS
    assert inv.xpos_of_feats == []                      # under XPOS_FROM_FEATS: chosen apart
    inv, report = build_inventory(rows[:-1], predict_xpos=True, predict_feats=True)
    assert report["xpos_of_feats_share"] == 1.0
    ids = {name: {v: i for i, v in enumerate(getattr(inv, name))} for name in ("upos", "xpos", "feats")}
    expected = {(ids["upos"][u], ids["feats"][f], ids["xpos"][x]) for u, x, f in words[:-1]}
    assert {tuple(t) for t in inv.xpos_of_feats} == expected and len(inv.xpos_of_feats) == 3
    noun, verb = ids["upos"]["NOUN"], ids["upos"]["VERB"]
    plur, sing, none = ids["feats"]["Number=Plur"], ids["feats"]["Number=Sing"], ids["feats"]["_"]
    # a VERB with Number=Plur was never seen: the XPOS predicted stays
    upos, xpos, feats = (np.asarray(a, dtype=np.int32) for a in (
        [noun, noun, verb, verb], [ids["xpos"][x] for x in ("VB", "VB", "NNS1", "NNS1")],
        [plur, sing, none, plur]))
    agreed = inv.agreeing_xpos(upos, xpos, feats)
    assert [inv.xpos[x] for x in agreed] == ["NNP1", "NNS1", "VB", "NNS1"]
    assert type(inv).from_dict(inv.to_dict()).xpos_of_feats == inv.xpos_of_feats


def test_lexicon_by_hand():
    inv = inventory_of(toy_sentences(20))
    s = encode(inv, [("the", "DET", "DT", "_"), ("balon", "NOUN", "NN", "Case=Nom|Number=Sing"),
                     ("The", "DET", "DT", "_")])
    lexicon = build_lexicon([(s.attrs, s.upos)], min_count=1)
    assert build_lexicon([(s.attrs, s.upos)], min_count=2) == {string_id("the"): string_id(str(inv.upos.index("DET")))}
    det, noun = inv.upos.index("DET"), inv.upos.index("NOUN")
    assert lexicon == {string_id("the"): string_id(str(det)), string_id("balon"): string_id(str(noun))}
    attrs = word_attributes(["THE", "sarish"], lexicon)
    assert attrs[0, AMBIGUITY] == string_id(str(det)) and attrs[1, AMBIGUITY] == 0


def test_guesses_by_hand():
    noun = lambda w, f: [("the", "DET", "DT", "_"), (w, "NOUN", "NN", f)]
    sentences = [noun("balon", "Case=Nom|Number=Sing"), noun("dolon", "Case=Nom|Number=Sing"),
                 noun("kilon", "Case=Acc|Number=Sing"), noun("balons", "Case=Nom|Number=Plur"),
                 noun("balon", "Case=Nom|Number=Sing")]
    inv = inventory_of(sentences)
    data = [encode(inv, s) for s in sentences]
    model = TaggerModel(len(inv.upos), len(inv.xpos), len(inv.feats), inv.arrays(), N_BUCKETS)
    model.set_guesser(build_guesser((s.attrs, s.upos, s.feats) for s in data), min_support=2)
    n, det = inv.upos.index("NOUN"), inv.upos.index("DET")
    feats = lambda guess: {inv.feats[c]: k for c, k in guess.items()}
    pairs = lambda guess: {inv.pairs[p]: k for p, k in guess.items()}
    attrs = word_attributes(["zulon", "balon", "balons", "Balon"])
    # a new word: the longest ending with two word types behind it ("-lon"),
    # counted in types (balon twice is one); no training word has its stem
    src, ending, stem = model.guess(attrs, 0, n)
    assert src == 3 and feats(ending) == {"Case=Nom|Number=Sing": 2, "Case=Acc|Number=Sing": 1}
    assert stem == {}
    # a training word is guessed without itself: "-alon" has no other word,
    # "-lon" two; its stem "balo" is shared with "balons" only
    src, ending, stem = model.guess(attrs, 1, n)
    assert src == 3 and feats(ending) == {"Case=Nom|Number=Sing": 1, "Case=Acc|Number=Sing": 1}
    assert pairs(stem) == {"Case=Nom": 1, "Number=Plur": 1}
    assert pairs(model.guess(attrs, 2, n)[2]) == {"Case=Nom": 1, "Number=Sing": 1}
    assert model.guess(attrs, 3, n) == model.guess(attrs, 1, n)       # lower-cased
    assert model.guess(attrs, 0, det) == (0, {}, {})                  # no DET has these forms
    with pytest.raises(ValueError, match="malformed guesser"):
        model.set_guesser({"keys": np.array([2, 1], dtype=np.uint64), "ptr": np.array([0, 0, 0]),
                           "ids": np.array([], dtype=np.int32), "counts": np.array([])})


def test_training_equals_dense_reference():
    sentences = toy_sentences(30)
    inv = inventory_of(sentences)
    data = [encode(inv, s) for s in sentences]
    lexicon = build_lexicon((s.attrs, s.upos) for s in data[::2])
    data = [TaggedSentence(with_lexicon(s.attrs, lexicon), s.upos, s.xpos, s.feats) for s in data]
    assert any(s.attrs[:, AMBIGUITY].any() for s in data)
    model = TaggerModel(len(inv.upos), len(inv.xpos), len(inv.feats), inv.arrays(), N_BUCKETS)
    ref = Reference(inv)
    for epoch in range(2):
        for s in data:
            errors = model.train_sentence(s.attrs, s.upos, s.xpos, s.feats)
            ref.errors = 0
            ref.run(s, ref.w, train=True)
            assert errors == ref.errors
    np.testing.assert_array_equal(model.table.current(), ref.w.astype(np.float32))
    np.testing.assert_allclose(model.averaged(), ref.sum / ref.ticks, rtol=1e-5, atol=1e-6)
    assert np.abs(ref.w).sum() > 0


def test_prediction_equals_reference_with_random_weights():
    sentences = toy_sentences(10, seed=3)
    inv = inventory_of(sentences)
    weights = np.random.default_rng(1).normal(size=N_BUCKETS).astype(np.float32)
    model = TaggerModel(len(inv.upos), len(inv.xpos), len(inv.feats), inv.arrays(),
                        N_BUCKETS, weights)
    ref = Reference(inv)
    for s in sentences:
        s = encode(inv, s)
        got = model.tag(s.attrs)
        want = ref.run(s, weights.astype(np.float64), train=False)
        for g, w in zip(got, want):
            assert list(g) == w
        # XPOS and FEATS are among the candidates of the UPOS chosen
        for u, x, f in zip(*got):
            assert x in inv.xpos_by_upos[u] and f in inv.feats_by_upos[u]


def test_learns_and_generalises_by_suffix():
    sentences = toy_sentences(200)
    inv = inventory_of(sentences)
    model, lexicon = train_model(inv, [encode(inv, s) for s in sentences], epochs=5,
                                 n_buckets=N_BUCKETS)
    # words never seen: the suffix and the word before decide
    u, x, f = model.tag(word_attributes(["The", "grunish", "plexons", "wabed"], lexicon))
    assert [inv.upos[i] for i in u] == ["DET", "ADJ", "NOUN", "VERB"]
    assert inv.xpos[x[2]] == "NNS" and "Number=Plur" in inv.feats[f[2]]
    assert inv.feats[f[3]] == "Tense=Past|VerbForm=Fin"


def test_jackknife_predicts_each_sentence_without_it():
    sentences = toy_sentences(12)
    inv = inventory_of(sentences)
    data = [encode(inv, s) for s in sentences]
    tags = jackknife(inv, data, folds=3, epochs=2, n_buckets=N_BUCKETS).tags
    assert len(tags) == len(data)
    # sentence 0 is in fold 0: the same tags as a model trained on folds 1 and 2
    rest = [s for k, s in enumerate(data) if k % 3 != 0]
    alone, lexicon = train_model(inv, rest, epochs=2, n_buckets=N_BUCKETS, seed=1)
    assert lexicon == build_lexicon((s.attrs, s.upos) for s in rest) and lexicon
    for got, want in zip(tags[0], alone.tag(with_lexicon(data[0].attrs, lexicon))):
        assert list(got) == list(want)
    assert jackknife(inv, data, folds=1, epochs=2, n_buckets=N_BUCKETS) == Jackknife([])


def test_jackknife_keeps_the_mean_of_the_fold_taggers_weights():
    sentences = toy_sentences(30)
    inv = inventory_of(sentences)
    data = [encode(inv, s) for s in sentences]
    got = jackknife(inv, data, folds=3, epochs=2, n_buckets=N_BUCKETS, seed=4)
    folds = [train_model(inv, [s for k, s in enumerate(data) if k % 3 != fold], epochs=2,
                         n_buckets=N_BUCKETS, seed=5 + fold)[0] for fold in range(3)]
    want = np.mean([m.weights for m in folds], axis=0)
    assert np.abs(want).max() > 0
    np.testing.assert_allclose(got.weights, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got.guess_weights, np.mean([m.guess_weights for m in folds], axis=0),
                               rtol=1e-5, atol=1e-6)


def test_blend_mixes_the_full_tagger_with_the_fold_taggers():
    sentences = toy_sentences(30)
    inv = inventory_of(sentences)
    data = [encode(inv, s) for s in sentences]
    jk = jackknife(inv, data, folds=3, epochs=2, n_buckets=N_BUCKETS)
    model, lexicon = train_model(inv, data, epochs=3, n_buckets=N_BUCKETS)
    assert blend(model, inv, jk, 0.0) is model
    assert blend(model, inv, Jackknife([]), 0.5) is model
    mixed = blend(model, inv, jk, 0.25)
    np.testing.assert_allclose(mixed.weights, 0.75 * model.weights + 0.25 * jk.weights,
                               rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(mixed.guess_weights,
                               0.75 * model.guess_weights + 0.25 * jk.guess_weights,
                               rtol=1e-6, atol=1e-7)
    assert mixed.guesser_arrays()["keys"].tolist() == model.guesser_arrays()["keys"].tolist()
    assert not np.allclose(mixed.weights, model.weights)
    new = [encode(inv, s) for s in toy_sentences(40, seed=9)]
    right = sum(int((mixed.tag(with_lexicon(s.attrs, lexicon))[0] == s.upos).sum()) for s in new)
    assert right / sum(len(s.upos) for s in new) > 0.9


def test_bad_model_arguments():
    inv = inventory_of(toy_sentences(5))
    with pytest.raises(ValueError, match="power of two"):
        TaggerModel(len(inv.upos), 0, 0, inv.arrays(), 1000)
    arrays = inv.arrays()
    arrays["feats_ids"] = arrays["feats_ids"] + 1000
    with pytest.raises(ValueError, match="out of range"):
        TaggerModel(len(inv.upos), len(inv.xpos), len(inv.feats), arrays, N_BUCKETS)
    with pytest.raises(ValueError, match="no training word has a UPOS"):
        build_inventory([TokenRow("_", "_", "_", "x", "x")])
