"""The per-sentence cache of loss-augmented trees of the 1-slack structural
SVM (Joachims, Finley & Yu 2009, Section 4.2, "caching"): for every training
sentence the last ``size`` distinct trees the loss-augmented decoder
returned (int32 heads, with the gold tree they were compared with and their
Hamming loss), and the encoded sentence.

``aggregate`` builds the most violated 1-slack constraint the cache allows
at w, without decoding: for each sentence the cached tree of the largest
Delta - w . x_i(y), x_i(y) = phi(gold) - phi(y), or the gold tree when none
is positive, with x summed into a dense accumulator. The features are
computed again in C for the arcs where the tree and the gold tree differ
(the others cancel), so the cache holds trees, not feature vectors: a few
int32 per word. When the cache holds each sentence's most violated tree,
this is the constraint a decoding pass gives. ``block_update`` is the
dual step on one sentence's block (pairwise Frank-Wolfe, Osokin et al. 2016).
"""
import sys
from collections import OrderedDict

import numpy

from libc.stdint cimport int32_t, uint64_t

from ..features.first_order cimport FirstOrderFeatures
from ..features.sentence cimport Sentence


cdef class TreeCache:
    """At most ``size`` distinct trees per sentence key (the oldest goes
    first; a tree seen again moves to the back)."""

    cdef readonly int size
    cdef dict _entries   # key -> [Sentence, OrderedDict(hash -> [gold, tree, loss, beta]), ell]
    cdef readonly long long n_entries
    cdef FirstOrderFeatures _features
    cdef object _scratch, _dense, _block, _slots, _one
    cdef dict _gaps      # key -> the block's gap at its last step (sweep's skipping)

    def __init__(self, int size, FirstOrderFeatures features):
        if size < 1:
            raise ValueError(f"TreeCache: size must be >= 1, got {size}")
        self.size = size
        self._features = features
        self._entries = {}
        self._gaps = {}
        self.n_entries = 0
        self._scratch = None
        self._dense = None
        self._block = None
        self._slots = None
        self._one = None

    def __contains__(self, key):
        return key in self._entries

    def __len__(self):
        """The number of sentences with at least one cached tree."""
        return len(self._entries)

    def add(self, key, Sentence sentence, gold, tree, double loss):
        """Cache ``tree`` (heads, length n + 1) of ``sentence`` under ``key``,
        compared with ``gold`` and of Hamming loss ``loss``. Returns True if
        the tree was new to the sentence's cache."""
        gold = numpy.array(gold, dtype=numpy.int32)
        tree = numpy.array(tree, dtype=numpy.int32)
        if gold.shape != (sentence.n + 1,) or tree.shape != (sentence.n + 1,):
            raise ValueError(f"TreeCache.add: gold {gold.shape} and tree {tree.shape} need "
                             f"length {sentence.n + 1}")
        slot = self._entries.get(key)
        if slot is None:
            slot = self._entries[key] = [sentence, OrderedDict(), 0.0]
        trees = slot[1]
        if trees:
            # the sentence's trees share one gold array when they can
            first = next(iter(trees.values()))[0]
            if numpy.array_equal(first, gold):
                gold = first
        # (a 64-bit hash of the pair: a tree dropped by a collision is only a
        # vertex the cache lacks; the dual stays feasible)
        signature = hash(gold[1:].tobytes() + tree[1:].tobytes())
        if signature in trees:
            trees.move_to_end(signature)
            return False
        trees[signature] = [gold, tree, float(loss), 0.0]
        self.n_entries += 1
        self._gaps.pop(key, None)   # a new vertex: the block's gap is unknown
        return True

    def evict(self, key, w, double lam, double n):
        """Drop trees of sentence ``key`` beyond ``size``: unused ones
        (dual weight beta = 0), the oldest first, never the newest; beyond
        twice the size also used ones, of the smallest beta first. A dropped tree's share
        of w = (1/(lam n)) sum beta x and of the dual's linear term goes with
        it (w updated in place: still a feasible dual point). Returns the
        buckets of w that changed."""
        slot = self._entries[key]
        trees = slot[1]
        changed = []
        while len(trees) > self.size:
            # never the newest tree (the one just decoded); a tree in use
            # (beta > 0) only beyond twice the size
            items = list(enumerate(trees.items()))
            order = sorted(items[:len(items) - 1], key=lambda e: (e[1][1][3], e[0]))
            signature, entry = order[0][1]
            if entry[3] > 0.0 and len(trees) <= 2 * self.size:
                break
            if entry[3] > 0.0:
                changed.append(self._scale_into(slot[0], entry, w, -entry[3] / (lam * n)))
                slot[2] -= entry[3] * entry[2] / n
                self._gaps.pop(key, None)
            del trees[signature]
            self.n_entries -= 1
        return numpy.concatenate(changed) if changed else numpy.zeros(0, dtype=numpy.uint64)

    def evict_all(self, w, double lam, double n):
        """``evict`` on every sentence; the buckets of w that changed."""
        changed = [self.evict(key, w, lam, n) for key, slot in self._entries.items()
                   if len(slot[1]) > self.size]
        return numpy.concatenate(changed) if changed else numpy.zeros(0, dtype=numpy.uint64)

    def _scale_into(self, Sentence s, entry, w, double coef):
        """w += coef * x(entry); the buckets touched."""
        cdef double[::1] wv = w
        cap = self._features.tree_capacity(s)
        ga = numpy.zeros(cap, dtype=numpy.uint64)
        pb = numpy.zeros(cap, dtype=numpy.uint64)
        ha = numpy.empty(s.n + 1, dtype=numpy.int32)
        hb = numpy.empty(s.n + 1, dtype=numpy.int32)
        _wrong_arcs(entry[0], entry[1], ha, hb)
        n_g, n_p = _features_of(self._features, s, ha, hb, ga, pb)
        cdef uint64_t[::1] gv = ga
        cdef uint64_t[::1] pv = pb
        cdef int i
        for i in range(n_g):
            wv[gv[i]] += coef
        for i in range(n_p):
            wv[pv[i]] -= coef
        return numpy.concatenate([ga[:n_g], pb[:n_p]])

    def trees(self, key):
        """The cached ``(gold, tree, loss, beta)`` of a sentence, oldest first."""
        slot = self._entries.get(key)
        return [] if slot is None else [tuple(e) for e in slot[1].values()]

    @property
    def nbytes(self):
        """Bytes the cache takes, Python objects included: per sentence its
        token arrays (8 bytes per attribute and tag row per word) and gold
        array and its trees' table; per tree its array, entry, numbers and
        key."""
        total = 0
        for sentence, trees, _ in self._entries.values():
            total += 8 * (sentence.n + 3) * (4 + sentence.n_tagsets) + sys.getsizeof(trees)
            golds = {id(e[0]): e[0] for e in trees.values()}
            total += sum(sys.getsizeof(g) for g in golds.values())
            for signature, e in trees.items():
                total += (sys.getsizeof(e[1]) + sys.getsizeof(e) + sys.getsizeof(e[2])
                          + sys.getsizeof(e[3]) + sys.getsizeof(signature))
        return total

    def aggregate(self, w, acc):
        """The cache's most violated joint constraint at ``w`` (float64,
        dense): per sentence the cached tree of the largest positive
        Delta - w . x, its x = phi(gold) - phi(tree) added into ``acc``
        (float64, dense; not cleared here). Returns (sum of the chosen trees'
        losses, sum of their margins w . x, the number of sentences whose
        chosen tree is not the gold one)."""
        cdef FirstOrderFeatures features = self._features
        cdef double[::1] av = acc
        self._check(w, acc)
        cdef double loss_sum = 0.0, margin_sum = 0.0
        cdef long long n_violated = 0
        cdef int i, n_g, n_p
        cdef uint64_t[::1] ga, pb
        for s, trees, _ in self._entries.values():
            best, _, margin, ha, hb = self._best(s, trees, w)
            if best is None:
                continue
            loss_sum += best[2]
            margin_sum += margin
            n_violated += 1
            ga, pb = self._buffers(s)
            _wrong_arcs(best[0], best[1], ha, hb)
            n_g, n_p = _features_of(features, s, ha, hb, ga, pb)
            for i in range(n_g):
                av[ga[i]] += 1.0
            for i in range(n_p):
                av[pb[i]] -= 1.0
        return loss_sum, margin_sum, n_violated

    def _check(self, w, other=None):
        n = self._features.n_buckets
        if w.shape[0] != n or (other is not None and other.shape[0] != n):
            raise ValueError(f"TreeCache: dense vectors need {n} entries")

    def _buffers(self, Sentence s):
        cap = self._features.tree_capacity(s)
        if self._scratch is None or self._scratch[0].shape[0] < cap:
            self._scratch = (numpy.zeros(2 * cap, dtype=numpy.uint64),
                             numpy.zeros(2 * cap, dtype=numpy.uint64))
        return self._scratch

    def _best(self, Sentence s, trees, w):
        """(entry, violation, margin, ha, hb) of the cached tree of the largest
        positive violation (entry None: the gold tree)."""
        cdef uint64_t[::1] ga, pb
        ga, pb = self._buffers(s)
        cdef int32_t[::1] ha = numpy.empty(s.n + 1, dtype=numpy.int32)
        cdef int32_t[::1] hb = numpy.empty(s.n + 1, dtype=numpy.int32)
        cdef double margin, viol, best_viol = 0.0, best_margin = 0.0
        best = None
        for entry in trees.values():
            margin = _margin(self._features, s, entry[0], entry[1], ha, hb, ga, pb, w)
            viol = entry[2] - margin
            if viol > best_viol:
                best, best_viol, best_margin = entry, viol, margin
        return best, best_viol, best_margin, ha, hb

    def dual_linear(self):
        """sum_i ell_i = (1/n) sum_i sum_y beta_i(y) Delta_i(y)."""
        return float(sum(slot[2] for slot in self._entries.values()))

    def block_update(self, key, w, double lam, double n, mark, int steps=1):
        """Up to ``steps`` pairwise Frank-Wolfe steps on sentence ``key``'s
        block (Lacoste-Julien & Jaggi 2015; block-coordinate as Osokin et al.
        2016), its cached trees and the gold tree as the vertices: dual weight
        moves from the away tree (of the smallest violation among those in
        use) to the most violated one, with exact line search, so w (float64,
        dense) moves in place by delta / (lam n) (phi(away) - phi(best)).
        The block's distinct arcs (where a cached tree and the gold tree
        differ, on either side) get their features and scores once: a tree's
        margin is the sum over its wrong words of the gold arc's score minus
        its own arc's (trees of one sentence share most of those arcs).
        After a step the margins move by coef * (phi(away) - phi(best)) .
        x(tree), gathered per arc from the step's dense direction, so further
        steps on the block cost no feature extraction. ``mark``: a zero uint8
        vector of the table's size (scratch; left zero). Returns (the block's
        Frank-Wolfe duality gap before the first step, the buckets of w
        changed)."""
        cdef FirstOrderFeatures features = self._features
        slot = self._entries[key]
        cdef Sentence s = slot[0]
        entries = list(slot[1].values())
        cdef Py_ssize_t m = len(entries), t, i, k, p
        cdef int N = s.n + 1, c, h, a_i, got, side
        cdef Py_ssize_t n_arcs = 0, n_pairs = 0
        # per tree t, its wrong words as pairs (gold arc, own arc) of indices
        # into the block's arcs: pairs [pof[t], pof[t + 1])
        pairs = numpy.empty(2 * m * max(1, s.n), dtype=numpy.int32)
        cdef int32_t[::1] pr = pairs
        pair_offsets = numpy.zeros(m + 1, dtype=numpy.int64)
        cdef long long[::1] pof = pair_offsets
        arc_codes = numpy.empty(2 * m * max(1, s.n), dtype=numpy.int32)
        cdef int32_t[::1] ac = arc_codes
        cdef int32_t[::1] slots = self._arc_slots(N)   # code h * N + c -> arc index, else -1
        cdef const int32_t[::1] gold_heads
        cdef const int32_t[::1] heads
        for t in range(m):
            entry = entries[t]
            gold_heads = entry[0]
            heads = entry[1]
            for c in range(1, N):
                if gold_heads[c] == heads[c]:
                    continue
                for side in range(2):
                    h = gold_heads[c] if side == 0 else heads[c]
                    a_i = slots[h * N + c]
                    if a_i < 0:
                        a_i = slots[h * N + c] = <int32_t>n_arcs
                        ac[n_arcs] = h * N + c
                        n_arcs += 1
                    pr[n_pairs] = a_i
                    n_pairs += 1
            pof[t + 1] = n_pairs // 2
        # every arc's bucket ids [aof[a], aof[a + 1]) in one buffer, and its score
        arc_offsets = numpy.zeros(n_arcs + 1, dtype=numpy.int64)
        cdef long long[::1] aof = arc_offsets
        arc_scores = numpy.zeros(n_arcs, dtype=numpy.float64)
        cdef double[::1] asc = arc_scores
        cdef double[::1] wv = w
        cdef uint64_t[::1] ga
        ga, _ = self._buffers(s)
        cdef int32_t[::1] one = self._one_arc(N)   # -1 but for the arc at hand
        cdef uint64_t[::1] bf = self._block_buffer(0)
        cdef long long total = 0
        cdef double score
        for p in range(n_arcs):
            slots[ac[p]] = -1
            c = ac[p] % N
            one[c] = ac[p] // N
            with nogil:
                got = features.arcs_features_into(s, &one[0], &ga[0])
            one[c] = -1
            if got < 0:
                raise MemoryError("TreeCache: feature buffer")
            if total + got > bf.shape[0]:
                bf = self._block_buffer(total + got)
            score = 0.0
            for i in range(got):
                bf[total + i] = ga[i]
                score += wv[ga[i]]
            asc[p] = score
            total += got
            aof[p + 1] = total
        viols = numpy.zeros(m, dtype=numpy.float64)
        cdef double[::1] vl = viols
        for t in range(m):
            score = 0.0
            for p in range(pof[t], pof[t + 1]):
                score += asc[pr[2 * p]] - asc[pr[2 * p + 1]]
            vl[t] = entries[t][2] - score
        if self._dense is None or self._dense.shape[0] != w.shape[0]:
            self._dense = numpy.zeros(w.shape[0], dtype=numpy.float64)
        cdef double[::1] sc = self._dense
        cdef unsigned char[::1] mk = mark
        betas = numpy.array([entry[3] for entry in entries], dtype=numpy.float64)
        cdef double[::1] bt = betas
        cdef double viol, best_viol, away_viol, used, in_use, away_weight, gold_weight
        cdef double vv, delta, coef, dot, gap = 0.0, ell_change = 0.0
        cdef Py_ssize_t b, a, n_ids, v
        cdef uint64_t[::1] iv
        cdef long long cap = 0
        cdef double sign
        arc_dots = numpy.zeros(n_arcs if steps > 1 else 0, dtype=numpy.float64)
        cdef double[::1] adot = arc_dots
        changed = []
        for k in range(steps):
            b, a = -1, -1    # -1: the gold tree (violation 0)
            best_viol, away_viol, used, in_use = 0.0, 0.0, 0.0, 0.0
            # ties (within _TIE: an exact line search leaves the two trees
            # of its step at the same violation) go to the first tree, and
            # to a tree in use over the gold tree as the away vertex
            for t in range(m):
                viol = vl[t]
                if viol > best_viol + _TIE:
                    b, best_viol = t, viol
                if bt[t] > 0.0:
                    used += bt[t]
                    in_use += bt[t] * viol
                    if a < 0 or viol < away_viol - _TIE:
                        a, away_viol = t, viol
            gold_weight = 1.0 - used
            away_weight = 0.0
            if gold_weight > 1e-12 and (a < 0 or away_viol > _TIE):
                a, away_viol = -1, 0.0
                away_weight = gold_weight
            elif a >= 0:
                away_weight = bt[a]
            if k == 0:
                gap = (best_viol - in_use) / n
            if b == a or best_viol <= away_viol + _TIE or away_weight <= 0.0:
                break
            # sc = x(best) - x(away) = phi(away) - phi(best), x = phi(gold) - phi(tree)
            cap = 0
            for side in range(2):
                v = b if side == 0 else a
                if v >= 0:
                    for p in range(2 * pof[v], 2 * pof[v + 1]):
                        cap += aof[pr[p] + 1] - aof[pr[p]]
            ids = numpy.empty(cap, dtype=numpy.uint64)
            iv = ids
            n_ids = 0
            for side in range(2):
                v = b if side == 0 else a
                if v < 0:
                    continue
                sign = 1.0 if side == 0 else -1.0
                for p in range(pof[v], pof[v + 1]):
                    n_ids = _scatter_marked(sc, mk, bf, aof[pr[2 * p]], aof[pr[2 * p] + 1],
                                            sign, iv, n_ids)
                    n_ids = _scatter_marked(sc, mk, bf, aof[pr[2 * p + 1]],
                                            aof[pr[2 * p + 1] + 1], -sign, iv, n_ids)
            vv = 0.0
            for i in range(n_ids):
                vv += sc[iv[i]] * sc[iv[i]]
            delta = away_weight
            if vv > 0.0:
                delta = min(away_weight, (best_viol - away_viol) * lam * n / vv)
            coef = delta / (lam * n)
            for i in range(n_ids):
                wv[iv[i]] += coef * sc[iv[i]]
            if k + 1 < steps:
                # the margins move by coef * sc . x(tree): violations by minus that
                for p in range(n_arcs):
                    dot = 0.0
                    for i in range(aof[p], aof[p + 1]):
                        dot += sc[bf[i]]
                    adot[p] = dot
                for t in range(m):
                    dot = 0.0
                    for p in range(pof[t], pof[t + 1]):
                        dot += adot[pr[2 * p]] - adot[pr[2 * p + 1]]
                    vl[t] -= coef * dot
            for i in range(n_ids):
                sc[iv[i]] = 0.0
                mk[iv[i]] = 0
            if b >= 0:
                bt[b] += delta
                ell_change += delta * entries[b][2]
            if a >= 0:
                bt[a] = max(0.0, bt[a] - delta)
                ell_change -= delta * entries[a][2]
            changed.append(ids[:n_ids])
        self._gaps[key] = gap
        if not changed:
            return gap, numpy.zeros(0, dtype=numpy.uint64)
        for t in range(m):
            entries[t][3] = bt[t]
        slot[2] += ell_change / n
        return gap, changed[0] if len(changed) == 1 else numpy.unique(numpy.concatenate(changed))

    def _arc_slots(self, int N):
        """The reusable int32 map of arc codes h * N + c (at least N * N
        entries), -1 everywhere between uses."""
        if self._slots is None or self._slots.shape[0] < N * N:
            self._slots = numpy.full(N * N, -1, dtype=numpy.int32)
        return self._slots

    def _one_arc(self, int N):
        """The reusable int32 heads array of one arc (at least N entries), -1
        everywhere between uses."""
        if self._one is None or self._one.shape[0] < N:
            self._one = numpy.full(N, -1, dtype=numpy.int32)
        return self._one

    def _block_buffer(self, long long need):
        """The reusable uint64 buffer of a block's arc features (at least ``need``)."""
        if self._block is None or self._block.shape[0] < need:
            old = self._block
            self._block = numpy.zeros(max(need, 2 * (0 if old is None else old.shape[0]), 4096),
                                      dtype=numpy.uint64)
            if old is not None:
                self._block[:old.shape[0]] = old
        return self._block

    def sweep(self, w, double lam, double n, mark, changed, int steps=1,
              double skip_below=0.0):
        """``block_update`` on every cached sentence; sets ``changed`` (a bool
        mask of w's size) where w changed and returns the sum of their gaps
        (the duality gap over the joint constraints the cache can form, at
        the w before each step). ``skip_below`` > 0: a sentence whose gap at
        its last step was below it (and which has no new tree since) is
        skipped, its last gap counted instead (the blocks of large gap get
        the steps, as in Osokin et al. 2016's gap sampling)."""
        total = 0.0
        cdef unsigned char[::1] mv = changed.view(numpy.uint8)
        cdef uint64_t[::1] iv
        cdef Py_ssize_t i
        gaps = self._gaps
        for key in list(self._entries):
            if skip_below > 0.0:
                last = gaps.get(key)
                if last is not None and last < skip_below:
                    total += last
                    continue
            gap, ids = self.block_update(key, w, lam, n, mark, steps)
            total += gap
            iv = ids
            for i in range(iv.shape[0]):
                mv[iv[i]] = 1
        return total


cdef double _TIE = 1e-12


cdef Py_ssize_t _scatter_marked(double[::1] sc, unsigned char[::1] mk, uint64_t[::1] ids,
                                long long start, long long stop, double coef,
                                uint64_t[::1] out, Py_ssize_t k) noexcept nogil:
    """sc[ids[start:stop]] += coef; the ids not marked before (now marked)
    go to out[k:]; returns the new k."""
    cdef long long i
    for i in range(start, stop):
        sc[ids[i]] += coef
        if not mk[ids[i]]:
            mk[ids[i]] = 1
            out[k] = ids[i]
            k += 1
    return k


cdef tuple _features_of(FirstOrderFeatures features, Sentence s, int32_t[::1] ha,
                        int32_t[::1] hb, uint64_t[::1] ga, uint64_t[::1] pb):
    """The feature ids of the arcs ha (into ga) and hb (into pb); their counts."""
    cdef int n_g, n_p
    with nogil:
        n_g = features.arcs_features_into(s, &ha[0], &ga[0])
        n_p = features.arcs_features_into(s, &hb[0], &pb[0])
    if n_g < 0 or n_p < 0:
        raise MemoryError("TreeCache: feature buffer")
    return n_g, n_p


cdef void _wrong_arcs(const int32_t[::1] gold, const int32_t[::1] tree,
                      int32_t[::1] ha, int32_t[::1] hb) noexcept nogil:
    """ha / hb: the gold / tree heads of the words where they differ, -1 elsewhere."""
    cdef Py_ssize_t c
    ha[0] = -1
    hb[0] = -1
    for c in range(1, gold.shape[0]):
        if gold[c] != tree[c]:
            ha[c] = gold[c]
            hb[c] = tree[c]
        else:
            ha[c] = -1
            hb[c] = -1


cdef double _margin(FirstOrderFeatures features, Sentence s, const int32_t[::1] gold,
                    const int32_t[::1] tree, int32_t[::1] ha, int32_t[::1] hb,
                    uint64_t[::1] ga, uint64_t[::1] pb, const double[::1] w) except? -1e300:
    """w . (phi(gold) - phi(tree)) over the arcs where they differ."""
    cdef int n_g, n_p, i
    cdef double total = 0.0
    _wrong_arcs(gold, tree, ha, hb)
    n_g, n_p = _features_of(features, s, ha, hb, ga, pb)
    for i in range(n_g):
        total += w[ga[i]]
    for i in range(n_p):
        total -= w[pb[i]]
    return total
