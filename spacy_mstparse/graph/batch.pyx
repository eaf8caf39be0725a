"""Parse a batch of encoded sentences in C, without the GIL, over threads.

The plain prediction of ``GraphModel`` (1-best tree, no constraints, no
probabilities) for many sentences at once: for each sentence, arc scores
(McDonald et al. 2005; with ``order = 2`` also sibling scores, McDonald &
Pereira 2006; ``order = 3`` siblings and grandparents, Koo & Collins 2010),
the decoder (``decoders.dispatch.decode_c``: Eisner 1996 / its second- or
third-order chart; Chu-Liu-Edmonds, or the second-order hill-climb), and the
second-stage labeler (McDonald et al. 2006) run in one C function. No Python object is
created per sentence besides the two result arrays, and the sentences of a
batch are claimed one at a time by ``n_threads`` OpenMP threads that share
the read-only weights (``BatchParse``: other Python threads may join a
batch); each sentence is parsed by exactly the code one thread runs, so the
output does not depend on the number of threads.

With ``keep`` > 0 (arc pruning, ``decoders.pruning``) first order prunes
on the cheap first-pass scores before the full arc scores; second order
keeps ``FIRST_PASS_WIDTH * keep`` heads by the first-pass scores, scores
those arcs fully and keeps ``keep`` of them before the (cubic) sibling
scores; order 3
always prunes (``keep`` is then the model's ``GRAND_KEEP_HEADS`` when 0)
before the sibling and grandparent scores.

The results equal ``GraphModel.parse`` sentence by sentence (the same C
functions on the same scores); ``tests/test_batch_parse.py`` checks it.
``score_factors`` and ``check_sentences`` are shared with the parallel
training stage (``training_batch``).
"""
from cpython.ref cimport PyObject
from cython.parallel cimport prange
from libc.stdint cimport int32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc

import numpy

from ..decoders.dispatch cimport decode_c, serves_c
from ..decoders.pruning cimport prune_arcs
from ..features.weights cimport weights_view
from ..labeler.arc_labeler cimport ArcLabeler
from .final_word cimport attach_final_word

cdef enum Status:
    PARSED = 0
    NO_MEMORY = -1
    NO_TREE = 1


# Order 2: the first pass keeps this many times ``keep`` heads per word, the
# full arc scores of those then keep ``keep`` (a cascade: Rush & Petrov 2012).
DEF WIDTH = 2
FIRST_PASS_WIDTH = WIDTH


cdef inline int first_pass_keep(int keep, bint siblings, bint grand) noexcept nogil:
    """Heads per word the first-pass scores keep (0: all): ``keep`` at first
    order, ``FIRST_PASS_WIDTH * keep`` at order 2, none at order 3 (its
    pruning is by the full arc scores, as in training)."""
    if not siblings:
        return keep
    return 0 if grand else WIDTH * keep


cdef int score_factors(FirstOrderFeatures first, SiblingFeatures sibling,
                       GrandparentFeatures grand, Sentence s, const Weights* w, float scale,
                       int keep, CFactors* out) noexcept nogil:
    cdef int n = s.n, N = s.n + 1, rc = 0
    cdef size_t NN = <size_t>N * N
    cdef float* arc = <float*>malloc(NN * sizeof(float))
    cdef float* sib = NULL
    cdef float* gp = NULL
    out.n = n
    out.arc = out.sib = out.grand = NULL
    if sibling is not None:
        sib = <float*>calloc(NN * N, sizeof(float))
    if grand is not None:
        gp = <float*>calloc(NN * N, sizeof(float))
    if arc is NULL or (sibling is not None and sib is NULL) or (grand is not None and gp is NULL):
        rc = -1
    elif first.score_into(s, w, scale, arc, first_pass_keep(keep, sib is not NULL,
                                                            gp is not NULL)) != 0:
        rc = -1
    elif sib is not NULL and keep > 0 and prune_arcs(arc, n, keep) != 0:
        rc = -1
    elif sib is not NULL and sibling.score_into(s, w, scale, sib, arc) != 0:
        rc = -1
    elif gp is not NULL and grand.score_into(s, w, scale, gp, arc) != 0:
        rc = -1
    if rc != 0:
        free(arc); free(sib); free(gp)
        return rc
    out.arc, out.sib, out.grand = arc, sib, gp
    return 0


cdef void free_factors(CFactors* f) noexcept nogil:
    free(<void*>f.arc)
    free(<void*>f.sib)
    free(<void*>f.grand)
    f.arc = f.sib = f.grand = NULL


cdef int check_sentences(list sentences, FirstOrderFeatures first) except -1:
    for sentence in sentences:
        if not isinstance(sentence, Sentence):
            raise TypeError(f"expected Sentence objects, got {type(sentence).__name__}")
        if (<Sentence>sentence).n_tagsets != first.n_tagsets:
            raise ValueError(f"sentence has {(<Sentence>sentence).n_tagsets} tag rows, "
                             f"features expect {first.n_tagsets}")
    return 0


cdef int parse_one(FirstOrderFeatures first, SiblingFeatures sibling,
                   GrandparentFeatures grand, Sentence s,
                   const Weights* w, int decoder, ArcLabeler labeler,
                   const float* label_w, int root_label, int keep,
                   const uint64_t* final_tags, int n_final, int* heads,
                   int32_t* labels) noexcept nogil:
    """Heads and label ids of one sentence into ``heads`` / ``labels``
    (the final-word rule of ``final_tags`` applied before labelling)."""
    cdef int c, m
    cdef CFactors f
    if score_factors(first, sibling, grand, s, w, 1.0, keep, &f) != 0:
        return NO_MEMORY
    m = decode_c(&f, decoder, 1, heads, NULL)
    if m > 0:
        attach_final_word(s.tag_row(0), s.n, f.arc, heads, final_tags, n_final)
    free_factors(&f)
    if m <= 0:
        return NO_TREE if m == 0 else NO_MEMORY
    if labeler is None:
        for c in range(s.n + 1):
            labels[c] = -1
        return PARSED
    return labeler.predict_into(s, <const int32_t*>heads, label_w, root_label, labels)


cdef extern from *:
    """
    static inline int mst_claim_index(int* counter) {
        return __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
    }
    """
    int mst_claim_index(int* counter) noexcept nogil


cdef struct BatchJob:
    # What every thread parsing a batch reads (borrowed references: the
    # BatchParse holding the job keeps the objects alive), and the index of
    # the next sentence to claim.
    PyObject* first
    PyObject* sibling
    PyObject* grand
    PyObject* labeler
    Weights w
    const float* label_w
    const uint64_t* final_tags
    int n_final, decoder, root_label, keep, m, next
    PyObject** sent
    int** heads
    int32_t** labels
    int* status


cdef void claim_and_parse(BatchJob* job) noexcept nogil:
    """Parse the job's sentences one by one, each claimed atomically, until
    none is left (any number of threads may run this on one job)."""
    cdef int i
    while True:
        i = mst_claim_index(&job.next)
        if i >= job.m:
            return
        job.status[i] = parse_one(<FirstOrderFeatures>job.first, <SiblingFeatures>job.sibling,
                                  <GrandparentFeatures>job.grand, <Sentence>job.sent[i], &job.w,
                                  job.decoder, <ArcLabeler>job.labeler, job.label_w,
                                  job.root_label, job.keep, job.final_tags, job.n_final,
                                  job.heads[i], job.labels[i])


cdef class BatchParse:
    """The plain parse of a batch of sentences as a job that threads share:
    ``run(n)`` parses with ``n`` threads until no sentence is left, and may
    be called from several Python threads at once (each sentence is claimed
    by exactly one; ``DependencyPipe.pipe`` lets a worker thread and the
    calling thread share a batch); ``results()`` once every ``run`` has
    returned: ``[(heads, label ids)]`` (int32 arrays, entry 0 = -1) of every
    sentence.

    first / sibling / grand: the feature extractors (``sibling`` None for
    order 1, ``grand`` None below order 3, with ``sibling``); decoder: a
    ``decoders.dispatch`` code (``DECODERS[name].code``) serving that order;
    arc_weights: float32 vector or ``QuantizedWeights``; labeler (or None)
    and its float32 ``label_weights``; keep: arc pruning, the ``keep`` best
    heads per word (0 = none); final_tags: the tags of the final-word rule
    (uint64; None: no rule, ``final_word``).
    """
    cdef BatchJob job
    cdef list sentences, parses
    cdef tuple held
    cdef const float[::1] lw
    cdef const uint64_t[::1] ft

    def __cinit__(self):
        self.job.sent = NULL
        self.job.heads = NULL
        self.job.labels = NULL
        self.job.status = NULL

    def __init__(self, list sentences, FirstOrderFeatures first, SiblingFeatures sibling,
                 GrandparentFeatures grand, int decoder, arc_weights, ArcLabeler labeler,
                 label_weights, int root_label=-1, int keep=0, final_tags=None):
        if keep < 0:
            raise ValueError(f"keep must be >= 0, got {keep}")
        if grand is not None and sibling is None:
            raise ValueError("grandparent factors need sibling features")
        cdef int order = 1 + (sibling is not None) + (grand is not None)
        if not serves_c(decoder, order):
            raise ValueError(f"decoder {decoder} does not decode order {order}")
        weights_view(arc_weights, first.n_buckets, &self.job.w)
        self.job.label_w = NULL
        if labeler is not None:
            self.lw = label_weights
            if <size_t>self.lw.shape[0] != labeler.n_rows * labeler.n_labels:
                raise ValueError("label weights do not match the labeler's table size")
            self.job.label_w = &self.lw[0]
        self.ft = (numpy.zeros(1, dtype="uint64") if final_tags is None or len(final_tags) == 0
                   else final_tags)
        check_sentences(sentences, first)
        self.held = (first, sibling, grand, labeler, arc_weights, label_weights)
        self.sentences = sentences
        self.job.first, self.job.sibling = <PyObject*>first, <PyObject*>sibling
        self.job.grand, self.job.labeler = <PyObject*>grand, <PyObject*>labeler
        self.job.final_tags = &self.ft[0]
        self.job.n_final = 0 if final_tags is None else len(final_tags)
        self.job.decoder, self.job.root_label, self.job.keep = decoder, root_label, keep
        cdef int m = len(sentences), i
        self.job.m, self.job.next = m, 0
        self.parses = [(numpy.empty(s.n + 1, dtype="int32"), numpy.empty(s.n + 1, dtype="int32"))
                       for s in sentences]
        self.job.sent = <PyObject**>malloc(max(1, m) * sizeof(PyObject*))
        self.job.heads = <int**>malloc(max(1, m) * sizeof(int*))
        self.job.labels = <int32_t**>malloc(max(1, m) * sizeof(int32_t*))
        self.job.status = <int*>calloc(max(1, m), sizeof(int))
        if (self.job.sent is NULL or self.job.heads is NULL or self.job.labels is NULL
                or self.job.status is NULL):
            raise MemoryError()
        cdef int[::1] hv
        cdef int32_t[::1] lv
        for i in range(m):
            self.job.sent[i] = <PyObject*>sentences[i]
            hv = self.parses[i][0]
            lv = self.parses[i][1]
            self.job.heads[i] = &hv[0]
            self.job.labels[i] = &lv[0]

    def __dealloc__(self):
        free(self.job.sent)
        free(self.job.heads)
        free(self.job.labels)
        free(self.job.status)

    def run(self, int n_threads=1) -> None:
        """Parse with ``n_threads`` threads (OpenMP) until no sentence is left."""
        if n_threads < 1:
            raise ValueError(f"n_threads must be >= 1, got {n_threads}")
        cdef int t
        if n_threads == 1:
            with nogil:
                claim_and_parse(&self.job)
        else:
            for t in prange(n_threads, nogil=True, num_threads=n_threads, schedule="static",
                            chunksize=1):
                claim_and_parse(&self.job)

    def results(self) -> list:
        """``[(heads, label ids)]`` of every sentence (after every ``run``)."""
        if self.job.next < self.job.m:
            raise RuntimeError("the batch has sentences not parsed yet: run() it first")
        cdef int i
        for i in range(self.job.m):
            if self.job.status[i] == NO_MEMORY:
                raise MemoryError("could not allocate the work memory of a sentence")
            if self.job.status[i] == NO_TREE:
                from ..decoders.trees import NoTreeError
                raise NoTreeError("no tree avoids the forbidden (-inf) arcs")
        return self.parses

