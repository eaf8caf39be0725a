"""Label probabilities of the second-stage labeler: the marginals of its label
distribution given the unlabeled tree.

The labeler scores a labelling of the tree as the sum of its arc (emission)
scores and, with the label chain (version 2), the transition scores between
the labels of consecutive dependents of one head (McDonald, Lerman & Pereira
2006); ``ArcLabeler.predict`` returns the best labelling by Viterbi. Read as
a distribution, p(labels | tree) proportional to exp(score / T), the chains
of different heads are independent linear chains, and each word's label
marginal is given by the forward-backward algorithm over its head's chain
(as for a linear-chain CRF: Lafferty, McCallum & Pereira 2001), in log space,
over exactly the emissions and transitions Viterbi reads (labels a word may
not take have probability 0). Without the chain (version 1, or a restricted
labeler without transitions) it is each arc's softmax. T is the label
temperature that calibration fits.
"""
from libc.math cimport INFINITY, exp, log
from libc.stdint cimport int32_t, uint64_t

import numpy

from ..features.sentence cimport Sentence
from .arc_labeler cimport ArcLabeler
from .label_features cimport F_CHAIN, N_TRANS
from .tree_context cimport C_LAST, C_PREV, N_CTX, tree_context


cdef inline double _logaddexp(double a, double b) noexcept nogil:
    if a == -INFINITY:
        return b
    if b == -INFINITY:
        return a
    if a > b:
        return a + log(1.0 + exp(b - a))
    return b + log(1.0 + exp(a - b))


cdef void _transitions(ArcLabeler lab, Sentence s, const int32_t* heads, const int32_t* ctx,
                       const float* w, int c, int prev, double* out) noexcept nogil:
    """out[l]: the transition score into label l of word c from label ``prev``
    of its previous dependent (``n_labels``: c is the first)."""
    cdef uint64_t rows[N_TRANS]
    cdef int L = lab.n_labels, j, l
    lab.transition_rows(s, heads, ctx, c, prev, rows)
    for l in range(L):
        out[l] = 0.0
    for j in range(N_TRANS):
        for l in range(L):
            out[l] += w[rows[j] + l]


cdef void _forward_backward(ArcLabeler lab, Sentence s, const int32_t* heads,
                            const int32_t* ctx, const float* w, double inv_t,
                            double* E, double* alpha, double* beta, double* trans,
                            double* out) noexcept nogil:
    """Label marginals of every word into out[c * L + l] (row 0 untouched).
    E holds the emissions (``_emissions``) on entry and is scaled by 1/T."""
    cdef int L = lab.n_labels, n1 = s.n + 1
    cdef bint chain = lab.flags & F_CHAIN
    cdef int c, h, l, p, pc, nxt
    cdef double z, v
    for c in range(1, n1):
        for l in range(L):
            E[c * L + l] = E[c * L + l] * inv_t if E[c * L + l] != -INFINITY else -INFINITY
    # forward, left to right (a word's previous dependent lies to its left)
    for c in range(1, n1):
        pc = ctx[C_PREV * n1 + c] if chain else -1
        if not chain:
            for l in range(L):
                alpha[c * L + l] = E[c * L + l]
        elif pc < 0:
            _transitions(lab, s, heads, ctx, w, c, L, trans)
            for l in range(L):
                alpha[c * L + l] = (E[c * L + l] + trans[l] * inv_t
                                    if E[c * L + l] != -INFINITY else -INFINITY)
        else:
            for l in range(L):
                alpha[c * L + l] = -INFINITY
            for p in range(L):
                if alpha[pc * L + p] == -INFINITY:
                    continue
                _transitions(lab, s, heads, ctx, w, c, p, trans)
                for l in range(L):
                    if E[c * L + l] != -INFINITY:
                        alpha[c * L + l] = _logaddexp(
                            alpha[c * L + l], alpha[pc * L + p] + trans[l] * inv_t)
            for l in range(L):
                if E[c * L + l] != -INFINITY:
                    alpha[c * L + l] += E[c * L + l]
    # backward, right to left: beta[c, p] over the rest of c's chain
    for c in range(1, n1):
        for l in range(L):
            beta[c * L + l] = 0.0
    if chain:
        for nxt in range(n1 - 1, 0, -1):
            pc = ctx[C_PREV * n1 + nxt]
            if pc < 0:
                continue
            for p in range(L):
                v = -INFINITY
                if alpha[pc * L + p] != -INFINITY:
                    _transitions(lab, s, heads, ctx, w, nxt, p, trans)
                    for l in range(L):
                        if E[nxt * L + l] != -INFINITY:
                            v = _logaddexp(v, trans[l] * inv_t + E[nxt * L + l]
                                           + beta[nxt * L + l])
                beta[pc * L + p] = v
    # marginals: alpha * beta / Z of the chain (Z from its last dependent)
    for h in range(n1):
        c = ctx[C_LAST * n1 + h] if chain else -1
        if chain and c < 0:
            continue
        if chain:
            z = -INFINITY
            for l in range(L):
                z = _logaddexp(z, alpha[c * L + l])
            while c >= 0:
                for l in range(L):
                    v = alpha[c * L + l] + beta[c * L + l]
                    out[c * L + l] = exp(min(v - z, 0.0)) if v != -INFINITY else 0.0
                c = ctx[C_PREV * n1 + c]
    if not chain:
        for c in range(1, n1):
            z = -INFINITY
            for l in range(L):
                z = _logaddexp(z, alpha[c * L + l])
            for l in range(L):
                out[c * L + l] = (exp(min(alpha[c * L + l] - z, 0.0))
                                  if alpha[c * L + l] != -INFINITY else 0.0)


def label_marginals(ArcLabeler labeler, Sentence s, const int32_t[:] heads,
                    const float[::1] weights, int root_label=-1, double temperature=1.0):
    """p(label l | tree) of every word under p(labels | tree) proportional to
    exp(score / ``temperature``): float64 (n+1, n_labels), row c for the
    arc heads[c] -> c (row 0 zeros; each other row sums to 1)."""
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature!r}")
    if <uint64_t>weights.shape[0] != labeler.n_rows * labeler.n_labels:
        raise ValueError("weights do not match the labeler's table size")
    arrays = labeler.context(s, heads)   # validates the tree
    cdef int L = labeler.n_labels, n1 = s.n + 1
    tree = numpy.ascontiguousarray(heads, dtype="int32")
    context = numpy.empty((N_CTX + 1) * n1, dtype="int32")
    E = numpy.empty(n1 * L, dtype="float64")
    alpha = numpy.zeros(n1 * L, dtype="float64")
    beta = numpy.zeros(n1 * L, dtype="float64")
    trans = numpy.zeros(L, dtype="float64")
    result = numpy.zeros((n1, L), dtype="float64")
    cdef const int32_t[::1] tv = tree
    cdef int32_t[::1] cv = context
    cdef double[::1] ev = E, av = alpha, bv = beta, trv = trans
    cdef double[:, ::1] out = result
    with nogil:
        tree_context(s.n, &tv[0], &cv[0])
        labeler._emissions(s, &tv[0], &cv[0], &weights[0], root_label, &ev[0])
        _forward_backward(labeler, s, &tv[0], &cv[0], &weights[0], 1.0 / temperature,
                          &ev[0], &av[0], &bv[0], &trv[0], &out[0, 0])
    return result
