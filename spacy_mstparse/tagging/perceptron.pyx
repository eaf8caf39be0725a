# cython: boundscheck=False, wraparound=False, cdivision=True
"""A greedy left-to-right morphological tagger trained as an averaged
perceptron (Collins 2002; the feature set of Ratnaparkhi 1996).

Each word gets up to three decisions, in order: UPOS among every UPOS class,
then XPOS and FEATS among the candidates seen with that UPOS in training
(``inventory.TagInventory``). A FEATS class scores as the sum of its own
weights and those of its attribute=value pairs, so rare FEATS combinations
share what their pairs learned (as in Straková et al. 2014's tag factors),
plus the features of the morphological guesser's guesses for the word
(``guesser.py``, after Hajič 2000 and Spoustová et al. 2009): the bin of the
candidate's share of the FEATS of training words with its ending, and of
each of its pairs' share of the pairs of training words with its stem. The
guesser's table is searched here (a binary search over sorted keys). The
guess features have weights of their own (``guess_weights``), a small table
apart from the word features'.
Features are hashed: a feature key (a template and the values it reads) and
the kind of decision give a block of one weight vector, whose class id-th
entry is the weight of the feature for that class (the scaled, lazily
averaged ``WeightTable`` of the parser's learners while training;
predictions use the averaged weights). A decision's candidates are read key
by key, from one block at a time: a few cache lines per key where a hash of
the key and the class would cost one miss per candidate (hundreds of FEATS
candidates per word in morphologically rich languages).
"""
from libc.stdint cimport int32_t, uint64_t
from libc.string cimport memset

import numpy

from ..features.hashing cimport mix, mix3
from ..learners.weight_table cimport WeightTable
from .guesser import empty_guesser
from .word_attributes import N_ATTRS

# word attribute columns (word_attributes.py)
cdef enum:
    A_LOWER = 0
    A_SHAPE = 1
    A_SUFFIX1 = 2
    MAX_SUFFIX = 4    # guesser.MAX_SUFFIX
    A_SUFFIX3 = 4
    A_AMBIGUITY = 10
    A_STEM1 = 11
    MAX_STEM_CUT = 3  # word_attributes.MAX_STEM_CUT
    STEM_KIND = 5     # guesser.STEM_KIND
    N_ATTRS_C = 11    # word_attributes.N_FEATURE_ATTRS
    N_WORD = 24       # word templates: bias, the attributes, 12 of the context
    N_HISTORY = 4     # templates of the tags chosen so far
    N_KEYS = N_WORD + N_HISTORY

# class kinds
cdef enum:
    K_UPOS = 1
    K_XPOS = 2
    K_FEATS = 3
    K_PAIR = 4

    K_GUESS = 5

# the guess features of a FEATS candidate (guesser.py) read bins of its share
# (and its pairs' shares) of the guesses
cdef enum:
    N_GUESS = 2       # ending-guess features of a candidate
    GUESS_BUCKETS = 1 << 16   # the guess features' own weights (a table of their own,
                              # so that these few, always firing features do not
                              # share buckets with the word features)
    G_NONE = 0        # no guess
    G_ABSENT = 1      # a guess without the candidate (or pair)

cdef uint64_t BEFORE = 1   # the value read left of the first word
cdef uint64_t AFTER = 2    # and right of the last


cdef inline uint64_t context(const uint64_t[:, ::1] attrs, Py_ssize_t j, int col) noexcept nogil:
    if j < 0:
        return BEFORE
    if j >= attrs.shape[0]:
        return AFTER
    return attrs[j, col]


cdef void word_keys(const uint64_t[:, ::1] attrs, Py_ssize_t i, uint64_t* keys) noexcept nogil:
    """The N_WORD word feature keys of word i."""
    cdef int t
    keys[0] = mix(1, 0)                       # bias
    for t in range(N_ATTRS_C):                # every attribute of the word
        keys[1 + t] = mix(2 + t, attrs[i, t])
    t = 1 + N_ATTRS_C
    keys[t] = mix(20, context(attrs, i - 1, A_LOWER))
    keys[t + 1] = mix(21, context(attrs, i + 1, A_LOWER))
    keys[t + 2] = mix(22, context(attrs, i - 2, A_LOWER))
    keys[t + 3] = mix(23, context(attrs, i + 2, A_LOWER))
    keys[t + 4] = mix(24, context(attrs, i - 1, A_SUFFIX3))
    keys[t + 5] = mix(25, context(attrs, i + 1, A_SUFFIX3))
    keys[t + 6] = mix3(26, context(attrs, i - 1, A_LOWER), attrs[i, A_LOWER])
    keys[t + 7] = mix3(27, attrs[i, A_LOWER], context(attrs, i + 1, A_LOWER))
    keys[t + 8] = mix3(28, context(attrs, i + 1, A_SHAPE), context(attrs, i + 1, A_SUFFIX1))
    keys[t + 9] = mix(29, context(attrs, i + 1, A_AMBIGUITY))
    keys[t + 10] = mix3(30, attrs[i, A_AMBIGUITY], context(attrs, i + 1, A_AMBIGUITY))
    keys[t + 11] = mix3(31, context(attrs, i - 1, A_AMBIGUITY), attrs[i, A_AMBIGUITY])


cdef inline void block_starts(const uint64_t* keys, int n_keys, int kind,
                              uint64_t* out) noexcept nogil:
    """The weight blocks of the feature keys for a kind of decision: the
    weight of key j for class c is at ``(out[j] + c) & mask``."""
    cdef int j
    for j in range(n_keys):
        out[j] = mix(keys[j], <uint64_t>kind)


cdef inline uint64_t guess_key(int upos, int kind, uint64_t string_id) noexcept nogil:
    """The guesser table's key (``guesser.guesser_key``)."""
    return mix3(<uint64_t>(upos + 1), <uint64_t>kind, string_id)


cdef class TaggerModel:
    """Weights and candidate lists of the tagger (``inventory.TagInventory``
    gives the arrays); ``tag`` predicts, ``train_sentence`` learns."""
    cdef readonly int n_upos, n_xpos, n_feats, n_pairs
    cdef readonly Py_ssize_t n_buckets
    cdef uint64_t mask
    cdef int32_t[::1] xpos_ptr, xpos_ids, feats_ptr, feats_ids, pairs_ptr, pairs_ids
    cdef readonly object weights       # float32 averaged weights, or None while training
    cdef readonly WeightTable table    # the training state, or None
    cdef double[::1] pair_cache
    cdef double[::1] cand_scores     # the candidates' scores of one decision
    cdef uint64_t pair_blocks[N_KEYS]   # the word's blocks of the pairs' weights
    cdef long long[::1] pair_stamp
    cdef long long stamp
    cdef object _xpos, _feats, _pairs    # (ptr, ids) arrays kept alive
    # the morphological guesser (guesser.py) and the guess of the current word
    cdef uint64_t[::1] g_keys
    cdef int32_t[::1] g_ptr, g_ids, g_counts
    cdef object _guesser
    cdef readonly object guess_weights      # float32 averaged, or None while training
    cdef readonly WeightTable guess_table   # their training state, or None
    cdef const float* gw                    # the guess weights _run reads, and their scale
    cdef double gscale
    cdef readonly int min_support
    cdef double[::1] g_count         # the ending guess: word types of each FEATS class
    cdef long long[::1] g_stamp
    cdef long long g_cur
    cdef double g_total
    cdef int g_src, g_upos           # the ending's length (0: no guess), the UPOS read
    cdef double[::1] s_pair          # the stem guess: word types of each pair
    cdef long long[::1] s_pair_stamp
    cdef long long s_cur
    cdef double s_total

    def __init__(self, int n_upos, int n_xpos, int n_feats, dict arrays,
                 Py_ssize_t n_buckets, weights=None):
        if n_buckets <= 0 or n_buckets & (n_buckets - 1):
            raise ValueError(f"n_buckets must be a power of two, got {n_buckets}")
        if n_upos <= 0:
            raise ValueError("the tagger needs at least one UPOS class")
        self.n_upos, self.n_xpos, self.n_feats = n_upos, n_xpos, n_feats
        self.n_buckets = n_buckets
        self.mask = <uint64_t>(n_buckets - 1)
        lists = {}
        for name in ("xpos", "feats", "pairs"):
            ptr = numpy.ascontiguousarray(arrays[name + "_ptr"], dtype=numpy.int32)
            ids = numpy.ascontiguousarray(arrays[name + "_ids"], dtype=numpy.int32)
            rows = n_upos if name != "pairs" else n_feats
            if ptr.shape[0] != rows + 1 or ptr[0] != 0 or ptr[rows] != ids.shape[0] \
                    or (ptr.shape[0] > 1 and numpy.any(numpy.diff(ptr) < 0)):
                raise ValueError(f"malformed candidate list {name!r}")
            lists[name] = (ptr, ids)
        self._xpos, self._feats, self._pairs = lists["xpos"], lists["feats"], lists["pairs"]
        self.xpos_ptr, self.xpos_ids = self._xpos
        self.feats_ptr, self.feats_ids = self._feats
        self.pairs_ptr, self.pairs_ids = self._pairs
        limits = {"xpos": n_xpos, "feats": n_feats}
        for name, limit in limits.items():
            ids = lists[name][1]
            if ids.shape[0] and (ids.min() < 0 or ids.max() >= limit):
                raise ValueError(f"candidate list {name!r} names a class out of range")
        pair_ids = self._pairs[1]
        self.n_pairs = int(pair_ids.max()) + 1 if pair_ids.shape[0] else 0
        self.pair_cache = numpy.zeros(max(self.n_pairs, 1), dtype=numpy.float64)
        self.cand_scores = numpy.zeros(max(n_upos, n_xpos, n_feats, 1), dtype=numpy.float64)
        self.pair_stamp = numpy.full(max(self.n_pairs, 1), -1, dtype=numpy.int64)
        self.stamp = 0
        self.g_count = numpy.zeros(max(n_feats, 1), dtype=numpy.float64)
        self.g_stamp = numpy.full(max(n_feats, 1), -1, dtype=numpy.int64)
        self.g_cur = 0
        self.s_pair = numpy.zeros(max(self.n_pairs, 1), dtype=numpy.float64)
        self.s_pair_stamp = numpy.full(max(self.n_pairs, 1), -1, dtype=numpy.int64)
        self.s_cur = 0
        self.s_total = 0.0
        self.g_src = G_NONE
        self.guess_table = WeightTable(GUESS_BUCKETS) if weights is None else None
        self.guess_weights = None if weights is None else numpy.zeros(GUESS_BUCKETS, dtype=numpy.float32)
        self.set_guesser(None)
        if weights is None:
            self.table = WeightTable(n_buckets)
            self.weights = None
        else:
            weights = numpy.ascontiguousarray(weights, dtype=numpy.float32)
            if weights.shape != (n_buckets,):
                raise ValueError(f"weights of shape {weights.shape}, expected ({n_buckets},)")
            self.weights = weights
            self.table = None

    def set_guesser(self, arrays, int min_support=1, weights=None):
        """Guess FEATS with the table ``arrays`` (``guesser.build_guesser``;
        None: no guess): an ending guesses when at least ``min_support``
        word types (other than the word's own) are behind it. ``weights``:
        the trained guess weights of a model loaded (``guess_weights``)."""
        if weights is not None:
            weights = numpy.ascontiguousarray(weights, dtype=numpy.float32)
            if weights.shape != (GUESS_BUCKETS,):
                raise ValueError(f"guess weights of shape {weights.shape}, expected ({GUESS_BUCKETS},)")
            if self.table is not None:
                raise ValueError("guess weights are for a trained model, not one in training")
        if arrays is None or not self.n_feats:
            arrays = empty_guesser()
        keys = numpy.ascontiguousarray(arrays["keys"], dtype=numpy.uint64)
        ptr = numpy.ascontiguousarray(arrays["ptr"], dtype=numpy.int32)
        ids = numpy.ascontiguousarray(arrays["ids"], dtype=numpy.int32)
        counts = numpy.ascontiguousarray(arrays["counts"], dtype=numpy.int32)
        if keys.ndim != 1 or ptr.ndim != 1 or ptr.shape[0] != keys.shape[0] + 1 or ptr[0] != 0 \
                or ptr[ptr.shape[0] - 1] != ids.shape[0] or counts.shape != ids.shape \
                or numpy.any(numpy.diff(ptr) < 0) \
                or numpy.any(keys[1:] <= keys[:keys.shape[0] - 1]):
            raise ValueError("malformed guesser table")
        if ids.shape[0] and (ids.min() < 0 or ids.max() >= self.n_feats or counts.min() <= 0):
            raise ValueError("the guesser table names a FEATS class out of range")
        if min_support < 1:
            raise ValueError(f"min_support must be at least 1, got {min_support}")
        self._guesser = {"keys": keys, "ptr": ptr, "ids": ids, "counts": counts}
        self.g_keys, self.g_ptr, self.g_ids, self.g_counts = keys, ptr, ids, counts
        self.min_support = min_support
        if weights is not None:
            self.guess_weights = weights

    def guesser_arrays(self):
        """The guesser table (``guesser.build_guesser``'s arrays)."""
        return dict(self._guesser)

    def guess(self, const uint64_t[:, ::1] attrs, Py_ssize_t i, int upos):
        """The guesses of word ``i`` read with a UPOS class id, as the tagger
        makes them (the word's own type left out): (the length of the ending
        that guesses, 0 for none; its {FEATS class id: word types}; the
        stem's {attribute=value pair id: word types})."""
        if attrs.shape[1] != N_ATTRS or not 0 <= i < attrs.shape[0] or not 0 <= upos < self.n_upos:
            raise ValueError("no such word or UPOS class")
        self._guess(attrs, i, upos)
        ending = {c: self.g_count[c] for c in range(self.n_feats)
                  if self.g_src != G_NONE and self.g_stamp[c] == self.g_cur and self.g_count[c] > 0}
        stem = {p: self.s_pair[p] for p in range(self.n_pairs)
                if self.s_total > 0 and self.s_pair_stamp[p] == self.s_cur}
        return self.g_src, ending, stem

    cdef Py_ssize_t _find(self, uint64_t key) noexcept nogil:
        """The guesser row of a key (-1: none)."""
        cdef Py_ssize_t lo = 0, hi = self.g_keys.shape[0], mid
        while lo < hi:
            mid = (lo + hi) >> 1
            if self.g_keys[mid] < key:
                lo = mid + 1
            else:
                hi = mid
        if lo < self.g_keys.shape[0] and self.g_keys[lo] == key:
            return lo
        return -1

    cdef inline double _own(self, Py_ssize_t own, int c) noexcept nogil:
        """1 when the word's own type (guesser row ``own``, -1: none) had
        FEATS class c: what it adds to a count of word types."""
        cdef Py_ssize_t r
        if own >= 0:
            for r in range(self.g_ptr[own], self.g_ptr[own + 1]):
                if self.g_ids[r] == c:
                    return 1.0
        return 0.0

    cdef void _guess(self, const uint64_t[:, ::1] attrs, Py_ssize_t i, int upos) noexcept nogil:
        """The guesses of word i read with ``upos``, without the word's own
        type (in training as at parse time, so that a training word is
        guessed as a new one would be): the ending guess (g_src, g_count,
        g_total) and the stem guess (s_pair, s_total)."""
        cdef Py_ssize_t own, row, p
        cdef int k, c
        cdef double total
        self.g_cur += 1
        self.g_src = G_NONE
        self.g_total = 0.0
        self.g_upos = upos
        self.s_cur += 1
        self.s_total = 0.0
        if upos < 0 or self.g_keys.shape[0] == 0:
            return
        own = self._find(guess_key(upos, 0, attrs[i, A_LOWER]))
        for k in range(MAX_SUFFIX, 0, -1):          # the longest ending with the support
            if attrs[i, A_SUFFIX1 + k - 1] == 0:
                continue
            row = self._find(guess_key(upos, k, attrs[i, A_SUFFIX1 + k - 1]))
            if row < 0:
                continue
            self.g_cur += 1
            total = 0.0
            for p in range(self.g_ptr[row], self.g_ptr[row + 1]):
                c = self.g_ids[p]
                self.g_stamp[c] = self.g_cur
                self.g_count[c] = self.g_counts[p] - self._own(own, c)
                total += self.g_count[c]
            if total >= self.min_support:
                self.g_src, self.g_total = k, total
                break
        self._stem_guess(attrs, i, upos, own)

    cdef void _stem_guess(self, const uint64_t[:, ::1] attrs, Py_ssize_t i, int upos,
                          Py_ssize_t own) noexcept nogil:
        """The attribute=value pairs of the other training words with the
        longest stem of word i (its form without its last one to
        MAX_STEM_CUT characters), counted in word types."""
        cdef Py_ssize_t row, p, q
        cdef int k, c, pair
        cdef double n, total
        for k in range(1, MAX_STEM_CUT + 1):
            if attrs[i, A_STEM1 + k - 1] == 0:
                continue
            row = self._find(guess_key(upos, STEM_KIND, attrs[i, A_STEM1 + k - 1]))
            if row < 0:
                continue
            self.s_cur += 1
            total = 0.0
            for p in range(self.g_ptr[row], self.g_ptr[row + 1]):
                c = self.g_ids[p]
                n = self.g_counts[p] - self._own(own, c)
                if n <= 0:
                    continue
                total += n
                for q in range(self.pairs_ptr[c], self.pairs_ptr[c + 1]):
                    pair = self.pairs_ids[q]
                    if self.s_pair_stamp[pair] != self.s_cur:
                        self.s_pair_stamp[pair] = self.s_cur
                        self.s_pair[pair] = 0.0
                    self.s_pair[pair] += n
            if total > 0:
                self.s_total = total
                return
        self.s_cur += 1

    cdef inline int _ending_bin(self, int c) noexcept nogil:
        """The bin of a FEATS candidate's share of the ending guess."""
        cdef double share
        if self.g_src == G_NONE:
            return G_NONE
        if self.g_stamp[c] != self.g_cur or self.g_count[c] <= 0:
            return G_ABSENT
        share = self.g_count[c] / self.g_total
        return 2 + (share >= 0.05) + (share >= 0.2) + (share >= 0.5) + (share >= 0.9)

    cdef void _guess_buckets(self, int c, uint64_t* buckets) noexcept nogil:
        """The N_GUESS buckets of a FEATS candidate's ending-guess features."""
        cdef uint64_t b = <uint64_t>self._ending_bin(c), src = <uint64_t>self.g_src
        buckets[0] = mix(mix3(90, src, b), K_GUESS) & (GUESS_BUCKETS - 1)
        buckets[1] = mix(mix3(91, mix(src, b), <uint64_t>(self.g_upos + 3)), K_GUESS) & (GUESS_BUCKETS - 1)

    cdef inline uint64_t _stem_bucket(self, int pair) noexcept nogil:
        """The bucket of an attribute=value pair's stem-guess feature: the
        pair and the bin of its share of the stem guess."""
        cdef uint64_t b
        cdef double share
        if self.s_total <= 0:
            b = G_NONE
        elif self.s_pair_stamp[pair] != self.s_cur:
            b = G_ABSENT
        else:
            share = self.s_pair[pair] / self.s_total
            b = 2 + (share >= 0.5) + (share >= 0.99)
        return mix(mix3(93, <uint64_t>pair, b), K_GUESS) & (GUESS_BUCKETS - 1)

    def averaged(self):
        """The averaged weights (float32), from the training state."""
        return self.table.averaged() if self.table is not None else self.weights

    def averaged_guess(self):
        """The averaged guess weights (float32), from the training state."""
        return self.guess_table.averaged() if self.guess_table is not None else self.guess_weights

    def finish(self):
        """Keep the averaged weights for prediction and drop the training state."""
        if self.table is not None:
            self.weights = self.table.averaged()
            self.table = None
        if self.guess_table is not None:
            self.guess_weights = self.guess_table.averaged()
            self.guess_table = None

    def tag(self, const uint64_t[:, ::1] attrs, weights=None):
        """(upos, xpos, feats) class ids of a sentence (int32; -1 for a
        column not predicted), from ``weights`` (default: the averaged ones)."""
        if attrs.shape[1] != N_ATTRS:
            raise ValueError(f"attrs must have {N_ATTRS} columns")
        w = self.averaged() if weights is None else numpy.ascontiguousarray(weights, dtype=numpy.float32)
        if w.shape[0] != self.n_buckets:
            raise ValueError("weights of the wrong length")
        cdef float[::1] wv = w
        cdef float[::1] gv = self.averaged_guess()
        cdef Py_ssize_t n = attrs.shape[0]
        out = numpy.full((3, n), -1, dtype=numpy.int32)
        cdef int32_t[:, ::1] o = out
        self.gw, self.gscale = &gv[0], 1.0
        if n:
            self._run(attrs, &wv[0], 1.0, &o[0, 0], &o[1, 0], &o[2, 0], NULL, NULL, NULL, 0)
        return out[0], out[1], out[2]

    def train_sentence(self, const uint64_t[:, ::1] attrs, const int32_t[::1] upos,
                       const int32_t[::1] xpos, const int32_t[::1] feats):
        """One perceptron pass over a sentence with its gold class ids (-1:
        unknown, no update for that decision); returns the number of wrong
        decisions (with the current weights)."""
        if self.table is None:
            raise ValueError("the tagger's training is finished")
        cdef Py_ssize_t n = attrs.shape[0]
        if upos.shape[0] != n or xpos.shape[0] != n or feats.shape[0] != n:
            raise ValueError("gold arrays must have one value per word")
        if n == 0:
            return 0
        out = numpy.full((3, n), -1, dtype=numpy.int32)
        cdef int32_t[:, ::1] o = out
        cdef int errors
        self.gw, self.gscale = &self.guess_table._v[0], self.guess_table.scale
        errors = self._run(attrs, &self.table._v[0], self.table.scale,
                           &o[0, 0], &o[1, 0], &o[2, 0], &upos[0], &xpos[0], &feats[0], 1)
        return errors

    cdef int _choose(self, const uint64_t* blocks, int n_keys, int kind,
                     const int32_t* cands, int n_cands, const float* w, double scale) noexcept nogil:
        """The best candidate of a decision (-1 when there is none); ``blocks``:
        the weight blocks of the word's keys for this kind of decision."""
        cdef int best = -1, k, c, p, j
        cdef double best_score = 0.0, score
        cdef uint64_t gb[N_GUESS]
        cdef uint64_t start, mask = self.mask
        cdef double* own = &self.cand_scores[0]
        for k in range(n_cands):
            own[k] = 0.0
        for j in range(n_keys):       # key by key: one block of weights at a time
            start = blocks[j]
            if cands == NULL:
                for k in range(n_cands):
                    own[k] += w[(start + <uint64_t>k) & mask]
            else:
                for k in range(n_cands):
                    own[k] += w[(start + <uint64_t>cands[k]) & mask]
        for k in range(n_cands):
            c = cands[k] if cands != NULL else k
            score = own[k] * scale
            if kind == K_FEATS:
                for p in range(self.pairs_ptr[c], self.pairs_ptr[c + 1]):
                    score += self._pair_score(n_keys, self.pairs_ids[p], w, scale)
                if self.g_keys.shape[0]:
                    self._guess_buckets(c, gb)
                    score += (self.gw[gb[0]] + self.gw[gb[1]]) * self.gscale
                    for p in range(self.pairs_ptr[c], self.pairs_ptr[c + 1]):
                        score += self.gw[self._stem_bucket(self.pairs_ids[p])] * self.gscale
            if best < 0 or score > best_score:
                best, best_score = c, score
        return best

    cdef double _pair_score(self, int n_keys, int pair, const float* w,
                            double scale) noexcept nogil:
        """The score of an attribute=value pair for the current word (computed
        once per word: ``pair_blocks`` are its keys' blocks of pair weights)."""
        cdef double total = 0.0
        cdef int j
        if self.pair_stamp[pair] != self.stamp:
            for j in range(n_keys):
                total += w[(self.pair_blocks[j] + <uint64_t>pair) & self.mask]
            self.pair_stamp[pair] = self.stamp
            self.pair_cache[pair] = total * scale
        return self.pair_cache[pair]

    cdef void _update(self, const uint64_t* blocks, int n_keys, int kind, int c,
                      double step) noexcept nogil:
        """Add ``step`` to the weights of class c (``blocks`` as in ``_choose``)."""
        cdef uint64_t buckets[N_KEYS]
        cdef double ones[N_KEYS]
        cdef int j, p
        for j in range(n_keys):
            ones[j] = 1.0
            buckets[j] = (blocks[j] + <uint64_t>c) & self.mask
        self.table.add_ptr(buckets, ones, n_keys, step)
        if kind == K_FEATS:
            for p in range(self.pairs_ptr[c], self.pairs_ptr[c + 1]):
                for j in range(n_keys):
                    buckets[j] = (self.pair_blocks[j] + <uint64_t>self.pairs_ids[p]) & self.mask
                self.table.add_ptr(buckets, ones, n_keys, step)
            if self.g_keys.shape[0]:
                self._guess_buckets(c, buckets)
                self.guess_table.add_ptr(buckets, ones, N_GUESS, step)
                for p in range(self.pairs_ptr[c], self.pairs_ptr[c + 1]):
                    buckets[0] = self._stem_bucket(self.pairs_ids[p])
                    self.guess_table.add_ptr(buckets, ones, 1, step)

    cdef int _decide(self, uint64_t* keys, int kind, int upos, int gold,
                     const float* w, double scale, bint train, int* errors) noexcept nogil:
        """One decision of a word: its candidates, the choice and, when
        training, the update; returns the class chosen (the next decisions
        read it, in training too)."""
        cdef const int32_t* cands = NULL
        cdef int n_cands, choice
        cdef uint64_t blocks[N_KEYS]
        if kind == K_UPOS:
            n_cands = self.n_upos
        elif kind == K_XPOS:
            cands = &self.xpos_ids[0] + self.xpos_ptr[upos] if self.xpos_ids.shape[0] else NULL
            n_cands = self.xpos_ptr[upos + 1] - self.xpos_ptr[upos]
        else:
            self.stamp += 1      # a new word: the pairs' scores are computed again
            block_starts(keys, N_KEYS, K_PAIR, self.pair_blocks)
            cands = &self.feats_ids[0] + self.feats_ptr[upos] if self.feats_ids.shape[0] else NULL
            n_cands = self.feats_ptr[upos + 1] - self.feats_ptr[upos]
        block_starts(keys, N_KEYS, kind, blocks)
        choice = self._choose(blocks, N_KEYS, kind, cands, n_cands, w, scale) if n_cands else -1
        if train and gold >= 0:
            if choice != gold:
                errors[0] += 1
                # a gold class outside the candidates is not learned (it would never be chosen)
                if kind == K_UPOS or self._is_candidate(gold, cands, n_cands):
                    self._update(blocks, N_KEYS, kind, gold, 1.0)
                    if choice >= 0:
                        self._update(blocks, N_KEYS, kind, choice, -1.0)
        return choice

    cdef bint _is_candidate(self, int c, const int32_t* cands, int n_cands) noexcept nogil:
        cdef int k
        for k in range(n_cands):
            if cands[k] == c:
                return True
        return False

    cdef int _run(self, const uint64_t[:, ::1] attrs, const float* w, double scale,
                  int32_t* out_upos, int32_t* out_xpos, int32_t* out_feats,
                  const int32_t* gold_upos, const int32_t* gold_xpos,
                  const int32_t* gold_feats, bint train) except -1:
        """Tag a sentence left to right (and learn from it when training);
        returns the number of wrong decisions."""
        cdef Py_ssize_t i, n = attrs.shape[0]
        cdef uint64_t keys[N_KEYS]
        cdef int errors = 0, u, u1 = -1, u2 = -1, x1 = -1, f1 = -1, g
        cdef uint64_t lower, suffix3
        for i in range(n):
            word_keys(attrs, i, keys)
            lower, suffix3 = attrs[i, A_LOWER], attrs[i, A_SUFFIX3]
            # UPOS, reading the two tags before
            keys[N_WORD] = mix(60, <uint64_t>(u1 + 3))
            keys[N_WORD + 1] = mix3(61, <uint64_t>(u2 + 3), <uint64_t>(u1 + 3))
            keys[N_WORD + 2] = mix3(62, <uint64_t>(u1 + 3), lower)
            keys[N_WORD + 3] = mix3(63, <uint64_t>(u1 + 3), suffix3)
            u = self._decide(keys, K_UPOS, -1, gold_upos[i] if train else -1, w, scale, train, &errors)
            out_upos[i] = u
            # XPOS and FEATS, reading the UPOS chosen
            keys[N_WORD] = mix(70, <uint64_t>(u + 3))
            keys[N_WORD + 1] = mix3(71, <uint64_t>(u + 3), suffix3)
            keys[N_WORD + 2] = mix3(72, <uint64_t>(u + 3), lower)
            if self.n_xpos:
                keys[N_WORD + 3] = mix3(73, <uint64_t>(u + 3), <uint64_t>(x1 + 3))
                g = gold_xpos[i] if train else -1
                x1 = self._decide(keys, K_XPOS, u, g, w, scale, train, &errors)
                out_xpos[i] = x1
            if self.n_feats:
                if self.g_keys.shape[0]:
                    self._guess(attrs, i, u)
                keys[N_WORD + 3] = mix3(74, <uint64_t>(u + 3), <uint64_t>(f1 + 3))
                g = gold_feats[i] if train else -1
                f1 = self._decide(keys, K_FEATS, u, g, w, scale, train, &errors)
                out_feats[i] = f1
            u2, u1 = u1, u
            if train:
                self.table.tick()
                self.guess_table.tick()
        return errors
