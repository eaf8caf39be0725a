"""The seed's feature set: hashed ids checked against a pure-Python reference
of the hash on a tiny sentence."""
import numpy
import pytest
from spacy.strings import get_string_id

from spacy_mstparse.transition.features import (
    ALL_GROUPS,
    NONE_ID,
    ROOT_TAG,
    ROOT_WORD,
    TEMPLATES,
    extract_features,
    group_mask,
    pair_keys,
)

M64 = (1 << 64) - 1


def fmix64(k):
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & M64
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & M64
    k ^= k >> 33
    return k


def mix(a, b):
    return fmix64((a * 0x9E3779B97F4A7C15 + b) & M64)


def mix3(a, b, c):
    return mix(mix(a, b), c)


def sentence():
    # "ROOT John likes big Mary ." with tags
    words = [ROOT_WORD] + [get_string_id(w) for w in ["john", "likes", "big", "mary", "."]]
    tags = [ROOT_TAG] + [get_string_id(t) for t in ["NNP", "VBZ", "JJ", "NNP", "."]]
    dl = numpy.array([0, 0.1, 1.5, 0, 0.7, 0], dtype="float32")
    dr = numpy.array([1, 0.2, 1.2, 0, 0.3, 0], dtype="float32")
    return numpy.array(words, dtype="uint64"), numpy.array(tags, dtype="uint64"), dl, dr


def as_dict(ids, vals):
    out = {}
    for i, v in zip(ids.tolist(), vals.tolist()):
        out[i] = out.get(i, 0.0) + v
    return out


def test_features_by_hand():
    words, tags, dl, dr = sentence()
    w = [int(x) for x in words]
    p = [int(x) for x in tags]
    T = TEMPLATES
    # configuration: stack [0, 1], buffer front 4 (after RIGHT-ARCs), next 5
    # -> sigma0 = 1 (john), beta0 = 4 (mary), beta1 = 5 (.), beta2 = none
    stack, front, nxt = [0, 1], 4, 5
    pairs = numpy.array(sorted([mix3(T["ww"], w[1], w[4])]), dtype="uint64")
    ids, vals = extract_features(words, tags, dl, dr, stack, front, nxt, ALL_GROUPS, pairs)
    got = as_dict(ids, vals)
    none = int(NONE_ID)
    slots = [(w[1], p[1]), (w[4], p[4]), (w[5], p[5]), (none, none)]
    expected = {fmix64(T["bias"]): 1.0}
    for k, (ww, pp) in enumerate(slots):
        expected[mix(T["1w"] + 3 * k, ww)] = 1.0
        expected[mix(T["1w"] + 3 * k + 1, pp)] = 1.0
        expected[mix3(T["1w"] + 3 * k + 2, ww, pp)] = 1.0
    expected[mix3(T["ww"], w[1], w[4])] = 1.0
    expected[mix3(T["wp"], w[1], p[4])] = 1.0
    expected[mix3(T["pw"], p[1], w[4])] = 1.0
    expected[mix3(T["pp"], p[1], p[4])] = 1.0
    expected[mix(mix3(T["s0b0b1"], p[1], p[4]), p[5])] = 1.0
    expected[mix(mix3(T["b0b1b2"], p[4], p[5]), none)] = 1.0
    expected[mix(mix3(T["s0b1b2"], p[1], p[5]), none)] = 1.0
    expected[mix(mix3(T["s0b0b2"], p[1], p[4]), none)] = 1.0
    expected[fmix64(T["dep"])] = pytest.approx(0.1)
    expected[fmix64(T["dep"] + 1)] = pytest.approx(0.2)
    expected[fmix64(T["dep"] + 2)] = pytest.approx(0.7)
    expected[fmix64(T["dep"] + 3)] = pytest.approx(0.3)
    expected[fmix64(T["wd"])] = 2.0  # likes, big between john and mary
    expected[fmix64(T["wd"] + 1)] = 0.0
    for i in (2, 3):
        expected[mix(T["icw"], w[i])] = 1.0
        expected[mix(T["icp"], p[i])] = 1.0
    assert got == expected
    assert len(ids) == len(expected)  # no duplicates
    # the pair feature fires only for listed pairs
    ids2, _ = extract_features(words, tags, dl, dr, stack, front, nxt, ALL_GROUPS,
                               numpy.zeros(0, dtype="uint64"))
    assert set(ids.tolist()) - set(ids2.tolist()) == {mix3(T["ww"], w[1], w[4])}
    assert pair_keys(words[[1]], words[[4]])[0] == mix3(T["ww"], w[1], w[4])
    # binned word distance: indicators of the bins instead of the values
    ids3, vals3 = extract_features(words, tags, dl, dr, stack, front, nxt, ["wd"], pairs,
                                   word_distance="binned")
    assert as_dict(ids3, vals3) == {fmix64(T["bias"]): 1.0, mix(T["wd_bin"], 2): 1.0,
                                    mix(T["wd_bin"] + 1, 0): 1.0}


@pytest.mark.parametrize("distance,expected_bin", [(0, 0), (4, 4), (5, 5), (7, 5), (8, 6),
                                                   (12, 6), (13, 7), (20, 7), (21, 8), (60, 8)])
def test_distance_bins(distance, expected_bin):
    n = distance + 2
    words = numpy.arange(1, n + 2, dtype="uint64")
    zeros = numpy.zeros(n + 1, dtype="float32")
    ids, _ = extract_features(words, words.copy(), zeros, zeros, [0, 1], distance + 2,
                              n + 1, ["wd"], numpy.zeros(0, dtype="uint64"),
                              word_distance="binned")
    assert mix(TEMPLATES["wd_bin"], expected_bin) in set(ids.tolist())


def test_groups_switch_templates_and_ic_is_a_set():
    words, tags, dl, dr = sentence()
    # intervening content with repeated words/tags counts each once
    words[2] = words[3]
    tags[2] = tags[3]
    empty = numpy.zeros(0, dtype="uint64")
    ids, vals = extract_features(words, tags, dl, dr, [0, 1], 4, 5, ["ic"], empty)
    assert len(ids) == 1 + 2 and numpy.all(vals == 1.0)
    only_bias, _ = extract_features(words, tags, dl, dr, [0, 1], 4, 5, [], empty)
    assert len(only_bias) == 1
    n = {g: len(extract_features(words, tags, dl, dr, [0, 1], 4, 5, [g], empty)[0]) - 1
         for g in ALL_GROUPS}
    assert n == {"1w": 12, "2w": 3, "3w": 4, "dep": 4, "wd": 2, "ic": 2}
    with pytest.raises(ValueError, match="unknown feature group"):
        group_mask(["4w"])
