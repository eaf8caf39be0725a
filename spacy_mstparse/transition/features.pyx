"""The feature set of Choo & Shivaditya (the Cornell CS 5740 report, 2020,
section 3) for an arc-standard configuration, as 64-bit hashed ids.

Groups (switchable for the ablation table):

* ``1w`` one-word: word, POS and word+POS of sigma0, beta0, beta1, beta2
  (a missing position gives the NONE value);
* ``2w`` two-word: sigma0.w+beta0.w (only for the word pairs in the model's
  list of the N most frequent pairs), sigma0.w+beta0.p, sigma0.p+beta0.w,
  sigma0.p+beta0.p;
* ``3w`` POS trigrams s0 b0 b1, b0 b1 b2, s0 b1 b2, s0 b0 b2;
* ``dep`` valence: the average number of left / right dependents of the
  words at sigma0 and beta0 in the training trees (four real values);
* ``wd`` word distance: tokens between sigma0 and beta0, and between beta0
  and beta1: two real values as in the seed, or (``binned``) an indicator of
  the distance bin (0, 1, 2, 3, 4, 5-7, 8-12, 13-20, 21+) for each;
* ``ic`` intervening content: each distinct word and POS strictly between
  sigma0 and beta0 (binary).

A bias feature (value 1) always fires: it is the SVMs' intercept. Words are
already lower-cased and mapped to UNK below the rare-word cut-off by the
component; this module only sees integer ids, and no string is ever built.
"""
from libc.stdint cimport uint64_t
from libc.stdlib cimport qsort

from ..features.hashing cimport fmix64, mix, mix3

from .arc_standard cimport State, stack_top, buffer_at

from ..features.hashing import string_id as get_string_id

GROUPS = {"1w": G_1W, "2w": G_2W, "3w": G_3W, "dep": G_DEP, "wd": G_WD, "ic": G_IC}
ALL_GROUPS = ("1w", "2w", "3w", "dep", "wd", "ic")
ROOT_WORD = get_string_id("<arcstd-root>")
ROOT_TAG = get_string_id("<arcstd-root-tag>")
UNK_WORD = get_string_id("<arcstd-unk>")
NONE_ID = get_string_id("<arcstd-none>")

# Template ids (small integers mixed into every hash).
cdef enum:
    T_1W = 1      # 1 .. 12: slot * 3 + (w, p, wp)
    T_WW = 20
    T_WP = 21
    T_PW = 22
    T_PP = 23
    T_S0B0B1 = 30
    T_B0B1B2 = 31
    T_S0B1B2 = 32
    T_S0B0B2 = 33
    T_DEP = 40    # 40 .. 43: s0.dl, s0.dr, b0.dl, b0.dr
    T_WD = 50     # 50: s0-b0, 51: b0-b1
    T_WD_BIN = 52  # 52: s0-b0 bin, 53: b0-b1 bin
    T_ICW = 60
    T_ICP = 61
    T_BIAS = 70

TEMPLATES = {
    "1w": T_1W, "ww": T_WW, "wp": T_WP, "pw": T_PW, "pp": T_PP,
    "s0b0b1": T_S0B0B1, "b0b1b2": T_B0B1B2, "s0b1b2": T_S0B1B2, "s0b0b2": T_S0B0B2,
    "dep": T_DEP, "wd": T_WD, "wd_bin": T_WD_BIN, "icw": T_ICW, "icp": T_ICP, "bias": T_BIAS,
}

cdef uint64_t NONE = NONE_ID


cdef int max_features(int n) noexcept nogil:
    return 40 + 2 * n


cdef int _cmp_u64(const void* a, const void* b) noexcept nogil:
    cdef uint64_t x = (<const uint64_t*>a)[0]
    cdef uint64_t y = (<const uint64_t*>b)[0]
    return (x > y) - (x < y)


cdef inline bint _in_sorted(const uint64_t* arr, int n, uint64_t key) noexcept nogil:
    cdef int lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if arr[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo < n and arr[lo] == key


cdef inline uint64_t pair_key(uint64_t w0, uint64_t w1) noexcept nogil:
    return mix3(T_WW, w0, w1)


cdef inline int distance_bin(int d) noexcept nogil:
    if d < 5:
        return d
    if d < 8:
        return 5
    if d < 13:
        return 6
    if d < 21:
        return 7
    return 8


cdef inline int _distance(uint64_t* ids, float* vals, int k, int which, int d,
                          bint binned) noexcept nogil:
    if binned:
        ids[k] = mix(T_WD_BIN + which, distance_bin(d))
        vals[k] = 1.0
    else:
        ids[k] = fmix64(T_WD + which)
        vals[k] = d
    return k + 1


cdef int extract(const Sent* x, const State* s, int groups, const uint64_t* pairs,
                 int n_pairs, uint64_t* ids, float* vals, uint64_t* scratch) noexcept nogil:
    """Fill ids/vals (room for max_features(n)) for the configuration s;
    returns the number of features. scratch needs room for 2 * n ids."""
    cdef int k = 0, slot, i, m, j
    cdef int pos[4]
    cdef uint64_t w[4]
    cdef uint64_t p[4]
    cdef uint64_t h
    pos[0] = stack_top(s)
    pos[1] = buffer_at(s, 0)
    pos[2] = buffer_at(s, 1)
    pos[3] = buffer_at(s, 2)
    for slot in range(4):
        if pos[slot] >= 0:
            w[slot] = x.word[pos[slot]]
            p[slot] = x.tag[pos[slot]]
        else:
            w[slot] = NONE
            p[slot] = NONE
    ids[k] = fmix64(T_BIAS)
    vals[k] = 1.0
    k += 1
    if groups & G_1W:
        for slot in range(4):
            ids[k] = mix(T_1W + 3 * slot, w[slot])
            ids[k + 1] = mix(T_1W + 3 * slot + 1, p[slot])
            ids[k + 2] = mix3(T_1W + 3 * slot + 2, w[slot], p[slot])
            vals[k] = vals[k + 1] = vals[k + 2] = 1.0
            k += 3
    if groups & G_2W:
        h = pair_key(w[0], w[1])
        if n_pairs > 0 and _in_sorted(pairs, n_pairs, h):
            ids[k] = h
            vals[k] = 1.0
            k += 1
        ids[k] = mix3(T_WP, w[0], p[1])
        ids[k + 1] = mix3(T_PW, p[0], w[1])
        ids[k + 2] = mix3(T_PP, p[0], p[1])
        vals[k] = vals[k + 1] = vals[k + 2] = 1.0
        k += 3
    if groups & G_3W:
        ids[k] = mix(mix3(T_S0B0B1, p[0], p[1]), p[2])
        ids[k + 1] = mix(mix3(T_B0B1B2, p[1], p[2]), p[3])
        ids[k + 2] = mix(mix3(T_S0B1B2, p[0], p[2]), p[3])
        ids[k + 3] = mix(mix3(T_S0B0B2, p[0], p[1]), p[3])
        vals[k] = vals[k + 1] = vals[k + 2] = vals[k + 3] = 1.0
        k += 4
    if groups & G_DEP:
        if pos[0] >= 0:
            ids[k] = fmix64(T_DEP)
            vals[k] = x.dl[pos[0]]
            ids[k + 1] = fmix64(T_DEP + 1)
            vals[k + 1] = x.dr[pos[0]]
            k += 2
        if pos[1] >= 0:
            ids[k] = fmix64(T_DEP + 2)
            vals[k] = x.dl[pos[1]]
            ids[k + 1] = fmix64(T_DEP + 3)
            vals[k + 1] = x.dr[pos[1]]
            k += 2
    if groups & G_WD:
        if pos[0] >= 0 and pos[1] >= 0:
            k = _distance(ids, vals, k, 0, pos[1] - pos[0] - 1, groups & G_WD_BINNED)
        if pos[1] >= 0 and pos[2] >= 0:
            k = _distance(ids, vals, k, 1, pos[2] - pos[1] - 1, groups & G_WD_BINNED)
    if groups & G_IC and pos[0] >= 0 and pos[1] > pos[0] + 1:
        m = 0
        for i in range(pos[0] + 1, pos[1]):
            scratch[m] = mix(T_ICW, x.word[i])
            scratch[m + 1] = mix(T_ICP, x.tag[i])
            m += 2
        qsort(scratch, m, sizeof(uint64_t), _cmp_u64)
        for j in range(m):
            if j == 0 or scratch[j] != scratch[j - 1]:
                ids[k] = scratch[j]
                vals[k] = 1.0
                k += 1
    return k


WORD_DISTANCE = ("value", "binned")


def group_mask(groups, word_distance="value"):
    """Bit mask of the feature groups named in ``groups`` (e.g. ["1w", "2w"])
    and of the word-distance encoding ("value" or "binned")."""
    if word_distance not in WORD_DISTANCE:
        raise ValueError(f"word_distance must be 'value' or 'binned', got {word_distance!r}")
    mask = G_WD_BINNED if word_distance == "binned" else 0
    for name in groups:
        if name not in GROUPS:
            raise ValueError(
                f"unknown feature group {name!r}; expected some of {list(ALL_GROUPS)}"
            )
        mask |= GROUPS[name]
    return mask


def pair_keys(const uint64_t[:] w0, const uint64_t[:] w1):
    """The hashed sigma0.w+beta0.w feature ids of aligned word-id arrays
    (used to build the list of the N most frequent pairs)."""
    import numpy
    out = numpy.empty(w0.shape[0], dtype="uint64")
    cdef uint64_t[:] o = out
    cdef Py_ssize_t i
    for i in range(w0.shape[0]):
        o[i] = pair_key(w0[i], w1[i])
    return out


def extract_features(const uint64_t[:] words, const uint64_t[:] tags, const float[:] dl,
                     const float[:] dr, stack, int front, int next_word, groups,
                     const uint64_t[:] pairs, word_distance="value"):
    """Python access to ``extract`` for a configuration given as a stack
    (list of positions, top last), buffer front and the next unshifted word.
    Returns (ids, vals) in extraction order."""
    import numpy
    cdef int n = words.shape[0] - 1
    if tags.shape[0] != n + 1 or dl.shape[0] != n + 1 or dr.shape[0] != n + 1:
        raise ValueError("words, tags, dl and dr must have the same length")
    stack_arr = numpy.zeros(n + 2, dtype="int32")
    stack_arr[: len(stack)] = stack
    cdef int[:] st = stack_arr
    cdef State s
    s.n = n
    s.stack = &st[0]
    s.stack_len = len(stack)
    s.front = front
    s.next = next_word
    cdef Sent x
    x.n = n
    x.word = &words[0]
    x.tag = &tags[0]
    x.dl = &dl[0]
    x.dr = &dr[0]
    ids = numpy.zeros(max_features(n), dtype="uint64")
    vals = numpy.zeros(max_features(n), dtype="float32")
    scratch = numpy.zeros(2 * n + 2, dtype="uint64")
    cdef uint64_t[:] idv = ids
    cdef float[:] vv = vals
    cdef uint64_t[:] sc = scratch
    cdef const uint64_t* pp = &pairs[0] if pairs.shape[0] else NULL
    cdef int k = extract(&x, &s, group_mask(groups, word_distance), pp, pairs.shape[0], &idv[0], &vv[0], &sc[0])
    return ids[:k], vals[:k]
