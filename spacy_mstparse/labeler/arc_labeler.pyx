"""Second-stage arc labeler (McDonald, Lerman & Pereira 2006, two-stage parser).

Given the unlabeled tree, each arc h -> c gets a dependency label from a
linear model over hashed arc features: words and tags of head and child,
their pairs, direction and binned distance, the tags around the child, the
head's own head, and the child's dependents (how many on each side, and the
tags of the outermost ones) — features the first stage cannot use.

Labeler versions (saved with the model; old models keep version 1):

- 1: one multi-class decision per arc (averaged multi-class perceptron).
- 2: McDonald et al. (2006)'s labeler: the labels of the dependents of one
  head, taken left to right, form a first-order Markov chain (transition
  features: previous label, the sides of the head the two dependents are
  on, head tag, child tag), decoded exactly per head by Viterbi and trained
  as a structured perceptron; extra arc features that see the head's other
  dependents (the adjacent siblings' tags, the child's rank among the
  head's dependents on its side) and the tags around the head; and labels
  restricted to those seen in training for the arc's (head tag, child tag,
  direction), all labels when that triple was never seen.

Weights live in a flat table of ``n_rows * n_labels`` floats: a feature hashes
to a row and reads the ``n_labels`` weights of that row, so scoring one arc
touches one contiguous row per feature. A transition feature is a row keyed
by the previous label, read at the current label. The word at the root
position always takes the root label, and no other word can. The features
themselves: ``label_features``.
"""
from libc.math cimport INFINITY
from libc.stdint cimport int32_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc

import numpy

from ..features.hashing cimport mix3
from ..features.sentence cimport Sentence
from ..learners.sparse import sparse_difference
from .label_features cimport (
    F_CHAIN, F_CONTEXT, F_DEP_BAGS, F_DEP_WORDS, F_RESTRICT, MAX_FEATS, N_TRANS, V1_MAX_FEATS,
    RowTable, arc_feature_rows, transition_feature_rows)
from .restrictions cimport LabelRestrictions
from .templates cimport *
from .templates import LABEL_TEMPLATE_NAMES, TRANSITION_TEMPLATE_NAMES
from .tree_context cimport C_LAST, C_PREV, N_CTX, tree_context

# What each labeler version uses (``label_features.Flag`` bits), and the
# version new models get.
CONTEXT, CHAIN, RESTRICT, DEP_WORDS, DEP_BAGS = (
    F_CONTEXT, F_CHAIN, F_RESTRICT, F_DEP_WORDS, F_DEP_BAGS)
VERSION_FLAGS = {1: 0, 2: F_CONTEXT | F_CHAIN | F_RESTRICT | F_DEP_WORDS | F_DEP_BAGS}
LATEST_VERSION = 2



cdef extern from *:
    void __builtin_prefetch(const void* p) noexcept nogil


cdef inline void prefetch_rows(const float* w, const uint64_t* rows, int k,
                               int L) noexcept nogil:
    """Start loading the ``k`` weight rows (``L`` floats each) at ``rows``."""
    cdef int j, l
    for j in range(k):
        for l in range(0, L, 16):
            __builtin_prefetch(&w[rows[j] + l])
        __builtin_prefetch(&w[rows[j] + L - 1])


cdef inline void sum_rows(const float* w, const uint64_t* rows, int k, int L,
                          double* e) noexcept nogil:
    """e[l] = the sum over the ``k`` rows of their weight of label l."""
    cdef int j, l
    for l in range(L):
        e[l] = 0.0
    for j in range(k):
        for l in range(L):
            e[l] += w[rows[j] + l]


cdef inline void sum_labels(const float* w, const uint64_t* rows, int k,
                            const int32_t* labels, int n, double* e) noexcept nogil:
    """e[l] = the sum over the ``k`` rows of their weight of label l, for
    the ``n`` labels listed."""
    cdef int i, j, l
    for i in range(n):
        l = labels[i]
        e[l] = 0.0
        for j in range(k):
            e[l] += w[rows[j] + l]


cdef class ArcLabeler:
    """Hashed arc label model (attributes and C API: arc_labeler.pxd).

    n_rows (int): rows in the weight table (a power of two).
    n_labels (int): number of labels.
    use_morph (bool): add the child's morphological features.
    version (int): labeler version (``VERSION_FLAGS``); ``flags`` overrides
        what it uses (ablations).
    """
    def __init__(self, uint64_t n_rows, int n_labels, bint use_morph=False, int version=1,
                 int flags=-1):
        if n_rows < 2 or (n_rows & (n_rows - 1)) != 0:
            raise ValueError(f"n_rows must be a power of two >= 2, got {n_rows}")
        if n_labels < 1:
            raise ValueError("the labeler needs at least one label")
        if version not in VERSION_FLAGS:
            raise ValueError(f"labeler version must be one of {sorted(VERSION_FLAGS)}, got {version}")
        self.n_rows = n_rows
        self.mask = n_rows - 1
        self.n_labels = n_labels
        self.table = RowTable(mask=self.mask, n_labels=n_labels)
        self.use_morph = use_morph
        self.version = version
        self.flags = VERSION_FLAGS[version] if flags < 0 else flags
        self.restriction_table = LabelRestrictions(n_labels)

    def __reduce__(self):
        return (_rebuild_labeler, (self.n_rows, self.n_labels, self.use_morph, self.version,
                                   self.flags, *self.restriction_table.arrays()))

    @property
    def n_weights(self):
        return self.n_rows * self.n_labels

    @property
    def uses_restrictions(self):
        return bool(self.flags & F_RESTRICT)

    # -- label restrictions ----------------------------------------------------------
    def set_restrictions(self, keys, allowed):
        """Install the allowed labels: ``keys`` (uint64, sorted, unique) of
        (head tag, child tag, direction) triples (``restriction_key``),
        ``allowed`` uint8 (n_keys, n_labels), 1 where the label was seen for
        that triple."""
        self.restriction_table = LabelRestrictions(self.n_labels, keys, allowed)

    def restrictions(self):
        """(keys, allowed) as ``set_restrictions`` takes them."""
        return self.restriction_table.arrays()

    def fit_restrictions(self, items):
        """Collect the allowed labels from gold trees: ``items`` are
        (Sentence, heads, label ids); labels < 0 are ignored."""
        seen = {}
        cdef Sentence s
        cdef int c
        for s, heads, labels in items:
            for c in range(1, s.n + 1):
                if labels[c] >= 0:
                    key = self._restriction_key(s, heads[c], c)
                    seen.setdefault(key, set()).add(int(labels[c]))
        self.restriction_table = LabelRestrictions.from_seen(self.n_labels, seen)

    def restriction_key(self, Sentence s, int h, int c):
        """The key of the arc h -> c in ``set_restrictions``' table."""
        return self._restriction_key(s, h, c)

    cdef uint64_t _restriction_key(self, Sentence s, int h, int c) noexcept nogil:
        cdef uint64_t* row = s.tag_row(0)
        return mix3(row[h], row[c], c > h)

    cdef const uint8_t* _allowed_row(self, Sentence s, int h, int c) noexcept nogil:
        """The allowed-label row of arc h -> c, or NULL (every label)."""
        if not (self.flags & F_RESTRICT) or self.restriction_table.n_keys == 0:
            return NULL
        return self.restriction_table.allowed_row(self._restriction_key(s, h, c))

    # -- features ----------------------------------------------------------------------
    cdef int arc_rows(self, Sentence s, const int32_t* heads, const int32_t* ctx, int c,
                      uint64_t* out, int32_t* kinds=NULL) noexcept nogil:
        """Weight-row offsets of the features of arc heads[c] -> c in ``out``
        (``label_features.arc_feature_rows`` with this labeler's settings)."""
        return arc_feature_rows(s, heads, ctx, c, self.flags,
                                V1_MAX_FEATS if self.version == 1 else MAX_FEATS,
                                self.use_morph, self.table, out, kinds)

    cdef int transition_rows(self, Sentence s, const int32_t* heads, const int32_t* ctx,
                             int c, int prev_label, uint64_t* out) noexcept nogil:
        """Rows of the transition features into arc heads[c] -> c from the
        previous dependent's label ``prev_label`` (``n_labels`` = none)."""
        return transition_feature_rows(s, heads, ctx, c, prev_label, self.table, out)

    cdef object _context(self, Sentence s, const int32_t[:] heads):
        """The (N_CTX, n+1) int32 tree context of ``heads`` (validated)."""
        cdef int c, h
        if heads.shape[0] != s.n + 1:
            raise ValueError(f"heads has length {heads.shape[0]}, expected {s.n + 1}")
        for c in range(1, s.n + 1):
            h = heads[c]
            if not (0 <= h <= s.n) or h == c:
                raise ValueError(f"invalid head {h} for word {c}")
        tree = numpy.ascontiguousarray(heads, dtype="int32")
        arrays = numpy.empty((N_CTX + 1, s.n + 1), dtype="int32")  # + one scratch row
        cdef const int32_t[::1] tv = tree
        cdef int32_t[:, ::1] ctx = arrays
        tree_context(s.n, &tv[0], &ctx[0, 0])
        return arrays[:N_CTX]

    # -- decoding ------------------------------------------------------------------------
    cdef void _arc_scores(self, Sentence s, const int32_t* heads, const int32_t* ctx,
                          const float* w, int c, double* e) noexcept nogil:
        """e[l]: the summed arc-feature weights of label l on the arc heads[c] -> c."""
        cdef uint64_t rows[MAX_FEATS]
        sum_rows(w, rows, self.arc_rows(s, heads, ctx, c, rows), self.n_labels, e)

    cdef void _emissions(self, Sentence s, const int32_t* heads, const int32_t* ctx,
                         const float* w, int root_label, double* E) noexcept nogil:
        """E[c * L + l]: arc score of label l for every word c, -inf for the
        labels it may not take (the root label off the root arc, labels
        outside the arc's restriction). Row 0 unused. Only the labels a word
        may take are summed (the same sums, in the same order)."""
        cdef int L = self.n_labels
        cdef uint64_t rows[2 * MAX_FEATS]   # this word's rows, the next word's
        cdef int32_t* labels = <int32_t*>malloc(L * sizeof(int32_t))   # NULL: sum every label
        cdef uint64_t* cur
        cdef int c, k, next_k = 0, l, n_ok
        cdef double* e
        cdef bint is_root
        cdef const uint8_t* ok
        if s.n > 0:   # the rows of word c + 1 are fetched while word c is summed
            next_k = self.arc_rows(s, heads, ctx, 1, rows + MAX_FEATS)
            prefetch_rows(w, rows + MAX_FEATS, next_k, L)
        for c in range(1, s.n + 1):
            e = E + c * L
            cur = rows + (c % 2) * MAX_FEATS
            k = next_k
            if c < s.n:
                next_k = self.arc_rows(s, heads, ctx, c + 1, rows + ((c + 1) % 2) * MAX_FEATS)
                prefetch_rows(w, rows + ((c + 1) % 2) * MAX_FEATS, next_k, L)
            is_root = heads[c] == 0 and root_label >= 0
            ok = NULL if is_root else self._allowed_row(s, heads[c], c)
            n_ok = 0   # the labels c may take, if listed
            if labels is not NULL and is_root:
                labels[0] = root_label
                n_ok = 1
            elif labels is not NULL and ok is not NULL:
                for l in range(L):
                    if ok[l] and not (l == root_label and L > 1):
                        labels[n_ok] = l
                        n_ok += 1
            if n_ok:
                for l in range(L):
                    e[l] = -INFINITY
                sum_labels(w, cur, k, labels, n_ok, e)
                continue
            sum_rows(w, cur, k, L, e)
            if is_root:
                for l in range(L):
                    if l != root_label:
                        e[l] = -INFINITY
                continue
            if root_label >= 0 and L > 1:
                e[root_label] = -INFINITY
            if ok is not NULL:
                for l in range(L):
                    if ok[l] and e[l] != -INFINITY:
                        n_ok += 1
                if n_ok:
                    for l in range(L):
                        if not ok[l]:
                            e[l] = -INFINITY
        free(labels)

    cdef void _viterbi(self, Sentence s, const int32_t* heads, const int32_t* ctx,
                       const float* w, const double* E, double* delta, int32_t* back,
                       int32_t* out) noexcept nogil:
        """Best label sequence of every head's dependents (left to right)
        under emissions E and the transition weights, into ``out``."""
        cdef int L = self.n_labels, n1 = s.n + 1
        cdef uint64_t rows[N_TRANS]
        cdef int h, c, p, l, j, pc, best
        cdef double v, t, base
        cdef const double* e
        # forward, left to right: c's previous dependent of the same head
        # (C_PREV) lies left of c, so its column is done
        for c in range(1, n1):
            e = E + c * L
            pc = ctx[C_PREV * n1 + c]
            for l in range(L):
                delta[c * L + l] = -INFINITY
                back[c * L + l] = -1
            if pc < 0:
                self.transition_rows(s, heads, ctx, c, L, rows)
                for l in range(L):
                    if e[l] == -INFINITY:
                        continue
                    t = 0.0
                    for j in range(N_TRANS):
                        t += w[rows[j] + l]
                    delta[c * L + l] = e[l] + t
            else:
                for p in range(L):
                    base = delta[pc * L + p]
                    if base == -INFINITY:
                        continue
                    self.transition_rows(s, heads, ctx, c, p, rows)
                    for l in range(L):
                        if e[l] == -INFINITY:
                            continue
                        v = base + e[l]
                        for j in range(N_TRANS):
                            v += w[rows[j] + l]
                        if v > delta[c * L + l]:
                            delta[c * L + l] = v
                            back[c * L + l] = p
        for h in range(n1):   # backtrack from each head's last dependent
            c = ctx[C_LAST * n1 + h]
            if c < 0:
                continue
            best = 0
            for l in range(1, L):
                if delta[c * L + l] > delta[c * L + best]:
                    best = l
            while c >= 0:
                out[c] = best
                best = back[c * L + best]
                c = ctx[C_PREV * n1 + c]

    cdef int predict_into(self, Sentence s, const int32_t* heads, const float* w,
                          int root_label, int32_t* out) noexcept nogil:
        """Label ids of the valid tree ``heads`` into out[0..n] (out[0] = -1)
        without the GIL: the chain's Viterbi / restricted argmax (version 2),
        or each arc's best label (version 1). Returns -1 if memory could not
        be allocated."""
        cdef int n1 = s.n + 1, L = self.n_labels
        cdef int c, k, j, l, best
        cdef uint64_t rows[MAX_FEATS]
        cdef bint structured = self.flags & (F_CHAIN | F_RESTRICT)
        cdef int32_t* ctx = <int32_t*>malloc((N_CTX + 1) * n1 * sizeof(int32_t))
        cdef double* E = <double*>malloc(n1 * L * sizeof(double))
        cdef double* delta = <double*>malloc(n1 * L * sizeof(double)) if structured else NULL
        cdef int32_t* back = <int32_t*>malloc(n1 * L * sizeof(int32_t)) if structured else NULL
        if ctx is NULL or E is NULL or (structured and (delta is NULL or back is NULL)):
            free(ctx); free(E); free(delta); free(back)
            return -1
        tree_context(s.n, heads, ctx)
        out[0] = -1
        if structured:
            self._emissions(s, heads, ctx, w, root_label, E)
            if self.flags & F_CHAIN:
                self._viterbi(s, heads, ctx, w, E, delta, back, out)
            else:
                for c in range(1, n1):
                    best = 0
                    for l in range(1, L):
                        if E[c * L + l] > E[c * L + best]:
                            best = l
                    out[c] = best
        else:
            for c in range(1, n1):
                if heads[c] == 0 and root_label >= 0:
                    out[c] = root_label
                    continue
                self._arc_scores(s, heads, ctx, w, c, E)
                best = -1
                for l in range(L):
                    if l == root_label:
                        continue
                    if best < 0 or E[l] > E[best]:
                        best = l
                out[c] = best if best >= 0 else 0
        free(ctx); free(E); free(delta); free(back)
        return 0

    def predict(self, Sentence s, const int32_t[:] heads, const float[::1] weights,
                int root_label=-1, float scale=1.0):
        """Label ids (int32, length n+1, entry 0 = -1) for the tree ``heads``.
        (The argmax does not depend on a positive ``scale``.)"""
        if <uint64_t>weights.shape[0] != self.n_rows * self.n_labels:
            raise ValueError("weights do not match the labeler's table size")
        self._context(s, heads)  # validates the tree
        tree = numpy.ascontiguousarray(heads, dtype="int32")
        cdef const int32_t[::1] tv = tree
        labels = numpy.full(s.n + 1, -1, dtype="int32")
        cdef int32_t[::1] out = labels
        cdef int status
        with nogil:
            status = self.predict_into(s, &tv[0], &weights[0], root_label, &out[0])
        if status != 0:
            raise MemoryError()
        return labels

    def sequence_score(self, Sentence s, const int32_t[:] heads, const int32_t[:] labels,
                       const float[::1] weights, int root_label=-1):
        """Score of the labelling ``labels`` of the tree ``heads`` (sum of its
        arc features' weights and, with the chain, its transitions' weights;
        -inf if a label is not allowed): what ``predict`` maximises."""
        if heads.shape[0] != s.n + 1 or labels.shape[0] != s.n + 1:
            raise ValueError("heads and labels need length n+1")
        cdef int L = self.n_labels
        arrays = self._context(s, heads)
        cdef int32_t[:, ::1] ctx = arrays
        E = numpy.empty((s.n + 1, L), dtype="float64")
        cdef double[:, ::1] e = E
        cdef const float* w = &weights[0]
        cdef uint64_t rows[N_TRANS]
        cdef int c, p, j
        self._emissions(s, &heads[0], &ctx[0, 0], w, root_label, &e[0, 0])
        total = 0.0
        for c in range(1, s.n + 1):
            total += e[c, labels[c]]
            if self.flags & F_CHAIN:
                p = ctx[C_PREV, c]
                self.transition_rows(s, &heads[0], &ctx[0, 0], c,
                                     L if p < 0 else labels[p], rows)
                for j in range(N_TRANS):
                    total += w[rows[j] + labels[c]]
        return total

    def label_scores(self, Sentence s, const int32_t[:] heads, const float[::1] weights,
                     int root_label=-1):
        """Score of every label for every arc of the tree ``heads``: float64
        (n+1, n_labels), row c for the arc heads[c] -> c (row 0 zeros). The
        scores ``predict`` maximises: version 1, each arc's label scores (it
        skips the root label for non-root words and gives root words the root
        label); with the label chain, the scores of c's label with the other
        labels fixed at those ``predict`` gives (the transitions from the
        previous dependent's label and into the next one's included), and
        -inf for labels outside the arc's restriction."""
        if heads.shape[0] != s.n + 1:
            raise ValueError(f"heads has length {heads.shape[0]}, expected {s.n + 1}")
        if <uint64_t>weights.shape[0] != self.n_rows * self.n_labels:
            raise ValueError("weights do not match the labeler's table size")
        cdef int L = self.n_labels
        scores = numpy.zeros((s.n + 1, L), dtype="float64")
        cdef double[:, ::1] out = scores
        arrays = self._context(s, heads)
        cdef int32_t[:, ::1] ctx = arrays
        cdef uint64_t rows[MAX_FEATS]
        cdef int c, k, j, l, p, nxt
        cdef const float* w = &weights[0]
        cdef const uint8_t* ok
        if self.flags & (F_CHAIN | F_RESTRICT):
            pred = self.predict(s, heads, weights, root_label)
            return self._conditional_scores(s, heads, ctx, w, pred, scores)
        with nogil:
            for c in range(1, s.n + 1):
                self._arc_scores(s, &heads[0], &ctx[0, 0], w, c, &out[c, 0])
        return scores

    cdef object _conditional_scores(self, Sentence s, const int32_t[:] heads,
                                    int32_t[:, ::1] ctx, const float* w, object pred,
                                    object scores):
        cdef int L = self.n_labels, n1 = s.n + 1
        cdef double[:, ::1] out = scores
        cdef const int32_t[::1] y = pred
        cdef uint64_t rows[MAX_FEATS]
        cdef uint64_t trans[N_TRANS]
        cdef int c, k, j, l, p, nxt
        cdef const uint8_t* ok
        # the label chain's successor of each word
        following = numpy.full(n1, -1, dtype="int32")
        cdef int32_t[::1] nx = following
        for c in range(1, n1):
            if ctx[C_PREV, c] >= 0:
                nx[ctx[C_PREV, c]] = c
        with nogil:
            for c in range(1, n1):
                self._arc_scores(s, &heads[0], &ctx[0, 0], w, c, &out[c, 0])
                if self.flags & F_CHAIN:
                    p = ctx[C_PREV, c]
                    self.transition_rows(s, &heads[0], &ctx[0, 0], c, L if p < 0 else y[p], trans)
                    for j in range(N_TRANS):
                        for l in range(L):
                            out[c, l] += w[trans[j] + l]
                    nxt = nx[c]
                    if nxt >= 0:
                        for l in range(L):
                            self.transition_rows(s, &heads[0], &ctx[0, 0], nxt, l, trans)
                            for j in range(N_TRANS):
                                out[c, l] += w[trans[j] + y[nxt]]
                ok = self._allowed_row(s, heads[c], c)
                if ok is not NULL:
                    for l in range(L):
                        if not ok[l]:
                            out[c, l] = -INFINITY
        return scores

    def arc_feature_rows(self, Sentence s, const int32_t[:] heads, int c):
        """The features of the arc heads[c] -> c in the tree ``heads``:
        ``(offsets, names)``, offsets (uint64) of their weight rows (the
        weight of label l is ``weights[offset + l]``) and the template name
        of each (``LABEL_TEMPLATE_NAMES``, "/tag2" / "/tag3" for the second /
        third tag column).
        The label chain's transition rows are not included (they depend on
        the neighbours' labels: ``transition_feature_rows``)."""
        if heads.shape[0] != s.n + 1:
            raise ValueError(f"heads has length {heads.shape[0]}, expected {s.n + 1}")
        if not 1 <= c <= s.n:
            raise ValueError(f"no word {c} in a sentence of {s.n} words")
        arrays = self._context(s, heads)
        cdef int32_t[:, ::1] ctx = arrays
        cdef uint64_t rows[MAX_FEATS]
        cdef int32_t kinds[MAX_FEATS]
        cdef int k = self.arc_rows(s, &heads[0], &ctx[0, 0], c, rows, kinds)
        offsets = numpy.array([rows[j] for j in range(k)], dtype="uint64")
        names = [LABEL_TEMPLATE_NAMES[kinds[j] % 64] + (f"/tag{kinds[j] // 64 + 1}"
                                                         if kinds[j] >= 64 else "")
                 for j in range(k)]
        return offsets, names

    def transition_feature_rows(self, Sentence s, const int32_t[:] heads, int c,
                                int prev_label):
        """``(offsets, names)`` of the label chain's transition features into
        arc heads[c] -> c from the previous dependent's label ``prev_label``
        (-1: c is its head's first dependent); empty without the chain."""
        if not self.flags & F_CHAIN:
            return numpy.zeros(0, dtype="uint64"), []
        arrays = self._context(s, heads)
        cdef int32_t[:, ::1] ctx = arrays
        cdef uint64_t rows[N_TRANS]
        self.transition_rows(s, &heads[0], &ctx[0, 0], c,
                             self.n_labels if prev_label < 0 else prev_label, rows)
        return (numpy.array([rows[j] for j in range(N_TRANS)], dtype="uint64"),
                [TRANSITION_TEMPLATE_NAMES[T_PREV + j] for j in range(N_TRANS)])

    def context(self, Sentence s, const int32_t[:] heads):
        """The tree context the features read (tests, ``explain``): dict of
        int32 arrays over positions 0..n: n_left, n_right, leftmost,
        rightmost, inner and outer sibling, rank, prev (previous dependent
        of the same head, left to right), last (last dependent); -1 = none."""
        arrays = self._context(s, heads)
        names = ("n_left", "n_right", "leftmost", "rightmost", "inner", "outer", "rank",
                 "prev", "last")
        return {name: arrays[i] for i, name in enumerate(names)}

    def update_vector(self, Sentence s, const int32_t[:] heads, const int32_t[:] gold,
                      const int32_t[:] predicted):
        """Sparse perceptron step: +features of the gold labelling, -features
        of the predicted one, for every arc labelled wrongly (and, with the
        label chain, every transition that differs).

        Returns (idx uint64 sorted unique, val float64, n_wrong)."""
        arrays = self._context(s, heads)
        cdef int32_t[:, ::1] ctx = arrays
        cdef uint64_t rows[MAX_FEATS]
        cdef int c, k, j, p, gp, yp
        cdef int L = self.n_labels
        cdef bint chain = self.flags & F_CHAIN
        # the gold labelling's feature ids (+1 each) and the predicted one's (-1)
        gold_ids = numpy.empty((s.n + 1) * (MAX_FEATS + N_TRANS), dtype="uint64")
        predicted_ids = numpy.empty_like(gold_ids)
        cdef uint64_t[::1] g = gold_ids
        cdef uint64_t[::1] q = predicted_ids
        cdef Py_ssize_t ng = 0, nq = 0
        n_wrong = 0
        for c in range(1, s.n + 1):
            if gold[c] < 0:
                continue
            if gold[c] != predicted[c]:
                n_wrong += 1
                k = self.arc_rows(s, &heads[0], &ctx[0, 0], c, rows)
                for j in range(k):
                    g[ng] = rows[j] + gold[c]
                    ng += 1
                    if predicted[c] >= 0:
                        q[nq] = rows[j] + predicted[c]
                        nq += 1
            if not chain:
                continue
            p = ctx[C_PREV, c]
            gp = L if p < 0 or gold[p] < 0 else gold[p]
            yp = L if p < 0 or predicted[p] < 0 else predicted[p]
            if gp == yp and gold[c] == predicted[c]:
                continue
            self.transition_rows(s, &heads[0], &ctx[0, 0], c, gp, rows)
            for j in range(N_TRANS):
                g[ng] = rows[j] + gold[c]
                ng += 1
            if predicted[c] >= 0:
                self.transition_rows(s, &heads[0], &ctx[0, 0], c, yp, rows)
                for j in range(N_TRANS):
                    q[nq] = rows[j] + predicted[c]
                    nq += 1
        idx, val = sparse_difference(gold_ids[:ng], predicted_ids[:nq])
        return idx, val, n_wrong


def _rebuild_labeler(n_rows, n_labels, use_morph, version, flags, keys, allowed):
    labeler = ArcLabeler(n_rows, n_labels, use_morph, version, flags)
    labeler.set_restrictions(keys, allowed)
    return labeler
