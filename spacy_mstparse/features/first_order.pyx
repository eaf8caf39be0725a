"""Arc scoring with the first-order (edge-factored) features of McDonald,
Crammer & Pereira (2005), Table 1a-c (emitted by ``arc_emitters.pxd``, which
lists the templates: unigrams, bigrams, in-between and surrounding POS, with
prefixes, morphology, two tag columns and Brown clusters).

``FirstOrderFeatures`` holds the feature settings and fills the arc score
matrix. A feature is a 64-bit hash of its template id and attribute ids,
reduced to a bucket of a table of ``n_buckets`` float32 weights, and
conjoined with the direction and binned distance of the arc, as in
MSTParser. Head-only and child-only features do not depend on the other end
of the arc, so scoring precomputes their sums per token, direction and
distance bin. With an ``ArcFilter`` (``arc_filter.pyx``) the arcs it rules
out are not scored at all; with ``keep`` only the best heads of each word
under a cheap first pass are (``decoders.pruning``). The Python API gives
the score matrix and the bucket ids (and template keys) of arcs and trees.
"""
from libc.math cimport INFINITY
from libc.stdlib cimport free, malloc
from libc.stdint cimport int32_t, uint8_t, uint64_t
from libc.string cimport memset

import numpy

from ..decoders.pruning cimport keep_best_heads
from .arc_emitters cimport (
    PARTS_STRIDE, ArcFeatureSpec, add_between, arc_capacity, arc_ids, arc_total, arcs_features,
    dd_code, direction_code, token_parts, unigram_bases,
)
from .arc_filter cimport ArcFilter, arc_allowed
from .emit cimport NoKeys
from .hashing cimport mix, mix3
from .templates cimport MAX_TAGSETS, TAGSET_STRIDE, T_PP
from .sentence cimport Sentence
from .weights cimport Weights, prefetch_weight, weight_at, weights_view

DEF N_DD = 16   # direction/distance codes 1..14 (0 unused), padded
DEF N_UNIGRAM_READS = 17   # plain, two directions, 14 direction/distance codes
# Tag rows a Sentence may have (templates.pxd), for Python-side checks.
MAX_TAG_ROWS = MAX_TAGSETS


cdef class FirstOrderFeatures:
    """Hashed first-order arc features and arc scoring.

    n_buckets (int): size of the weight table, a power of two.
    n_tagsets (int): tag rows per Sentence (1 to MAX_TAGSETS: UPOS and/or
        XPOS, and a Brown-cluster row); must match the Sentences.
    use_morph (bool): add FEATS features of head and child.
    direction_backoff (bool): also conjoin every feature with the direction
        alone (three weights per feature instead of two).
    cluster_row (bool): the last of the n_tagsets rows holds word clusters
        (adds the hybrid cluster pairs).
    arc_filter (ArcFilter): arcs it does not allow are not scored (-inf).
    """

    def __init__(self, uint64_t n_buckets, int n_tagsets=1, bint use_morph=False,
                 bint direction_backoff=False, bint cluster_row=False, ArcFilter arc_filter=None):
        if n_buckets < 2 or (n_buckets & (n_buckets - 1)) != 0:
            raise ValueError(f"n_buckets must be a power of two >= 2, got {n_buckets}")
        if not 1 <= n_tagsets <= MAX_TAGSETS:
            raise ValueError(f"n_tagsets must be 1 to {MAX_TAGSETS}, got {n_tagsets}")
        if cluster_row and n_tagsets < 2:
            raise ValueError("cluster_row needs a tag row besides the cluster row")
        self.n_buckets = n_buckets
        self.n_tagsets = n_tagsets
        self.spec.mask = n_buckets - 1
        self.spec.use_morph = use_morph
        self.spec.direction_backoff = direction_backoff
        self.spec.cluster_row = cluster_row
        self.arc_filter = arc_filter

    @property
    def use_morph(self):
        """Whether the FEATS templates are emitted."""
        return self.spec.use_morph

    @property
    def direction_backoff(self):
        """Whether every feature is also conjoined with the direction alone."""
        return self.spec.direction_backoff

    @property
    def cluster_row(self):
        """Whether the last tag row holds word clusters (hybrid cluster pairs)."""
        return self.spec.cluster_row

    def __reduce__(self):
        return (FirstOrderFeatures, (self.n_buckets, self.n_tagsets, self.use_morph,
                                     self.direction_backoff, self.cluster_row, self.arc_filter))

    def with_arc_filter(self, ArcFilter arc_filter=None):
        """The same features scoring only the arcs ``arc_filter`` allows
        (``features.arc_filter``; None: every arc)."""
        return FirstOrderFeatures(self.n_buckets, self.n_tagsets, self.use_morph,
                                  self.direction_backoff, self.cluster_row, arc_filter)

    @property
    def n_conjunctions(self):
        """How many bucket ids each base feature yields (2 or 3)."""
        return 3 if self.direction_backoff else 2

    cdef void unigram_sums(self, Sentence s, int i, bint as_head, const Weights* w,
                           uint64_t* buf, uint64_t* ids, double* sums) noexcept nogil:
        """sums[dd] = total weight of token i's unigram features conjoined
        (and not) with each direction/distance code dd (and, under
        ``direction_backoff``, with dd's direction: summed once per direction).
        ``ids`` has room for N_UNIGRAM_READS bucket ids per base hash: all
        are computed (and prefetched) before any weight is read."""
        cdef int k = unigram_bases(&self.spec, s, i, as_head, buf, <NoKeys*>NULL)
        cdef int j, dd
        cdef uint64_t* row
        cdef double base = 0.0, total
        cdef double left = 0.0, right = 0.0
        for j in range(k):
            row = ids + j * N_UNIGRAM_READS
            row[0] = buf[j] & self.spec.mask
            row[1] = mix(buf[j], direction_code(1)) & self.spec.mask
            row[2] = mix(buf[j], direction_code(8)) & self.spec.mask
            for dd in range(1, 15):
                row[2 + dd] = mix(buf[j], dd) & self.spec.mask
            for dd in range(N_UNIGRAM_READS):
                if dd == 1 and not self.spec.direction_backoff:
                    continue
                if dd == 2 and not self.spec.direction_backoff:
                    continue
                prefetch_weight(w, row[dd])
        for j in range(k):
            row = ids + j * N_UNIGRAM_READS
            base += weight_at(w, row[0])
            if self.spec.direction_backoff:
                left += weight_at(w, row[1])
                right += weight_at(w, row[2])
        for dd in range(1, 15):
            total = base + (right if dd > 7 else left)
            for j in range(k):
                total += weight_at(w, ids[j * N_UNIGRAM_READS + 2 + dd])
            sums[dd] = total

    cdef double first_pass_score(self, Sentence s, int h, int c, const Weights* w,
                                 const double* head_sum, const double* child_sum) noexcept nogil:
        """The cheap part of the score of h -> c, for arc pruning: the head
        and child unigram sums and the tag-pair template (h-pos + c-pos of
        every tag column: few, frequent, cache-resident weights), plain and
        conjoined."""
        cdef int dd = dd_code(h, c), t
        cdef double total = head_sum[h * N_DD + dd] + child_sum[c * N_DD + dd]
        cdef uint64_t b
        for t in range(s.n_tagsets):
            b = mix3(t * TAGSET_STRIDE + T_PP, s.tag_row(t)[h], s.tag_row(t)[c])
            total += weight_at(w, b & self.spec.mask) + weight_at(w, mix(b, dd) & self.spec.mask)
            if self.spec.direction_backoff:
                total += weight_at(w, mix(b, direction_code(dd)) & self.spec.mask)
        return total

    cdef int score_into(self, Sentence s, const Weights* w, float scale, float* out,
                        int keep=0, bint first_pass_only=False) noexcept nogil:
        """Fill ``out`` ((n+1) x (n+1), row-major) with arc scores; 0 where unused.

        Arcs the ``arc_filter`` does not allow get -inf, unscored. keep > 0:
        arc pruning (``decoders.pruning``): only the ``keep`` best heads of
        each word under ``first_pass_score`` (and its left neighbour) get the
        full score, the other arcs -inf.
        first_pass_only: fill ``out`` with the first-pass scores instead.
        Returns -1 if memory could not be allocated.
        """
        cdef const ArcFeatureSpec* f = &self.spec
        cdef int n = s.n, N = s.n + 1
        cdef int cap = arc_capacity(f, s)
        cdef bint pruned = not first_pass_only and 0 < keep < n
        # One workspace for every buffer: the 8-byte ones, then the arc
        # filter's rows (int) and, when pruning, the kept arcs (bytes).
        cdef size_t n_wide = ((1 + N_UNIGRAM_READS) * <size_t>cap + s.n_tagsets * <size_t>N
                              + PARTS_STRIDE * <size_t>N + 2 * N_DD * <size_t>N)
        cdef char* work = <char*>malloc(n_wide * sizeof(uint64_t) + N * sizeof(int)
                                        + (N * <size_t>N if pruned else 0))
        if work is NULL:
            return -1
        cdef uint64_t* buf = <uint64_t*>work                  # base hashes of one arc
        cdef uint64_t* ids = buf + cap                         # N_UNIGRAM_READS per base hash
        cdef uint64_t* between = ids + N_UNIGRAM_READS * cap   # per tag column, N tags
        cdef uint64_t* parts = between + s.n_tagsets * N       # token_parts of every token
        cdef double* head_sum = <double*>(parts + PARTS_STRIDE * N)   # N_DD per token
        cdef double* child_sum = head_sum + N_DD * N
        cdef int* rows = <int*>(child_sum + N_DD * N)          # the arc filter's row of each tag
        cdef unsigned char* kept = <unsigned char*>(rows + N) if pruned else NULL
        cdef const uint8_t* limits = NULL
        cdef int stride = 0
        cdef int n_between[MAX_TAGSETS]
        cdef int i, h, c, t, step, k, cur = 0, pending = -1, pending_k = 0
        cdef double pending_base = 0.0
        memset(out, 0, N * N * sizeof(float))
        if self.arc_filter is not None:
            self.arc_filter.tag_rows(s, rows)
            limits = &self.arc_filter.limits_view[0]
            stride = self.arc_filter.n_tags + 1
        # Head-only and child-only templates: one sum per token and dd code.
        for i in range(N):
            self.unigram_sums(s, i, True, w, buf, ids, head_sum + i * N_DD)
            self.unigram_sums(s, i, False, w, buf, ids, child_sum + i * N_DD)
        if first_pass_only or pruned:
            for h in range(N):
                for c in range(1, N):
                    if c == h:
                        continue
                    if limits is not NULL and not arc_allowed(limits, stride, rows, h, c):
                        out[h * N + c] = -INFINITY
                    else:
                        out[h * N + c] = <float>(scale * self.first_pass_score(
                            s, h, c, w, head_sum, child_sum))
            if pruned:
                keep_best_heads(out, n, keep, kept)
        if not first_pass_only:
            for i in range(N):
                token_parts(s, i, parts + i * PARTS_STRIDE)
            # Children right of h, then left (the tags in between grow by one
            # per step). An arc's ids are hashed and prefetched, then the
            # previous arc is summed, so its weights load while this arc is hashed.
            for h in range(N):
                for step in range(1, -2, -2):
                    for t in range(s.n_tagsets):
                        n_between[t] = 0
                    c = h + step
                    while 1 <= c < N:
                        if c != h + step:
                            for t in range(s.n_tagsets - f.cluster_row):
                                add_between(between + t * N, &n_between[t], N,
                                            s.tag_row(t)[c - step])
                        if ((kept is not NULL and not kept[h * N + c]) or (limits is not NULL
                                and not arc_allowed(limits, stride, rows, h, c))):
                            out[h * N + c] = -INFINITY
                        else:
                            k = arc_ids(f, s, h, c, between, n_between, parts, buf,
                                        ids + cur * 3 * cap, w)
                            if pending >= 0:
                                out[pending] = <float>(scale * arc_total(
                                    f.direction_backoff, ids + (1 - cur) * 3 * cap,
                                    pending_k, w, pending_base))
                            pending, pending_k, cur = h * N + c, k, 1 - cur
                            pending_base = (head_sum[h * N_DD + dd_code(h, c)]
                                            + child_sum[c * N_DD + dd_code(h, c)])
                        c += step
            if pending >= 0:
                out[pending] = <float>(scale * arc_total(f.direction_backoff,
                    ids + (1 - cur) * 3 * cap, pending_k, w, pending_base))
        free(work)
        return 0

    def score(self, Sentence s, weights, float scale=1.0, int keep=0, bint first_pass=False):
        """Arc score matrix (float32, (n+1) x (n+1)) under ``scale * weights``
        (a float32 vector, or ``QuantizedWeights``). ``keep`` > 0: only the
        ``keep`` best heads of every word under the first-pass scores (and
        its left neighbour, see ``decoders.pruning``) are scored, the other
        arcs get -inf. ``first_pass``: the first-pass scores themselves."""
        cdef Weights w
        weights_view(weights, self.n_buckets, &w)
        self._check(s)
        if keep < 0:
            raise ValueError(f"keep must be >= 0, got {keep}")
        scores = numpy.zeros((s.n + 1, s.n + 1), dtype="float32")
        cdef float[:, ::1] out = scores
        cdef int status
        with nogil:
            status = self.score_into(s, &w, scale, &out[0, 0], keep, first_pass)
        if status != 0:
            raise MemoryError()
        return scores

    def arc_features(self, Sentence s, int h, int c, bint return_keys=False):
        """Bucket ids (uint64, with repetitions) of all features of the arc h -> c.

        return_keys: return ``(ids, keys)``, with the template key (uint8,
        ``templates.pyx``) of each id.
        """
        self._check(s)
        if not (0 <= h <= s.n and 1 <= c <= s.n and h != c):
            raise ValueError(f"no arc {h} -> {c} in a sentence of {s.n} words")
        heads = numpy.full(s.n + 1, -2, dtype="int32")
        heads[c] = h
        return self._features_of_arcs(s, heads, return_keys)

    def tree_features(self, Sentence s, const int32_t[:] heads, bint return_keys=False):
        """Bucket ids (uint64, with repetitions) of all features of a tree.

        heads: int32 array of length n+1, heads[0] ignored.
        return_keys: return ``(ids, keys)``, with the template key (uint8,
        ``templates.pyx``) of each id.
        """
        self._check(s)
        if heads.shape[0] != s.n + 1:
            raise ValueError(f"heads has length {heads.shape[0]}, expected {s.n + 1}")
        for c in range(1, s.n + 1):
            if not (0 <= heads[c] <= s.n) or heads[c] == c:
                raise ValueError(f"invalid head {heads[c]} for word {c}")
        return self._features_of_arcs(s, heads, return_keys)

    def _check(self, Sentence s):
        if s.n_tagsets != self.n_tagsets:
            raise ValueError(f"sentence has {s.n_tagsets} tag rows, features expect {self.n_tagsets}")

    def _features_of_arcs(self, Sentence s, heads, bint return_keys):
        # heads[c] < 0 means: no arc into c.
        cdef const int32_t[::1] hv = numpy.ascontiguousarray(heads, dtype=numpy.int32)
        cdef int N = s.n + 1
        cdef int n_arcs = 0, c, total
        for c in range(1, N):
            if hv[c] >= 0:
                n_arcs += 1
        size = max(1, n_arcs) * self.n_conjunctions * arc_capacity(&self.spec, s)
        result = numpy.empty(size, dtype="uint64")
        keys = numpy.empty(size if return_keys else 1, dtype="uint8")
        cdef uint64_t[::1] res = result
        cdef uint8_t[::1] kv = keys
        with nogil:
            if return_keys:
                total = arcs_features(&self.spec, s, &hv[0], &res[0], &kv[0])
            else:
                total = self.arcs_features_into(s, &hv[0], &res[0])
        if total < 0:
            raise MemoryError()
        if return_keys:
            return result[:total], keys[:total]
        return result[:total]

    cdef int tree_capacity(self, Sentence s) noexcept nogil:
        """Upper bound on the bucket ids of the arcs of one tree (``arcs_features_into``)."""
        return max(1, s.n) * (3 if self.spec.direction_backoff else 2) * arc_capacity(&self.spec, s)

    cdef int arcs_features_into(self, Sentence s, const int32_t* heads,
                                uint64_t* out) noexcept nogil:
        """Bucket ids (with repetitions) of the arcs ``heads[c] -> c`` (c >= 1,
        heads[c] >= 0; a negative head: no arc) into ``out`` (room for
        ``tree_capacity`` ids); returns their number, -1 if out of memory."""
        return arcs_features(&self.spec, s, heads, out, <NoKeys*>NULL)
