"""First-order (edge-factored) arc features of McDonald, Crammer & Pereira (2005).

Table 1a-c of the paper, for an arc from head (parent) ``h`` to child ``c``:

* unigram: h-word+h-pos, h-word, h-pos, c-word+c-pos, c-word, c-pos;
* bigram: h-word+h-pos+c-word+c-pos, h-pos+c-word+c-pos, h-word+c-word+c-pos,
  h-word+h-pos+c-pos, h-word+h-pos+c-word, h-word+c-word, h-pos+c-pos;
* in-between POS: h-pos+b-pos+c-pos for every (distinct) tag b between them;
* surrounding POS 4-grams (h-pos, h-pos±1, c-pos±1, c-pos) and the back-off
  trigrams obtained by removing one of the context tags.

Templates with words are repeated with 5-character prefixes when a word is
longer than five characters (or the lemma: ``doc_arrays``). With ``use_morph``
the FEATS values of head and child, their pairs (Nguyen et al. 2007) and each
with the other end's first tag are added. With two tag columns (UPOS, XPOS)
every template that reads a tag is emitted for each. With ``cluster_row`` the
last tag row holds Brown-cluster path prefixes (Koo et al. 2008): a tag column
like any other, plus four hybrid pairs joining the cluster of one end with
the tag or word of the other. Every feature is emitted alone and conjoined
with the direction and binned distance (1-5, 6-10, >10), as in MSTParser; with
``direction_backoff`` also with the direction alone (BENCHMARKS.md).

A feature is a 64-bit hash of its template id and attribute ids, reduced to a
bucket of a table of ``n_buckets`` float32 weights; each emitter states the
template key (``templates.pyx``) of every hash it emits (``return_keys``).
Head-only and child-only features do not depend on the other end of the arc,
so scoring precomputes their sums per token, direction and distance bin.
With an ``ArcFilter`` (``arc_filter.pyx``) the arcs it rules out are not
scored at all.
"""
from libc.math cimport INFINITY
from libc.stdlib cimport free, malloc
from libc.stdint cimport int32_t, uint8_t, uint64_t
from libc.string cimport memset

import numpy

from ..decoders.pruning cimport keep_best_heads
from .arc_filter cimport ArcFilter, arc_allowed
from .emit cimport KeySink, NoKeys, put, put1, put2
from .hashing cimport mix, mix3, mix_all
from .templates cimport *
from .sentence cimport Sentence
from .weights cimport Weights, prefetch_weight, weight_at, weights_view

DEF N_DD = 16   # direction/distance codes 1..14 (0 unused), padded
DEF N_UNIGRAM_READS = 17   # plain, two directions, 14 direction/distance codes
# Tag rows a Sentence may have (templates.pxd), for Python-side checks.
MAX_TAG_ROWS = MAX_TAGSETS

# ``token_parts``: per token, the word parts, then per tag column the
# head-side (HP_*) and child-side (CP_*) parts of the pair templates.
cdef enum:
    WP_WW = 0
    WP_XX = 1
    N_WORD_PARTS = 2
cdef enum:
    HP_WPWP = 0
    HP_PWP
    HP_WWP
    HP_WPP
    HP_WPW
    HP_PP
    HP_XPXP
    HP_PXP
    HP_XXP
    HP_XPP
    HP_XPX
    HP_CTX_HR
    HP_CTX_HL
    HP_CTX_HR_CR
    HP_CTX_HL_CR
    HP_TRI_CL
    HP_TRI_HR
    HP_TRI_HL
    HP_TRI_CR
    CP_WP
    CP_XP
    CP_LP
    CP_PR
    N_TAG_PARTS
cdef enum:
    PARTS_STRIDE = N_WORD_PARTS + MAX_TAGSETS * N_TAG_PARTS



cdef inline void add_between(uint64_t* between, int* n_between, int cap, uint64_t tag) noexcept nogil:
    """Add ``tag`` to a small set kept as an array (distinct tags only)."""
    cdef int k
    for k in range(n_between[0]):
        if between[k] == tag:
            return
    between[n_between[0]] = tag
    n_between[0] += 1


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
        self.n_buckets = n_buckets
        self.mask = n_buckets - 1
        self.n_tagsets = n_tagsets
        self.use_morph = use_morph
        self.direction_backoff = direction_backoff
        if cluster_row and n_tagsets < 2:
            raise ValueError("cluster_row needs a tag row besides the cluster row")
        self.cluster_row = cluster_row
        self.arc_filter = arc_filter

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

    cdef int capacity(self, Sentence s) noexcept nogil:
        """Upper bound on the number of base hashes of one arc."""
        cdef int max_m = 0
        cdef int i
        if self.use_morph:
            for i in range(s.n + 1):
                if s.morph_start[i + 1] - s.morph_start[i] > max_m:
                    max_m = s.morph_start[i + 1] - s.morph_start[i]
        # head + child + pair templates of one arc
        return (50 + s.n) * s.n_tagsets + 6 * max_m + max_m * max_m + 16 + 4 * self.cluster_row

    cdef int unigram_bases(self, Sentence s, int i, bint as_head, uint64_t* out) noexcept nogil:
        """Base hashes of the templates reading only token ``i``, as the head
        (``as_head``) or as the child of an arc (Table 1a)."""
        return _unigram_bases(self, s, i, as_head, out, <NoKeys*>NULL)

    cdef void unigram_sums(self, Sentence s, int i, bint as_head, const Weights* w,
                           uint64_t* buf, uint64_t* ids, double* sums) noexcept nogil:
        """sums[dd] = total weight of token i's unigram features conjoined
        (and not) with each direction/distance code dd (and, under
        ``direction_backoff``, with dd's direction: summed once per direction).
        ``ids`` has room for N_UNIGRAM_READS bucket ids per base hash: all
        are computed (and prefetched) before any weight is read."""
        cdef int k = self.unigram_bases(s, i, as_head, buf)
        cdef int j, dd
        cdef uint64_t* row
        cdef double base = 0.0, total
        cdef double left = 0.0, right = 0.0
        for j in range(k):
            row = ids + j * N_UNIGRAM_READS
            row[0] = buf[j] & self.mask
            row[1] = mix(buf[j], direction_code(1)) & self.mask
            row[2] = mix(buf[j], direction_code(8)) & self.mask
            for dd in range(1, 15):
                row[2 + dd] = mix(buf[j], dd) & self.mask
            for dd in range(N_UNIGRAM_READS):
                if dd == 1 and not self.direction_backoff:
                    continue
                if dd == 2 and not self.direction_backoff:
                    continue
                prefetch_weight(w, row[dd])
        for j in range(k):
            row = ids + j * N_UNIGRAM_READS
            base += weight_at(w, row[0])
            if self.direction_backoff:
                left += weight_at(w, row[1])
                right += weight_at(w, row[2])
        for dd in range(1, 15):
            total = base + (right if dd > 7 else left)
            for j in range(k):
                total += weight_at(w, ids[j * N_UNIGRAM_READS + 2 + dd])
            sums[dd] = total

    cdef void token_parts(self, Sentence s, int i, uint64_t* out) noexcept nogil:
        """The parts of the pair-template hashes that depend on token ``i``
        alone (``PARTS_STRIDE`` values: word parts, then per tag column the
        head-side and child-side parts). ``pair_bases`` combines a head's
        and a child's parts: the same hashes as hashing each template from
        its attributes, with most of the mixing done once per token."""
        cdef int t
        cdef uint64_t tid, P, Pl, Pr
        cdef uint64_t* row
        cdef uint64_t* H
        cdef uint64_t W = s.word[i]
        cdef uint64_t X = s.prefix[i] if s.is_long[i] else W
        out[WP_WW] = mix(T_WW, W)
        out[WP_XX] = mix(T_XX, X)
        for t in range(s.n_tagsets):
            tid = t * TAGSET_STRIDE
            row = s.tag_row(t)
            P = row[i]; Pl = row[i - 1]; Pr = row[i + 1]
            H = out + N_WORD_PARTS + t * N_TAG_PARTS
            H[HP_WPWP] = mix3(tid + T_WPWP, W, P)
            H[HP_PWP] = mix(tid + T_PWP, P)
            H[HP_WWP] = mix(tid + T_WWP, W)
            H[HP_WPP] = mix3(tid + T_WPP, W, P)
            H[HP_WPW] = mix3(tid + T_WPW, W, P)
            H[HP_PP] = mix(tid + T_PP, P)
            H[HP_XPXP] = mix3(tid + T_XPXP, X, P)
            H[HP_PXP] = mix(tid + T_PXP, P)
            H[HP_XXP] = mix(tid + T_XXP, X)
            H[HP_XPP] = mix3(tid + T_XPP, X, P)
            H[HP_XPX] = mix3(tid + T_XPX, X, P)
            H[HP_CTX_HR] = mix3(tid + T_CTX_HR_CL, P, Pr)
            H[HP_CTX_HL] = mix3(tid + T_CTX_HL_CL, Pl, P)
            H[HP_CTX_HR_CR] = mix3(tid + T_CTX_HR_CR, P, Pr)
            H[HP_CTX_HL_CR] = mix3(tid + T_CTX_HL_CR, Pl, P)
            H[HP_TRI_CL] = mix(tid + T_TRI_CL, P)
            H[HP_TRI_HR] = mix3(tid + T_TRI_HR, P, Pr)
            H[HP_TRI_HL] = mix3(tid + T_TRI_HL, Pl, P)
            H[HP_TRI_CR] = mix(tid + T_TRI_CR, P)
            H[CP_WP] = mix(W, P)
            H[CP_XP] = mix(X, P)
            H[CP_LP] = mix(Pl, P)
            H[CP_PR] = mix(P, Pr)

    cdef int pair_bases(self, Sentence s, int h, int c, const uint64_t* between,
                        const int* n_between, uint64_t* out,
                        const uint64_t* parts=NULL) noexcept nogil:
        """Base hashes of the templates that read both ends of the arc.

        ``between`` holds, for each tag column t, the distinct tags strictly
        between h and c at ``between[t * (s.n + 1) + j]``, j < n_between[t].
        ``parts``: the ``token_parts`` of every token (PARTS_STRIDE each), or
        NULL to compute those of h and c here.
        """
        return _pair_bases(self, s, h, c, between, n_between, out, parts, <NoKeys*>NULL)

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
            total += weight_at(w, b & self.mask) + weight_at(w, mix(b, dd) & self.mask)
            if self.direction_backoff:
                total += weight_at(w, mix(b, direction_code(dd)) & self.mask)
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
        cdef int n = s.n, N = s.n + 1
        cdef int cap = self.capacity(s)
        cdef uint64_t* buf = <uint64_t*>malloc(cap * sizeof(uint64_t))
        cdef uint64_t* ids = <uint64_t*>malloc(N_UNIGRAM_READS * cap * sizeof(uint64_t))
        cdef double* head_sum = <double*>malloc(N * N_DD * sizeof(double))
        cdef double* child_sum = <double*>malloc(N * N_DD * sizeof(double))
        cdef uint64_t* between = <uint64_t*>malloc(s.n_tagsets * N * sizeof(uint64_t))
        cdef uint64_t* parts = <uint64_t*>malloc(N * PARTS_STRIDE * sizeof(uint64_t))
        cdef unsigned char* kept = NULL
        cdef int* rows = <int*>malloc(N * sizeof(int))   # the arc filter's row of each tag
        cdef const uint8_t* limits = NULL
        cdef int stride = 0
        cdef int n_between[MAX_TAGSETS]
        cdef int i, h, c, t, step, k, cur = 0, pending = -1, pending_k = 0
        cdef double pending_base = 0.0
        if (buf is NULL or ids is NULL or head_sum is NULL or child_sum is NULL
                or between is NULL or parts is NULL or rows is NULL):
            free(buf); free(ids); free(head_sum); free(child_sum); free(between); free(parts)
            free(rows)
            return -1
        memset(out, 0, N * N * sizeof(float))
        if self.arc_filter is not None:
            self.arc_filter.tag_rows(s, rows)
            limits = &self.arc_filter.limits_view[0]
            stride = self.arc_filter.n_tags + 1
        # Head-only and child-only templates: one sum per token and dd code.
        for i in range(N):
            self.unigram_sums(s, i, True, w, buf, ids, head_sum + i * N_DD)
            self.unigram_sums(s, i, False, w, buf, ids, child_sum + i * N_DD)
        if first_pass_only or (0 < keep < n):
            for h in range(N):
                for c in range(1, N):
                    if c == h:
                        continue
                    if limits is not NULL and not arc_allowed(limits, stride, rows, h, c):
                        out[h * N + c] = -INFINITY
                    else:
                        out[h * N + c] = <float>(scale * self.first_pass_score(
                            s, h, c, w, head_sum, child_sum))
            if first_pass_only:
                free(buf); free(ids); free(head_sum); free(child_sum); free(between); free(parts)
                free(rows)
                return 0
            kept = <unsigned char*>malloc(N * N)
            if kept is NULL:
                free(buf); free(ids); free(head_sum); free(child_sum); free(between); free(parts)
                free(rows)
                return -1
            keep_best_heads(out, n, keep, kept)
        for i in range(N):
            self.token_parts(s, i, parts + i * PARTS_STRIDE)
        # Children right of h, then left (the tags in between grow by one per
        # step). An arc's ids are hashed and prefetched, then the previous arc
        # is summed, so its weights load while this arc is hashed.
        for h in range(N):
            for step in range(1, -2, -2):
                for t in range(s.n_tagsets):
                    n_between[t] = 0
                c = h + step
                while 1 <= c < N:
                    if c != h + step:
                        for t in range(s.n_tagsets):
                            add_between(between + t * N, &n_between[t], N,
                                        s.tag_row(t)[c - step])
                    if ((kept is not NULL and not kept[h * N + c]) or (limits is not NULL
                            and not arc_allowed(limits, stride, rows, h, c))):
                        out[h * N + c] = -INFINITY
                    else:
                        k = arc_ids(self, s, h, c, between, n_between, parts, buf,
                                    ids + cur * 3 * cap, w)
                        if pending >= 0:
                            out[pending] = <float>(scale * arc_total(
                                self.direction_backoff, ids + (1 - cur) * 3 * cap,
                                pending_k, w, pending_base))
                        pending, pending_k, cur = h * N + c, k, 1 - cur
                        pending_base = (head_sum[h * N_DD + dd_code(h, c)]
                                        + child_sum[c * N_DD + dd_code(h, c)])
                    c += step
        if pending >= 0:
            out[pending] = <float>(scale * arc_total(self.direction_backoff,
                ids + (1 - cur) * 3 * cap, pending_k, w, pending_base))
        free(buf); free(ids); free(head_sum); free(child_sum); free(between); free(kept)
        free(parts); free(rows)
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
        size = max(1, n_arcs) * self.n_conjunctions * self.capacity(s)
        result = numpy.empty(size, dtype="uint64")
        keys = numpy.empty(size if return_keys else 1, dtype="uint8")
        cdef uint64_t[::1] res = result
        cdef uint8_t[::1] kv = keys
        with nogil:
            if return_keys:
                total = _arcs_features(self, s, &hv[0], &res[0], &kv[0])
            else:
                total = self.arcs_features_into(s, &hv[0], &res[0])
        if total < 0:
            raise MemoryError()
        if return_keys:
            return result[:total], keys[:total]
        return result[:total]

    cdef int tree_capacity(self, Sentence s) noexcept nogil:
        """Upper bound on the bucket ids of the arcs of one tree (``arcs_features_into``)."""
        return max(1, s.n) * (3 if self.direction_backoff else 2) * self.capacity(s)

    cdef int arcs_features_into(self, Sentence s, const int32_t* heads,
                                uint64_t* out) noexcept nogil:
        """Bucket ids (with repetitions) of the arcs ``heads[c] -> c`` (c >= 1,
        heads[c] >= 0; a negative head: no arc) into ``out`` (room for
        ``tree_capacity`` ids); returns their number, -1 if out of memory."""
        return _arcs_features(self, s, heads, out, <NoKeys*>NULL)


cdef inline int arc_ids(FirstOrderFeatures f, Sentence s, int h, int c,
                        const uint64_t* between, const int* n_between, const uint64_t* parts,
                        uint64_t* buf, uint64_t* ids, const Weights* w) noexcept nogil:
    """The k bucket ids of each pair feature of h -> c into ``ids`` (plain,
    then x direction/distance, then x direction: k each), prefetched; returns k."""
    cdef int dd = dd_code(h, c), j
    cdef int k = f.pair_bases(s, h, c, between, n_between, buf, parts)
    mix_all(buf, k, dd, f.mask, ids + k)
    if f.direction_backoff:
        mix_all(buf, k, direction_code(dd), f.mask, ids + 2 * k)
    for j in range(k):
        ids[j] = buf[j] & f.mask
    for j in range((3 if f.direction_backoff else 2) * k):
        prefetch_weight(w, ids[j])
    return k


cdef inline double arc_total(bint backoff, const uint64_t* ids, int k, const Weights* w,
                             double total) noexcept nogil:
    """``total`` plus the weights of the ids ``arc_ids`` wrote."""
    cdef int j
    if backoff:
        for j in range(k):
            total += weight_at(w, ids[j]) + (
                <double>weight_at(w, ids[k + j]) + weight_at(w, ids[2 * k + j]))
    else:
        for j in range(k):
            total += weight_at(w, ids[j]) + <double>weight_at(w, ids[k + j])
    return total


# The emitters: every hash goes out with its template key (``templates.pyx``
# names and describes each; ``emit.pxd``). Scoring goes through the methods
# above, whose copy of the emitters writes no keys.

cdef inline int _unigram_bases(FirstOrderFeatures f, Sentence s, int i, bint as_head,
                               uint64_t* out, KeySink* keys) noexcept nogil:
    # child templates are the head templates shifted by CHILD_OFFSET
    cdef uint64_t side = 0 if as_head else CHILD_OFFSET
    cdef int k = 0, t, m
    cdef uint64_t tid, P
    cdef uint64_t W = s.word[i]
    cdef uint64_t X = s.prefix[i]
    for t in range(s.n_tagsets):
        tid = t * TAGSET_STRIDE + side
        P = s.tag_row(t)[i]
        k = put2(out, keys, k, tid + T_HWP, W, P)
        k = put1(out, keys, k, tid + T_HP, P)
        if s.is_long[i]:
            k = put2(out, keys, k, tid + T_HXP, X, P)
    k = put1(out, keys, k, side + T_HW, W)
    if s.is_long[i]:
        k = put1(out, keys, k, side + T_HX, X)
    if f.use_morph:
        for m in range(s.morph_start[i], s.morph_start[i + 1]):
            k = put1(out, keys, k, T_MORPH_H if as_head else T_MORPH_C, s.morph[m])
    return k


cdef inline int _pair_bases(FirstOrderFeatures f, Sentence s, int h, int c,
                            const uint64_t* between, const int* n_between, uint64_t* out,
                            const uint64_t* parts, KeySink* keys) noexcept nogil:
    # The token parts of h and c already hold each template's key and their
    # own attributes (``token_parts``); the key is repeated for ``keys``.
    cdef uint64_t local[2 * PARTS_STRIDE]
    cdef const uint64_t* hp
    cdef const uint64_t* cp
    if parts is NULL:
        f.token_parts(s, h, local)
        f.token_parts(s, c, local + PARTS_STRIDE)
        hp = local
        cp = local + PARTS_STRIDE
    else:
        hp = parts + h * PARTS_STRIDE
        cp = parts + c * PARTS_STRIDE
    cdef int k = 0, t, j, mh, mc
    cdef uint64_t tid, cP, cPl, cPr, hPcP, inner
    cdef const uint64_t* H
    cdef const uint64_t* C
    cdef uint64_t* row
    cdef uint64_t cW = s.word[c]
    cdef uint64_t cX = s.prefix[c] if s.is_long[c] else cW
    cdef bint prefixed = s.is_long[h] or s.is_long[c]
    for t in range(s.n_tagsets):
        tid = t * TAGSET_STRIDE
        row = s.tag_row(t)
        cP = row[c]; cPl = row[c - 1]; cPr = row[c + 1]
        H = hp + N_WORD_PARTS + t * N_TAG_PARTS
        C = cp + N_WORD_PARTS + t * N_TAG_PARTS
        # Table 1b: bigrams
        k = put(out, keys, k, tid + T_WPWP, mix(H[HP_WPWP], C[CP_WP]))
        k = put(out, keys, k, tid + T_PWP, mix(mix(H[HP_PWP], cW), cP))
        k = put(out, keys, k, tid + T_WWP, mix(mix(H[HP_WWP], cW), cP))
        k = put(out, keys, k, tid + T_WPP, mix(H[HP_WPP], cP))
        k = put(out, keys, k, tid + T_WPW, mix(H[HP_WPW], cW))
        hPcP = mix(H[HP_PP], cP)
        k = put(out, keys, k, tid + T_PP, hPcP)
        if prefixed:
            k = put(out, keys, k, tid + T_XPXP, mix(H[HP_XPXP], C[CP_XP]))
            k = put(out, keys, k, tid + T_PXP, mix(mix(H[HP_PXP], cX), cP))
            k = put(out, keys, k, tid + T_XXP, mix(mix(H[HP_XXP], cX), cP))
            k = put(out, keys, k, tid + T_XPP, mix(H[HP_XPP], cP))
            k = put(out, keys, k, tid + T_XPX, mix(H[HP_XPX], cX))
        # Table 1c: in-between POS
        if n_between[t]:
            inner = mix(tid + T_BETWEEN, hPcP)
            for j in range(n_between[t]):
                k = put(out, keys, k, tid + T_BETWEEN, mix(inner, between[t * (s.n + 1) + j]))
        # Table 1c: surrounding POS 4-grams and their back-off trigrams
        k = put(out, keys, k, tid + T_CTX_HR_CL, mix(H[HP_CTX_HR], C[CP_LP]))
        k = put(out, keys, k, tid + T_CTX_HL_CL, mix(H[HP_CTX_HL], C[CP_LP]))
        k = put(out, keys, k, tid + T_CTX_HR_CR, mix(H[HP_CTX_HR_CR], C[CP_PR]))
        k = put(out, keys, k, tid + T_CTX_HL_CR, mix(H[HP_CTX_HL_CR], C[CP_PR]))
        k = put(out, keys, k, tid + T_TRI_CL, mix(mix(H[HP_TRI_CL], cPl), cP))
        k = put(out, keys, k, tid + T_TRI_HR, mix(H[HP_TRI_HR], cP))
        k = put(out, keys, k, tid + T_TRI_HL, mix(H[HP_TRI_HL], cP))
        k = put(out, keys, k, tid + T_TRI_CR, mix(mix(H[HP_TRI_CR], cP), cPr))
    k = put(out, keys, k, T_WW, mix(hp[WP_WW], cW))
    if prefixed:
        k = put(out, keys, k, T_XX, mix(hp[WP_XX], cX))
    if f.cluster_row:
        row = s.tag_row(0)
        C = s.tag_row(s.n_tagsets - 1)
        k = put2(out, keys, k, T_HC_CP, C[h], row[c])
        k = put2(out, keys, k, T_HP_CC, row[h], C[c])
        k = put2(out, keys, k, T_HC_CW, C[h], cW)
        k = put2(out, keys, k, T_HW_CC, s.word[h], C[c])
    if f.use_morph:
        row = s.tag_row(0)
        for mc in range(s.morph_start[c], s.morph_start[c + 1]):
            k = put2(out, keys, k, T_MORPH_HP_CM, row[h], s.morph[mc])
        for mh in range(s.morph_start[h], s.morph_start[h + 1]):
            k = put2(out, keys, k, T_MORPH_HM_CP, s.morph[mh], row[c])
            for mc in range(s.morph_start[c], s.morph_start[c + 1]):
                k = put2(out, keys, k, T_MORPH_HC, s.morph[mh], s.morph[mc])
    return k


cdef inline int _arcs_features(FirstOrderFeatures f, Sentence s, const int32_t* heads,
                               uint64_t* out, KeySink* keys) noexcept nogil:
    """``arcs_features_into``, and the template key of every bucket id into
    ``keys`` (the same room as ``out``)."""
    cdef int N = s.n + 1
    cdef int cap = f.capacity(s)
    cdef int c, h, j, k, t, dd, p
    cdef uint64_t* buf = <uint64_t*>malloc(cap * sizeof(uint64_t))
    cdef KeySink* kbuf = <KeySink*>malloc(cap * sizeof(KeySink))
    cdef uint64_t* between = <uint64_t*>malloc(s.n_tagsets * N * sizeof(uint64_t))
    cdef int n_between[MAX_TAGSETS]
    cdef int total = 0, per = 3 if f.direction_backoff else 2
    cdef uint64_t mask = f.mask
    if buf is NULL or kbuf is NULL or between is NULL:
        free(buf); free(kbuf); free(between)
        return -1
    for c in range(1, N):
        h = heads[c]
        if h < 0:
            continue
        for t in range(s.n_tagsets):
            n_between[t] = 0
            for p in range(min(h, c) + 1, max(h, c)):
                add_between(between + t * N, &n_between[t], N, s.tag_row(t)[p])
        dd = dd_code(h, c)
        k = _unigram_bases(f, s, h, True, buf, kbuf)
        k += _unigram_bases(f, s, c, False, buf + k, kbuf + k)
        k += _pair_bases(f, s, h, c, between, n_between, buf + k, NULL, kbuf + k)
        for j in range(k):
            out[total] = buf[j] & mask
            out[total + 1] = mix(buf[j], dd) & mask
            if f.direction_backoff:
                out[total + 2] = mix(buf[j], direction_code(dd)) & mask
            if KeySink is not NoKeys:
                for p in range(per):
                    keys[total + p] = kbuf[j]
            total += per
    free(buf); free(kbuf); free(between)
    return total
