"""Feature groups (templates) of the hashed first-order features.

The sparseptron (Smith & Martins 2013, Figure 3; Martins et al. 2011) works on
non-overlapping groups of features. Here a group is one feature template of
``first_order.pyx`` (McDonald et al. 2005, Table 1) together with all of its
direction/distance conjunctions; the templates that read a tag are separate
groups for each tag column (UPOS, XPOS).

Hashing forgets the template, so this module recovers it from the emission
order of ``FirstOrderFeatures.unigram_bases`` / ``pair_bases`` (which it calls,
so the bucket ids are exactly those of ``tree_features``): a group id is the
template key that the hash starts from, ``tagset * 64 + template`` (< 128).
``tree_features_grouped`` returns the bucket ids of a tree with the group of
each. The tests check that the ids equal ``tree_features`` and that
changing one attribute of a token changes only the groups reading it, which
guards this module against changes of the emission order in first_order.pyx.
"""
from libc.stdlib cimport free, malloc
from libc.stdint cimport int32_t, uint8_t, uint64_t

import numpy

from .first_order cimport FirstOrderFeatures, dd_code, direction_code
from .hashing cimport mix
from .sentence cimport Sentence
from .templates cimport MAX_TAGSETS
from .templates cimport *



_TEMPLATE_NAMES = {
    1: "h-word+h-pos", 2: "h-word", 3: "h-pos", 4: "h-prefix+h-pos", 5: "h-prefix",
    6: "c-word+c-pos", 7: "c-word", 8: "c-pos", 9: "c-prefix+c-pos", 10: "c-prefix",
    11: "hw+hp+cw+cp", 12: "hp+cw+cp", 13: "hw+cw+cp", 14: "hw+hp+cp", 15: "hw+hp+cw",
    16: "hw+cw", 17: "hp+cp", 18: "hx+hp+cx+cp", 19: "hp+cx+cp", 20: "hx+cx+cp",
    21: "hx+hp+cp", 22: "hx+hp+cx", 23: "hx+cx", 24: "hp+between-pos+cp",
    25: "hp+hp+1+cp-1+cp", 26: "hp-1+hp+cp-1+cp", 27: "hp+hp+1+cp+cp+1",
    28: "hp-1+hp+cp+cp+1", 29: "hp+cp-1+cp", 30: "hp+hp+1+cp", 31: "hp-1+hp+cp",
    32: "hp+cp+cp+1", 33: "h-morph", 34: "c-morph", 35: "h-morph+c-morph",
    T_HC_CP: "h-cluster+c-pos", T_HP_CC: "h-pos+c-cluster", T_HC_CW: "h-cluster+c-word",
    T_HW_CC: "h-word+c-cluster",
}
# Named without a tag column: no tag, or (the hybrid cluster pairs) fixed columns.
_TAG_FREE = {2, 5, 7, 10, 16, 23, 33, 34, 35, T_HC_CP, T_HP_CC, T_HC_CW, T_HW_CC}


def group_name(int gid):
    """Readable name of a group id, e.g. ``"hp+cp/xpos"`` for XPOS pairs."""
    template = gid % TAGSET_STRIDE
    if template not in _TEMPLATE_NAMES:
        raise ValueError(f"no feature group with id {gid}")
    name = _TEMPLATE_NAMES[template]
    if template in _TAG_FREE:
        return name
    return f"{name}/tag{gid // TAGSET_STRIDE + 1}"


def group_ids(int n_tagsets, bint use_morph, bint cluster_row=False):
    """All group ids of a feature configuration, sorted."""
    ids = []
    for template in sorted(_TEMPLATE_NAMES):
        if template in (T_MORPH_H, T_MORPH_C, T_MORPH_HC) and not use_morph:
            continue
        if T_HC_CP <= template <= T_HW_CC and not cluster_row:
            continue
        if template in _TAG_FREE:
            ids.append(template)
        else:
            ids.extend(t * TAGSET_STRIDE + template for t in range(n_tagsets))
    return sorted(ids)


cdef inline void add_between(uint64_t* between, int* n_between, uint64_t tag) noexcept nogil:
    cdef int k
    for k in range(n_between[0]):
        if between[k] == tag:
            return
    between[n_between[0]] = tag
    n_between[0] += 1


cdef int unigram_groups(Sentence s, int i, bint as_head, bint use_morph,
                        uint8_t* out) noexcept nogil:
    """Group ids in the order ``unigram_bases`` emits its hashes."""
    cdef int side = 0 if as_head else CHILD_OFFSET
    cdef int k = 0, t, m
    for t in range(s.n_tagsets):
        out[k] = t * TAGSET_STRIDE + side + T_HWP; k += 1
        out[k] = t * TAGSET_STRIDE + side + T_HP; k += 1
        if s.is_long[i]:
            out[k] = t * TAGSET_STRIDE + side + T_HXP; k += 1
    out[k] = side + T_HW; k += 1
    if s.is_long[i]:
        out[k] = side + T_HX; k += 1
    if use_morph:
        for m in range(s.morph_start[i], s.morph_start[i + 1]):
            out[k] = T_MORPH_H if as_head else T_MORPH_C; k += 1
    return k


cdef int pair_groups(Sentence s, int h, int c, const int* n_between, bint use_morph,
                     bint cluster_row, uint8_t* out) noexcept nogil:
    """Group ids in the order ``pair_bases`` emits its hashes."""
    cdef int k = 0, t, j, x
    cdef int tid
    cdef bint prefixed = s.is_long[h] or s.is_long[c]
    for t in range(s.n_tagsets):
        tid = t * TAGSET_STRIDE
        # T_WPWP, T_PWP, T_WWP, T_WPP, T_WPW (consecutive ids), then T_PP
        for x in range(T_WPWP, T_WPW + 1):
            out[k] = tid + x; k += 1
        out[k] = tid + T_PP; k += 1
        if prefixed:
            # T_XPXP, T_PXP, T_XXP, T_XPP, T_XPX
            for x in range(T_XPXP, T_XPX + 1):
                out[k] = tid + x; k += 1
        for j in range(n_between[t]):
            out[k] = tid + T_BETWEEN; k += 1
        for x in range(T_CTX_HR_CL, T_CTX_HR_CL + 8):
            out[k] = tid + x; k += 1
    out[k] = T_WW; k += 1
    if prefixed:
        out[k] = T_XX; k += 1
    if cluster_row:
        for x in range(T_HC_CP, T_HW_CC + 1):
            out[k] = x; k += 1
    if use_morph:
        for j in range((s.morph_start[h + 1] - s.morph_start[h])
                       * (s.morph_start[c + 1] - s.morph_start[c])):
            out[k] = T_MORPH_HC; k += 1
    return k


cdef int arc_features_grouped(FirstOrderFeatures f, Sentence s, int h, int c,
                              uint64_t* between, int* n_between, uint64_t* buf,
                              uint8_t* gbuf) noexcept nogil:
    """All base hashes of h -> c in ``buf`` and their groups in ``gbuf``, in
    the order of ``FirstOrderFeatures._features_of_arcs``. Returns the count,
    or -1 if the two orders disagree in length (a layout change)."""
    cdef int k, g, t, p, N = s.n + 1
    for t in range(s.n_tagsets):
        n_between[t] = 0
        for p in range(min(h, c) + 1, max(h, c)):
            add_between(between + t * N, &n_between[t], s.tag_row(t)[p])
    k = f.unigram_bases(s, h, True, buf)
    g = unigram_groups(s, h, True, f.use_morph, gbuf)
    if g != k:
        return -1
    k += f.unigram_bases(s, c, False, buf + k)
    g += unigram_groups(s, c, False, f.use_morph, gbuf + g)
    if g != k:
        return -1
    k += f.pair_bases(s, h, c, between, n_between, buf + k)
    g += pair_groups(s, h, c, n_between, f.use_morph, f.cluster_row, gbuf + g)
    if g != k:
        return -1
    return k


def tree_features_grouped(FirstOrderFeatures f, Sentence s, const int32_t[:] heads):
    """``(ids, groups)``: the bucket ids of ``f.tree_features(s, heads)`` (same
    order) and the group id (uint8) of each."""
    if heads.shape[0] != s.n + 1:
        raise ValueError(f"heads has length {heads.shape[0]}, expected {s.n + 1}")
    if s.n_tagsets != f.n_tagsets:
        raise ValueError(f"sentence has {s.n_tagsets} tag rows, features expect {f.n_tagsets}")
    cdef int N = s.n + 1, c, h, j, k, dd, total = 0
    for c in range(1, N):
        if not (0 <= heads[c] <= s.n) or heads[c] == c:
            raise ValueError(f"invalid head {heads[c]} for word {c}")
    cdef int cap = f.capacity(s)
    ids = numpy.empty(max(1, s.n) * f.n_conjunctions * cap, dtype="uint64")
    groups = numpy.empty(max(1, s.n) * f.n_conjunctions * cap, dtype="uint8")
    cdef uint64_t[::1] res = ids
    cdef uint8_t[::1] gres = groups
    cdef uint64_t* buf = <uint64_t*>malloc(cap * sizeof(uint64_t))
    cdef uint8_t* gbuf = <uint8_t*>malloc(cap * sizeof(uint8_t))
    cdef uint64_t* between = <uint64_t*>malloc(s.n_tagsets * N * sizeof(uint64_t))
    cdef int n_between[MAX_TAGSETS]
    cdef uint64_t mask = f.n_buckets - 1
    cdef bint bad = False
    if buf is NULL or gbuf is NULL or between is NULL:
        free(buf); free(gbuf); free(between)
        raise MemoryError()
    with nogil:
        for c in range(1, N):
            h = heads[c]
            dd = dd_code(h, c)
            k = arc_features_grouped(f, s, h, c, between, n_between, buf, gbuf)
            if k < 0:
                bad = True
                break
            for j in range(k):
                res[total] = buf[j] & mask
                res[total + 1] = mix(buf[j], dd) & mask
                gres[total] = gbuf[j]
                gres[total + 1] = gbuf[j]
                total += 2
                if f.direction_backoff:
                    res[total] = mix(buf[j], direction_code(dd)) & mask
                    gres[total] = gbuf[j]
                    total += 1
    free(buf); free(gbuf); free(between)
    if bad:
        raise RuntimeError("feature_groups.pyx is out of step with first_order.pyx's templates")
    return ids[:total], groups[:total]
