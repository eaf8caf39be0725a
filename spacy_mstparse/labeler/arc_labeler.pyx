"""Second-stage arc labeler (McDonald, Lerman & Pereira 2006, two-stage parser).

Given the unlabeled tree, each arc h -> c gets a dependency label from a
multi-class linear model over hashed arc features: words and tags of head and
child, their pairs, direction and binned distance, the tags around the child,
the head's own head, and the child's dependents (how many on each side, and
the tags of the outermost ones) — features the first stage cannot use.

Weights live in a flat table of ``n_rows * n_labels`` floats: a feature hashes
to a row and reads the ``n_labels`` weights of that row, so scoring one arc
touches one contiguous row per feature. The word at the root position always
takes the root label, and no other word can.
"""
from libc.stdint cimport int32_t, uint64_t
from libc.stdlib cimport free, malloc

import numpy

from ..features.hashing cimport mix, mix3
from ..features.sentence cimport Sentence

DEF MAX_FEATS = 64

cdef enum LabelTemplate:
    L_BIAS = 1
    L_HW
    L_CW
    L_HP
    L_CP
    L_HWCP
    L_HPCW
    L_HWCW
    L_HPCP
    L_HPCP_DD
    L_CP_DIR
    L_CW_DIR
    L_DD
    L_CTX_L
    L_CTX_R
    L_GP
    L_VAL
    L_LEFTMOST
    L_RIGHTMOST
    L_CX
    L_MORPH


cdef inline int bin3(int k) noexcept nogil:
    return k if k < 2 else 2


# Readable names of the label templates (``explain``); a tag template of the
# second tag column is reported with "/tag2".
LABEL_TEMPLATE_NAMES = {
    L_BIAS: "bias", L_HW: "h-word", L_CW: "c-word", L_HP: "h-pos", L_CP: "c-pos",
    L_HWCP: "h-word+c-pos", L_HPCW: "h-pos+c-word", L_HWCW: "h-word+c-word",
    L_HPCP: "h-pos+c-pos", L_HPCP_DD: "h-pos+c-pos+dir+dist", L_CP_DIR: "c-pos+dir",
    L_CW_DIR: "c-word+dir", L_DD: "dir+dist", L_CTX_L: "c-pos-1+c-pos+h-pos",
    L_CTX_R: "c-pos+c-pos+1+h-pos", L_GP: "g-pos+h-pos+c-pos",
    L_VAL: "c-pos+n-left+n-right", L_LEFTMOST: "c-pos+leftmost-dep-pos",
    L_RIGHTMOST: "c-pos+rightmost-dep-pos", L_CX: "c-prefix", L_MORPH: "c-morph",
}


cdef void _template_keys(const uint64_t* out, int k, int n_tagsets, bint use_morph,
                         bint is_long, int32_t* kinds) noexcept nogil:
    """The template key of each feature ``arc_rows`` emitted, in its order."""
    cdef int j = 0, t, x
    cdef int head[6]
    head[0] = L_BIAS; head[1] = L_HW; head[2] = L_CW; head[3] = L_HWCW
    head[4] = L_CW_DIR; head[5] = L_DD
    for x in range(6):
        kinds[j] = head[x]; j += 1
    if is_long:
        kinds[j] = L_CX; j += 1
    for t in range(n_tagsets):
        for x in range(L_HP, L_RIGHTMOST + 1):
            if x in (L_HW, L_CW, L_HWCW, L_CW_DIR, L_DD):
                continue
            kinds[j] = 32 * t + x; j += 1
    while j < k:
        kinds[j] = L_MORPH; j += 1


cdef void count_dependents(int n, const int32_t* heads, int32_t* n_left, int32_t* n_right,
                           int32_t* leftmost, int32_t* rightmost) noexcept nogil:
    """Per word: dependents on each side and the outermost one (-1: none)."""
    cdef int c, h
    for c in range(n + 1):
        n_left[c] = 0; n_right[c] = 0; leftmost[c] = -1; rightmost[c] = -1
    for c in range(1, n + 1):
        h = heads[c]
        if c < h:
            n_left[h] += 1
            if leftmost[h] < 0 or c < leftmost[h]:
                leftmost[h] = c
        else:
            n_right[h] += 1
            if c > rightmost[h]:
                rightmost[h] = c


cdef class ArcLabeler:
    """Hashed multi-class arc label model (attributes: arc_labeler.pxd).

    n_rows (int): rows in the weight table (a power of two).
    n_labels (int): number of labels.
    use_morph (bool): add the child's morphological features.
    """

    def __init__(self, uint64_t n_rows, int n_labels, bint use_morph=False):
        if n_rows < 2 or (n_rows & (n_rows - 1)) != 0:
            raise ValueError(f"n_rows must be a power of two >= 2, got {n_rows}")
        if n_labels < 1:
            raise ValueError("the labeler needs at least one label")
        self.n_rows = n_rows
        self.mask = n_rows - 1
        self.n_labels = n_labels
        self.use_morph = use_morph

    def __reduce__(self):
        return (ArcLabeler, (self.n_rows, self.n_labels, self.use_morph))

    @property
    def n_weights(self):
        return self.n_rows * self.n_labels

    cdef int arc_rows(self, Sentence s, const int32_t* heads, const int32_t* n_left,
                      const int32_t* n_right, const int32_t* leftmost,
                      const int32_t* rightmost, int c, uint64_t* out,
                      int32_t* kinds=NULL) noexcept nogil:
        """Weight-row offsets of the features of arc heads[c] -> c in ``out``;
        with ``kinds``, also each feature's template key (``tagset * 32 +
        LabelTemplate``, from the emission order below)."""
        cdef int h = heads[c]
        cdef int k = 0, t, m
        cdef int dd = (c - h if c > h else h - c)
        dd = dd if dd <= 5 else (6 if dd <= 10 else 7)
        dd = dd + (8 if c > h else 0)
        cdef uint64_t hW = s.word[h], cW = s.word[c], hP, cP, gP, tid
        cdef uint64_t* row
        out[k] = L_BIAS; k += 1
        out[k] = mix(L_HW, hW); k += 1
        out[k] = mix(L_CW, cW); k += 1
        out[k] = mix3(L_HWCW, hW, cW); k += 1
        out[k] = mix3(L_CW_DIR, cW, c > h); k += 1
        out[k] = mix(L_DD, dd); k += 1
        if s.is_long[c]:
            out[k] = mix(L_CX, s.prefix[c]); k += 1
        for t in range(s.n_tagsets):
            tid = 32 * t
            row = s.tag_row(t)
            hP = row[h]; cP = row[c]
            gP = row[heads[h]] if h > 0 else row[-1]
            out[k] = mix(tid + L_HP, hP); k += 1
            out[k] = mix(tid + L_CP, cP); k += 1
            out[k] = mix3(tid + L_HWCP, hW, cP); k += 1
            out[k] = mix3(tid + L_HPCW, hP, cW); k += 1
            out[k] = mix3(tid + L_HPCP, hP, cP); k += 1
            out[k] = mix(mix3(tid + L_HPCP_DD, hP, cP), dd); k += 1
            out[k] = mix3(tid + L_CP_DIR, cP, c > h); k += 1
            out[k] = mix(mix3(tid + L_CTX_L, row[c - 1], cP), hP); k += 1
            out[k] = mix(mix3(tid + L_CTX_R, cP, row[c + 1]), hP); k += 1
            out[k] = mix(mix3(tid + L_GP, gP, hP), cP); k += 1
            out[k] = mix(mix3(tid + L_VAL, cP, bin3(n_left[c])), bin3(n_right[c])); k += 1
            out[k] = mix3(tid + L_LEFTMOST, cP, row[leftmost[c]] if leftmost[c] >= 0 else 0); k += 1
            out[k] = mix3(tid + L_RIGHTMOST, cP, row[rightmost[c]] if rightmost[c] >= 0 else 0); k += 1
        if self.use_morph:
            for m in range(s.morph_start[c], s.morph_start[c + 1]):
                if k >= MAX_FEATS:
                    break
                out[k] = mix(L_MORPH, s.morph[m]); k += 1
        if kinds is not NULL:
            _template_keys(out, k, s.n_tagsets, self.use_morph, s.is_long[c], kinds)
        for m in range(k):
            out[m] = (out[m] & self.mask) * <uint64_t>self.n_labels
        return k

    cdef int _dependents(self, Sentence s, const int32_t[:] heads, int32_t* n_left,
                         int32_t* n_right, int32_t* leftmost, int32_t* rightmost) except -1:
        cdef int c, h
        for c in range(1, s.n + 1):
            h = heads[c]
            if not (0 <= h <= s.n) or h == c:
                raise ValueError(f"invalid head {h} for word {c}")
        count_dependents(s.n, &heads[0], n_left, n_right, leftmost, rightmost)
        return 0

    cdef int predict_into(self, Sentence s, const int32_t* heads, const float* w,
                          int root_label, int32_t* out) noexcept nogil:
        """Label ids of the tree ``heads`` (a valid tree) into out[1..n]
        (out[0] = -1). Returns -1 if memory could not be allocated."""
        cdef int N = s.n + 1, L = self.n_labels
        cdef int32_t* dep = <int32_t*>malloc(4 * N * sizeof(int32_t))
        cdef double* totals = <double*>malloc(L * sizeof(double))
        cdef uint64_t rows[MAX_FEATS]
        cdef int c, k, j, l, best
        if dep is NULL or totals is NULL:
            free(dep); free(totals)
            return -1
        count_dependents(s.n, heads, dep, dep + N, dep + 2 * N, dep + 3 * N)
        out[0] = -1
        for c in range(1, N):
            if heads[c] == 0 and root_label >= 0:
                out[c] = root_label
                continue
            k = self.arc_rows(s, heads, dep, dep + N, dep + 2 * N, dep + 3 * N, c, rows)
            for l in range(L):
                totals[l] = 0.0
            for j in range(k):
                for l in range(L):
                    totals[l] += w[rows[j] + l]
            best = -1
            for l in range(L):
                if l == root_label:
                    continue
                if best < 0 or totals[l] > totals[best]:
                    best = l
            out[c] = best if best >= 0 else 0
        free(dep); free(totals)
        return 0

    def predict(self, Sentence s, const int32_t[:] heads, const float[::1] weights,
                int root_label=-1, float scale=1.0):
        """Label ids (int32, length n+1, entry 0 = -1) for the tree ``heads``.
        (The argmax does not depend on a positive ``scale``.)"""
        if heads.shape[0] != s.n + 1:
            raise ValueError(f"heads has length {heads.shape[0]}, expected {s.n + 1}")
        if <uint64_t>weights.shape[0] != self.n_rows * self.n_labels:
            raise ValueError("weights do not match the labeler's table size")
        cdef int c, h, status
        for c in range(1, s.n + 1):
            h = heads[c]
            if not (0 <= h <= s.n) or h == c:
                raise ValueError(f"invalid head {h} for word {c}")
        tree = numpy.ascontiguousarray(heads, dtype="int32")
        cdef const int32_t[::1] tv = tree
        labels = numpy.full(s.n + 1, -1, dtype="int32")
        cdef int32_t[::1] out = labels
        with nogil:
            status = self.predict_into(s, &tv[0], &weights[0], root_label, &out[0])
        if status != 0:
            raise MemoryError()
        return labels

    def label_scores(self, Sentence s, const int32_t[:] heads, const float[::1] weights):
        """Score of every label for every arc of the tree ``heads``: float64
        (n+1, n_labels), row c for the arc heads[c] -> c (row 0 zeros). The
        scores ``predict`` maximises (it skips the root label for non-root
        words and gives root words the root label)."""
        if heads.shape[0] != s.n + 1:
            raise ValueError(f"heads has length {heads.shape[0]}, expected {s.n + 1}")
        if <uint64_t>weights.shape[0] != self.n_rows * self.n_labels:
            raise ValueError("weights do not match the labeler's table size")
        cdef int L = self.n_labels
        scores = numpy.zeros((s.n + 1, L), dtype="float64")
        cdef double[:, ::1] out = scores
        arrays = numpy.zeros((4, s.n + 1), dtype="int32")
        cdef int32_t[:, ::1] dep = arrays
        self._dependents(s, heads, &dep[0, 0], &dep[1, 0], &dep[2, 0], &dep[3, 0])
        cdef uint64_t rows[MAX_FEATS]
        cdef int c, k, j, l
        cdef const float* w = &weights[0]
        with nogil:
            for c in range(1, s.n + 1):
                k = self.arc_rows(s, &heads[0], &dep[0, 0], &dep[1, 0], &dep[2, 0], &dep[3, 0], c, rows)
                for j in range(k):
                    for l in range(L):
                        out[c, l] += w[rows[j] + l]
        return scores

    def arc_feature_rows(self, Sentence s, const int32_t[:] heads, int c):
        """The features of the arc heads[c] -> c in the tree ``heads``:
        ``(offsets, names)``, offsets (uint64) of their weight rows (the
        weight of label l is ``weights[offset + l]``) and the template name
        of each (``LABEL_TEMPLATE_NAMES``, "/tag2" for the second tag column)."""
        if heads.shape[0] != s.n + 1:
            raise ValueError(f"heads has length {heads.shape[0]}, expected {s.n + 1}")
        if not 1 <= c <= s.n:
            raise ValueError(f"no word {c} in a sentence of {s.n} words")
        arrays = numpy.zeros((4, s.n + 1), dtype="int32")
        cdef int32_t[:, ::1] dep = arrays
        self._dependents(s, heads, &dep[0, 0], &dep[1, 0], &dep[2, 0], &dep[3, 0])
        cdef uint64_t rows[MAX_FEATS]
        cdef int32_t kinds[MAX_FEATS]
        cdef int k = self.arc_rows(s, &heads[0], &dep[0, 0], &dep[1, 0], &dep[2, 0], &dep[3, 0],
                                   c, rows, kinds)
        offsets = numpy.array([rows[j] for j in range(k)], dtype="uint64")
        names = [LABEL_TEMPLATE_NAMES[kinds[j] % 32] + ("/tag2" if kinds[j] >= 32 else "")
                 for j in range(k)]
        return offsets, names

    def update_vector(self, Sentence s, const int32_t[:] heads, const int32_t[:] gold,
                      const int32_t[:] predicted):
        """Sparse multi-class perceptron step: +features on the gold label and
        -features on the predicted one, for every arc labelled wrongly.

        Returns (idx uint64 sorted unique, val float64, n_wrong)."""
        arrays = numpy.zeros((4, s.n + 1), dtype="int32")
        cdef int32_t[:, ::1] dep = arrays
        self._dependents(s, heads, &dep[0, 0], &dep[1, 0], &dep[2, 0], &dep[3, 0])
        cdef uint64_t rows[MAX_FEATS]
        cdef int c, k, j
        idx = []
        val = []
        n_wrong = 0
        for c in range(1, s.n + 1):
            if gold[c] < 0 or gold[c] == predicted[c]:
                continue
            n_wrong += 1
            k = self.arc_rows(s, &heads[0], &dep[0, 0], &dep[1, 0], &dep[2, 0], &dep[3, 0], c, rows)
            for j in range(k):
                idx.append(rows[j] + gold[c])
                val.append(1.0)
                if predicted[c] >= 0:
                    idx.append(rows[j] + predicted[c])
                    val.append(-1.0)
        if not idx:
            return numpy.zeros(0, dtype="uint64"), numpy.zeros(0, dtype="float64"), 0
        keys = numpy.asarray(idx, dtype="uint64")
        unique, inverse = numpy.unique(keys, return_inverse=True)
        sums = numpy.zeros(unique.shape[0], dtype="float64")
        numpy.add.at(sums, inverse, numpy.asarray(val, dtype="float64"))
        keep = sums != 0
        return unique[keep], sums[keep], n_wrong
