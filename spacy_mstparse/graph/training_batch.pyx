"""The decoding half of training, for a mini-batch of sentences, in C over threads.

For each fully annotated sentence of a batch, with one frozen weight vector
(the batch start's): the factor scores (arcs; siblings from order 2;
grandparents at order 3, arcs pruned as the model prunes them in training),
the Hamming loss on every non-gold arc for loss-augmented learners, the k
best trees (``decoders.dispatch.decode_c``, every decoder and order), each
tree's wrong heads and, at first and second order, the update vector
phi(gold) - phi(tree) of every wrong tree. Sentences are
taken one at a time (an atomic counter) by ``n_threads`` threads - the
caller and ``n_threads - 1`` pooled Python threads, each in one C loop
without the GIL. (An OpenMP parallel loop was slower: its idle threads spin
between the blocks, which on a loaded machine takes CPU from the
updates; BENCHMARKS.md.) Each sentence runs exactly the C code that
``GraphTrainer.constraints`` reaches through the Python wrappers, on the same
float32 arithmetic, so the result does not depend on the number of threads
and equals the serial one.

This is the parallel stage of mini-batch training with delayed updates
(Zhao & Huang 2013, "Minibatch and parallelization for online large margin
structured learning"; Sun & Ma 2017): the learner then steps on the stored
constraints one sentence after the other (``GraphTrainer``).
"""
from concurrent.futures import ThreadPoolExecutor

from cpython.ref cimport PyObject
from libc.stdint cimport int32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset

import numpy

from ..decoders.dispatch cimport add_hamming_loss_c, decode_c
from ..decoders.factors cimport CFactors
from ..decoders.dispatch import DECODERS
from ..features.first_order cimport FirstOrderFeatures
from ..features.grandparent cimport GrandparentFeatures
from ..features.second_order cimport SiblingFeatures
from ..features.sentence cimport Sentence
from ..features.weights cimport Weights, weights_view
from ..learners.sparse cimport merge_sorted_counts
from .batch cimport check_sentences, free_factors, score_factors

cdef extern from *:
    """
    static inline int mst_next_index(int* counter) {
        return __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
    }
    """
    int mst_next_index(int* counter) nogil

cdef enum Status:
    DONE = 0
    NO_MEMORY = -1
    NO_TREE = 1


cdef struct Work:
    # inputs
    PyObject* sentence
    const int32_t* gold     # n + 1 gold heads (all known)
    int* trees              # k rows of n + 1 heads
    # outputs
    int m                   # trees found
    int* n_wrong            # k: wrong heads of each tree
    uint64_t** idx          # k: phi(gold) - phi(tree) of each wrong tree (orders 1, 2)
    double** val
    Py_ssize_t* n_diff
    int status


cdef inline void _swap(uint64_t* a, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
    cdef uint64_t t = a[i]
    a[i] = a[j]
    a[j] = t


cdef void _sort_ids(uint64_t* a, Py_ssize_t n) noexcept nogil:
    """Sort ``a[:n]`` ascending: quicksort (median of three, recursion on
    the smaller part) with insertion sort below 16 items."""
    cdef Py_ssize_t lo = 0, hi = n - 1, i, j, mid
    cdef uint64_t pivot, x
    while hi - lo >= 16:
        mid = lo + (hi - lo) // 2
        if a[mid] < a[lo]:
            _swap(a, mid, lo)
        if a[hi] < a[lo]:
            _swap(a, hi, lo)
        if a[hi] < a[mid]:
            _swap(a, hi, mid)
        pivot = a[mid]
        i, j = lo, hi
        while i <= j:
            while a[i] < pivot:
                i += 1
            while a[j] > pivot:
                j -= 1
            if i <= j:
                _swap(a, i, j)
                i += 1
                j -= 1
        if j - lo < hi - i:
            _sort_ids(a + lo, j - lo + 1)
            lo = i
        else:
            _sort_ids(a + i, hi - i + 1)
            hi = j
    for i in range(lo + 1, hi + 1):
        x = a[i]
        j = i - 1
        while j >= lo and a[j] > x:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = x


cdef enum:
    RADIX_BITS = 11              # the digit of the radix sort: 2,048 counters
    RADIX = 1 << RADIX_BITS
    RADIX_MIN_IDS = 256          # below this many ids, quicksort


cdef void _radix_sort_ids(uint64_t* a, uint64_t* tmp, Py_ssize_t n) noexcept nogil:
    """Sort ``a[:n]`` ascending: least-significant-digit radix sort on
    ``RADIX_BITS``-bit digits, as many passes as the largest id has digits
    (two for 2^22 buckets); ``tmp`` has room for n ids."""
    cdef size_t counts[RADIX]
    cdef size_t total, count
    cdef uint64_t all_bits = 0
    cdef uint64_t* src = a
    cdef uint64_t* dst = tmp
    cdef uint64_t* swap
    cdef Py_ssize_t i
    cdef int shift = 0, d
    for i in range(n):
        all_bits |= a[i]
    while shift < 64 and (all_bits >> shift) != 0:
        memset(counts, 0, sizeof(counts))
        for i in range(n):
            counts[(src[i] >> shift) & (RADIX - 1)] += 1
        total = 0
        for d in range(RADIX):
            count = counts[d]
            counts[d] = total
            total += count
        for i in range(n):
            d = (src[i] >> shift) & (RADIX - 1)
            dst[counts[d]] = src[i]
            counts[d] += 1
        swap = src
        src = dst
        dst = swap
        shift += RADIX_BITS
    if src != a:
        memcpy(a, src, n * sizeof(uint64_t))


cdef int _part_features(FirstOrderFeatures first, SiblingFeatures sibling, Sentence s,
                        const int32_t* heads, const int32_t* arcs, const char* sides,
                        uint64_t* out, uint64_t* tmp) noexcept nogil:
    """The sorted bucket ids of a part of the tree ``heads``: the arcs
    ``arcs[c] -> c`` (a negative head: no arc) and, with ``sibling``, the
    factors of every side of a head marked in ``sides`` (2 h + 1: h's
    right side, 2 h: its left). ``tmp``: as much room, for the sort; their
    number, or -1 when out of memory."""
    cdef int total = first.arcs_features_into(s, arcs, out), h
    if total < 0:
        return -1
    if sibling is not None:
        for h in range(s.n + 1):
            if sides[2 * h + 1]:
                total += sibling.side_features_into(s, heads, h, True, out + total)
            if sides[2 * h]:
                total += sibling.side_features_into(s, heads, h, False, out + total)
    if total >= RADIX_MIN_IDS:
        _radix_sort_ids(out, tmp, total)
    elif total > 0:
        _sort_ids(out, total)
    return total


cdef int _differences(FirstOrderFeatures first, SiblingFeatures sibling, Sentence s,
                      Work* wk) noexcept nogil:
    """Update vectors of the wrong trees of ``wk`` (first and second order).
    Features are per factor, so phi(gold) - phi(tree) is the difference
    over the factors where the two trees differ: the arcs where they
    differ and the sibling (and stop) factors of the sides of heads whose
    dependents there differ. Only those are extracted and sorted (the
    result equals ``sparse_difference`` of the whole trees)."""
    cdef int N = s.n + 1, t, c, n_gold, n_pred, rc = DONE
    cdef size_t cap = first.tree_capacity(s)
    if sibling is not None:
        cap += sibling.tree_capacity(s)
    cdef uint64_t* gold_ids = <uint64_t*>malloc(cap * sizeof(uint64_t))
    cdef uint64_t* pred_ids = <uint64_t*>malloc(cap * sizeof(uint64_t))
    cdef int32_t* gold_part = <int32_t*>malloc(N * sizeof(int32_t))
    cdef int32_t* pred_part = <int32_t*>malloc(N * sizeof(int32_t))
    cdef char* sides = <char*>malloc(2 * N * sizeof(char))
    cdef uint64_t* sort_room = <uint64_t*>malloc(cap * sizeof(uint64_t))
    cdef const int32_t* tree
    if gold_ids is NULL or pred_ids is NULL or gold_part is NULL or pred_part is NULL \
            or sides is NULL or sort_room is NULL:
        rc = NO_MEMORY
    for t in range(wk.m if rc == DONE else 0):
        if wk.n_wrong[t] == 0:
            continue
        tree = <const int32_t*>wk.trees + t * N
        gold_part[0] = pred_part[0] = -1
        memset(sides, 0, 2 * N * sizeof(char))
        for c in range(1, N):
            if tree[c] != wk.gold[c]:
                gold_part[c] = wk.gold[c]
                pred_part[c] = tree[c]
                # c left or joined a side of its gold head and of its head in the tree
                sides[2 * wk.gold[c] + (c > wk.gold[c])] = 1
                sides[2 * tree[c] + (c > tree[c])] = 1
            else:
                gold_part[c] = pred_part[c] = -1
        n_gold = _part_features(first, sibling, s, wk.gold, gold_part, sides, gold_ids,
                                sort_room)
        n_pred = _part_features(first, sibling, s, tree, pred_part, sides, pred_ids, sort_room)
        if n_gold < 0 or n_pred < 0:
            rc = NO_MEMORY
            break
        wk.idx[t] = <uint64_t*>malloc((n_gold + n_pred + 1) * sizeof(uint64_t))
        wk.val[t] = <double*>malloc((n_gold + n_pred + 1) * sizeof(double))
        if wk.idx[t] is NULL or wk.val[t] is NULL:
            rc = NO_MEMORY
            break
        wk.n_diff[t] = merge_sorted_counts(gold_ids, n_gold, pred_ids, n_pred,
                                           wk.idx[t], wk.val[t])
    free(gold_ids); free(pred_ids); free(gold_part); free(pred_part); free(sides)
    free(sort_room)
    return rc


cdef int decode_one(FirstOrderFeatures first, SiblingFeatures sibling,
                    GrandparentFeatures grand, Sentence s, const Weights* w, float scale,
                    int decoder, int keep, int k, bint loss_augmented, bint differences,
                    Work* wk) noexcept nogil:
    """Scores, loss, k best trees, wrong heads (and update vectors) of one sentence."""
    cdef int N = s.n + 1, c, t, rc
    cdef CFactors f
    wk.m = 0
    if score_factors(first, sibling, grand, s, w, scale, keep, &f) != 0:
        return NO_MEMORY
    if loss_augmented:
        add_hamming_loss_c(<float*>f.arc, s.n, <const int*>wk.gold)
    wk.m = decode_c(&f, decoder, k, wk.trees, NULL)
    free_factors(&f)
    if wk.m <= 0:
        rc = NO_TREE if wk.m == 0 else NO_MEMORY
        wk.m = 0
        return rc
    for t in range(wk.m):
        wk.n_wrong[t] = 0
        for c in range(1, N):
            wk.n_wrong[t] += wk.trees[t * N + c] != wk.gold[c]
    if differences:
        return _differences(first, sibling, s, wk)
    return DONE


cdef class _Block:
    """One call's shared state; ``run`` decodes sentences until none is left."""
    cdef FirstOrderFeatures first
    cdef SiblingFeatures sibling
    cdef GrandparentFeatures grand
    cdef Weights w
    cdef float scale
    cdef bint loss_augmented, differences
    cdef int decoder, keep, k, m, counter
    cdef Work* work

    def run(self):
        cdef FirstOrderFeatures first = self.first
        cdef SiblingFeatures sibling = self.sibling
        cdef GrandparentFeatures grand = self.grand
        cdef int i
        with nogil:
            while True:
                i = mst_next_index(&self.counter)
                if i >= self.m:
                    break
                self.work[i].status = decode_one(
                    first, sibling, grand, <Sentence>self.work[i].sentence, &self.w,
                    self.scale, self.decoder, self.keep, self.k, self.loss_augmented,
                    self.differences, &self.work[i])


_POOLS = {}


def _pool(int n_workers):
    """The process's pool of ``n_workers`` helper threads (made once)."""
    if n_workers not in _POOLS:
        _POOLS[n_workers] = ThreadPoolExecutor(n_workers, thread_name_prefix="mst-train")
    return _POOLS[n_workers]


def decode_for_training(list sentences, list golds, model, weights, float scale,
                        int k, bint loss_augmented, int n_threads=1):
    """For each ``(Sentence, gold heads)`` (every head known, n >= 1): the
    (up to) k best trees of ``model`` (a ``GraphModel``: its feature
    extractors, decoder and training pruning) under ``scale * weights`` (a
    float32 vector), the Hamming loss added if ``loss_augmented``, as
    ``(trees, n_wrong, diffs)``: int32 (m, n+1) heads best first, each
    tree's wrong heads, and at orders 1 and 2 each tree's ``(idx, val)`` =
    phi(gold) - phi(tree) as ``sparse_difference`` gives it (None for a tree
    without wrong heads; ``diffs`` is None at order 3)."""
    if n_threads < 1 or k < 1:
        raise ValueError(f"n_threads and k must be >= 1, got {n_threads}, {k}")
    if len(golds) != len(sentences):
        raise ValueError("one gold tree per sentence")
    cdef FirstOrderFeatures first = model.first_order
    cdef Weights w
    weights_view(weights, first.n_buckets, &w)
    cdef int m = len(sentences), i, t
    cdef bint differences = model.grandparent is None
    check_sentences(sentences, first)
    trees, gold_arrays = [], []
    for sentence, gold in zip(sentences, golds):
        gold = numpy.ascontiguousarray(gold, dtype=numpy.int32)
        n = (<Sentence>sentence).n
        if n < 1 or gold.shape[0] != n + 1 or gold[1:].min() < 0 or gold[1:].max() > n:
            raise ValueError("decode_for_training needs full gold trees of n >= 1 words")
        gold_arrays.append(gold)
        trees.append(numpy.full((k, n + 1), -1, dtype=numpy.int32))
    cdef Work* work = <Work*>calloc(max(1, m), sizeof(Work))
    if work is NULL:
        raise MemoryError()
    cdef const int32_t[::1] gv
    cdef int[:, ::1] tv
    cdef bint no_memory = False
    for i in range(m):
        work[i].sentence = <PyObject*>sentences[i]
        gv = gold_arrays[i]
        tv = trees[i]
        work[i].gold = &gv[0]
        work[i].trees = &tv[0, 0]
        work[i].n_wrong = <int*>calloc(k, sizeof(int))
        work[i].idx = <uint64_t**>calloc(k, sizeof(uint64_t*))
        work[i].val = <double**>calloc(k, sizeof(double*))
        work[i].n_diff = <Py_ssize_t*>calloc(k, sizeof(Py_ssize_t))
        no_memory |= (work[i].n_wrong is NULL or work[i].idx is NULL or work[i].val is NULL
                      or work[i].n_diff is NULL)
    cdef _Block block = _Block()
    block.first, block.sibling, block.grand = first, model.sibling, model.grandparent
    block.w, block.scale, block.decoder = w, scale, DECODERS[model.decoder].code
    block.keep, block.k, block.loss_augmented = model.pruning(False), k, loss_augmented
    block.differences, block.work, block.m, block.counter = differences, work, m, 0
    if no_memory:
        pass
    elif n_threads > 1 and m > 1:
        futures = [_pool(n_threads - 1).submit(block.run) for _ in range(min(m, n_threads) - 1)]
        block.run()
        for future in futures:
            future.result()
    else:
        block.run()
    results = []
    worst = NO_MEMORY if no_memory else DONE
    cdef Py_ssize_t j
    cdef uint64_t[::1] iv
    cdef double[::1] vv
    for i in range(m):
        if work[i].status != DONE and worst == DONE:
            worst = work[i].status
        if worst != DONE:
            continue
        diffs = None
        if differences:
            diffs = []
            for t in range(work[i].m):
                if work[i].n_wrong[t] == 0:
                    diffs.append(None)
                    continue
                idx = numpy.empty(work[i].n_diff[t], dtype=numpy.uint64)
                val = numpy.empty(work[i].n_diff[t], dtype=numpy.float64)
                iv = idx
                vv = val
                for j in range(work[i].n_diff[t]):
                    iv[j] = work[i].idx[t][j]
                    vv[j] = work[i].val[t][j]
                diffs.append((idx, val))
        results.append((trees[i][:work[i].m], [work[i].n_wrong[t] for t in range(work[i].m)],
                        diffs))
    for i in range(m):
        for t in range(k):
            if work[i].idx is not NULL:
                free(work[i].idx[t])
            if work[i].val is not NULL:
                free(work[i].val[t])
        free(work[i].n_wrong); free(work[i].idx); free(work[i].val); free(work[i].n_diff)
    free(work)
    if worst == NO_MEMORY:
        raise MemoryError("could not allocate the work memory of a sentence")
    if worst == NO_TREE:
        from ..decoders.trees import NoTreeError
        raise NoTreeError("no tree avoids the forbidden (-inf) arcs")
    return results
