"""First-order (edge-factored) feature emitters of McDonald, Crammer & Pereira (2005).

The hashed base features of an arc from head (parent) ``h`` to child ``c``,
Table 1a-c of the paper:

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
for the unigram and bigram templates (as in Koo et al.; not for the in-between
and surrounding ones, which cost parse time and did not help on dev), plus four
hybrid pairs joining the cluster of one end with the tag or word of the other.
Every feature is emitted alone and conjoined with the direction and binned
distance (1-5, 6-10, >10), as in MSTParser; with ``direction_backoff`` also
with the direction alone (BENCHMARKS.md).

A feature is a 64-bit hash of its template id and attribute ids, reduced to a
bucket (``mask``); every hash goes out with its template key (``templates.pyx``
names and describes each; ``emit.pxd``), or, for scoring, with none.
Header only: the functions are inlined into ``first_order.pyx``, which
scores arcs with them.
"""
from libc.stdint cimport int32_t, uint64_t
from libc.stdlib cimport free, malloc

from .distance cimport direction_distance
from .emit cimport KeySink, NoKeys, put, put1, put2
from .hashing cimport mix, mix3, mix_all
from .sentence cimport Sentence
from .templates cimport *
from .weights cimport Weights, prefetch_weight, weight_at


cdef struct ArcFeatureSpec:
    # Which optional templates an arc emits, and how a hash becomes a bucket.
    uint64_t mask            # n_buckets - 1
    bint use_morph           # FEATS templates
    bint direction_backoff   # also conjoin with the direction alone
    bint cluster_row         # the last tag row holds clusters: hybrid pairs


cdef inline int dd_code(int h, int c) noexcept nogil:
    """Direction (child right or left of head) and distance bin, as 1..14:
    the code every first-order feature is conjoined with."""
    return 1 + direction_distance(h, c)


cdef inline uint64_t direction_code(int dd) noexcept nogil:
    """The direction-only code (16 = child left of head, 17 = right) of a
    direction/distance code, used under ``direction_backoff``."""
    return 16 + (1 if dd > 7 else 0)


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


cdef inline int arc_capacity(const ArcFeatureSpec* f, Sentence s) noexcept nogil:
    """Upper bound on the number of base hashes of one arc."""
    cdef int max_m = 0
    cdef int i
    if f.use_morph:
        for i in range(s.n + 1):
            if s.morph_start[i + 1] - s.morph_start[i] > max_m:
                max_m = s.morph_start[i + 1] - s.morph_start[i]
    # head + child + pair templates of one arc
    return (50 + s.n) * s.n_tagsets + 6 * max_m + max_m * max_m + 16 + 4 * f.cluster_row


cdef inline void add_between(uint64_t* between, int* n_between, int cap, uint64_t tag) noexcept nogil:
    """Add ``tag`` to a small set kept as an array (distinct tags only)."""
    cdef int k
    for k in range(n_between[0]):
        if between[k] == tag:
            return
    between[n_between[0]] = tag
    n_between[0] += 1


cdef inline void token_parts(Sentence s, int i, uint64_t* out) noexcept nogil:
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


# The emitters: every hash goes out with its template key (``templates.pyx``
# names and describes each; ``emit.pxd``). Scoring uses the copy of each
# emitter that writes no keys (``NoKeys``).

cdef inline int unigram_bases(const ArcFeatureSpec* f, Sentence s, int i, bint as_head,
                              uint64_t* out, KeySink* keys) noexcept nogil:
    """Base hashes of the templates reading only token ``i``, as the head
    (``as_head``) or as the child of an arc (Table 1a)."""
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


cdef inline int pair_bases(const ArcFeatureSpec* f, Sentence s, int h, int c,
                           const uint64_t* between, const int* n_between, uint64_t* out,
                           const uint64_t* parts, KeySink* keys) noexcept nogil:
    """Base hashes of the templates that read both ends of the arc.

    ``between`` holds, for each tag column t, the distinct tags strictly
    between h and c at ``between[t * (s.n + 1) + j]``, j < n_between[t].
    ``parts``: the ``token_parts`` of every token (PARTS_STRIDE each), or
    NULL to compute those of h and c here.
    """
    # The token parts of h and c already hold each template's key and their
    # own attributes (``token_parts``); the key is repeated for ``keys``.
    cdef uint64_t local[2 * PARTS_STRIDE]
    cdef const uint64_t* hp
    cdef const uint64_t* cp
    if parts is NULL:
        token_parts(s, h, local)
        token_parts(s, c, local + PARTS_STRIDE)
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
        if f.cluster_row and t == s.n_tagsets - 1:
            continue   # the cluster row: bigram templates only (Koo et al. 2008)
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


cdef inline int arcs_features(const ArcFeatureSpec* f, Sentence s, const int32_t* heads,
                              uint64_t* out, KeySink* keys) noexcept nogil:
    """Bucket ids (with repetitions) of the arcs ``heads[c] -> c`` (c >= 1,
    heads[c] >= 0; a negative head: no arc) into ``out``, and the template
    key of every bucket id into ``keys`` (the same room as ``out``);
    returns their number, -1 if out of memory."""
    cdef int N = s.n + 1
    cdef int cap = arc_capacity(f, s)
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
        for t in range(s.n_tagsets - f.cluster_row):
            for p in range(min(h, c) + 1, max(h, c)):
                add_between(between + t * N, &n_between[t], N, s.tag_row(t)[p])
        dd = dd_code(h, c)
        k = unigram_bases(f, s, h, True, buf, kbuf)
        k += unigram_bases(f, s, c, False, buf + k, kbuf + k)
        k += pair_bases(f, s, h, c, between, n_between, buf + k, NULL, kbuf + k)
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


# Scoring one arc, one arc ahead (``FirstOrderFeatures.score_into``): the
# bucket ids of an arc are computed and prefetched, then summed later.

cdef inline int arc_ids(const ArcFeatureSpec* f, Sentence s, int h, int c,
                        const uint64_t* between, const int* n_between, const uint64_t* parts,
                        uint64_t* buf, uint64_t* ids, const Weights* w) noexcept nogil:
    """The k bucket ids of each pair feature of h -> c into ``ids`` (plain,
    then x direction/distance, then x direction: k each), prefetched; returns k."""
    cdef int dd = dd_code(h, c), j
    cdef int k = pair_bases(f, s, h, c, between, n_between, buf, parts, <NoKeys*>NULL)
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
