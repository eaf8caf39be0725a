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
from libc.math cimport INFINITY, exp
from libc.stdint cimport int32_t, uint8_t, uint64_t

import numpy

from ..decoders.marginals cimport log_sum_exp
from ..features.sentence cimport Sentence
from .arc_labeler cimport ArcLabeler
from .label_features cimport F_CHAIN, N_TRANS
from .tree_context cimport C_LAST, C_PREV, N_CTX, tree_context


cdef void _chain_tables(ArcLabeler lab, Sentence s, const int32_t* heads, const int32_t* ctx,
                        const float* w, double* E, uint8_t* reach, double* Tr) noexcept nogil:
    """What the distribution needs besides the temperature: the labels each
    word can take on a path of its chain (``reach``: emission finite and,
    after the first dependent, some reachable label of the previous one),
    and the transition scores into each word, Tr[(c * L + l) * (L + 1) + p]
    from label p of its previous dependent (p = L: c is the first; only the
    rows of reachable p filled). E holds the emissions (``_emissions``)."""
    cdef int L = lab.n_labels, n1 = s.n + 1, L1 = L + 1
    cdef bint chain = lab.flags & F_CHAIN
    cdef uint64_t rows[N_TRANS]
    cdef int c, l, p, j, pc
    cdef bint any_prev
    cdef double t
    for c in range(1, n1):
        pc = ctx[C_PREV * n1 + c] if chain else -1
        any_prev = pc < 0
        if pc >= 0:
            for p in range(L):
                if reach[pc * L + p]:
                    any_prev = True
        for l in range(L):
            reach[c * L + l] = any_prev and E[c * L + l] != -INFINITY
        if not chain:
            continue
        for p in range(L1):
            if (p == L) != (pc < 0) or (p < L and not reach[pc * L + p]):
                continue
            lab.transition_rows(s, heads, ctx, c, p, rows)
            for l in range(L):
                t = 0.0
                for j in range(N_TRANS):
                    t += w[rows[j] + l]
                Tr[(c * L + l) * L1 + p] = t


cdef void _forward_backward(int L, int n1, bint chain, const int32_t* ctx, const double* E,
                            const uint8_t* reach, const double* Tr, double inv_t,
                            double* alpha, double* beta, double* terms, double* out) noexcept nogil:
    """Label marginals of every word into out[c * L + l] (row 0 untouched)
    at temperature 1 / ``inv_t``, from the tables of ``_chain_tables``. Sums
    in log space (``log_sum_exp`` over the L ``terms``)."""
    cdef int L1 = L + 1
    cdef int c, h, l, p, pc, nxt
    cdef double z, v
    cdef const double* tr
    # forward, left to right (a word's previous dependent lies to its left)
    for c in range(1, n1):
        pc = ctx[C_PREV * n1 + c] if chain else -1
        for l in range(L):
            alpha[c * L + l] = -INFINITY
            if not reach[c * L + l]:
                continue
            tr = Tr + (c * L + l) * L1
            if not chain:
                alpha[c * L + l] = E[c * L + l] * inv_t
            elif pc < 0:
                alpha[c * L + l] = (E[c * L + l] + tr[L]) * inv_t
            else:
                for p in range(L):
                    terms[p] = alpha[pc * L + p] + tr[p] * inv_t if reach[pc * L + p] else -INFINITY
                alpha[c * L + l] = log_sum_exp(terms, L) + E[c * L + l] * inv_t
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
                if not reach[pc * L + p]:
                    beta[pc * L + p] = -INFINITY
                    continue
                for l in range(L):
                    terms[l] = ((Tr[(nxt * L + l) * L1 + p] + E[nxt * L + l]) * inv_t
                                + beta[nxt * L + l] if reach[nxt * L + l] else -INFINITY)
                beta[pc * L + p] = log_sum_exp(terms, L)
    # marginals: alpha * beta / Z of the chain (Z from its last dependent;
    # without the chain every word is its own)
    for h in range(n1 if chain else 0):
        c = ctx[C_LAST * n1 + h]
        if c < 0:
            continue
        z = log_sum_exp(alpha + c * L, L)
        while c >= 0:
            for l in range(L):
                v = alpha[c * L + l] + beta[c * L + l]
                out[c * L + l] = exp(min(v - z, 0.0)) if v != -INFINITY else 0.0
            c = ctx[C_PREV * n1 + c]
    if not chain:
        for c in range(1, n1):
            z = log_sum_exp(alpha + c * L, L)
            for l in range(L):
                out[c * L + l] = (exp(min(alpha[c * L + l] - z, 0.0))
                                  if alpha[c * L + l] != -INFINITY else 0.0)


def label_marginals_at(ArcLabeler labeler, Sentence s, const int32_t[:] heads,
                       const float[::1] weights, int root_label, temperatures):
    """``label_marginals`` at each of ``temperatures``: a list of float64
    (n+1, n_labels) arrays; the scores are computed once for all of them."""
    temperatures = [float(t) for t in temperatures]
    for t in temperatures:
        if not t > 0:
            raise ValueError(f"temperature must be > 0, got {t!r}")
    if <uint64_t>weights.shape[0] != labeler.n_rows * labeler.n_labels:
        raise ValueError("weights do not match the labeler's table size")
    labeler.context(s, heads)   # validates the tree
    cdef int L = labeler.n_labels, n1 = s.n + 1
    cdef bint chain = labeler.flags & F_CHAIN
    tree = numpy.ascontiguousarray(heads, dtype="int32")
    context = numpy.empty((N_CTX + 1) * n1, dtype="int32")
    E = numpy.empty(n1 * L, dtype="float64")
    reach = numpy.zeros(n1 * L, dtype="uint8")
    Tr = numpy.zeros(n1 * L * (L + 1) if chain else 1, dtype="float64")
    alpha = numpy.zeros(n1 * L, dtype="float64")
    beta = numpy.zeros(n1 * L, dtype="float64")
    terms = numpy.zeros(L, dtype="float64")
    cdef const int32_t[::1] tv = tree
    cdef int32_t[::1] cv = context
    cdef double[::1] ev = E, trv = Tr, av = alpha, bv = beta, sv = terms
    cdef uint8_t[::1] rv = reach
    cdef double[:, ::1] out
    with nogil:
        tree_context(s.n, &tv[0], &cv[0])
        labeler._emissions(s, &tv[0], &cv[0], &weights[0], root_label, &ev[0])
        _chain_tables(labeler, s, &tv[0], &cv[0], &weights[0], &ev[0], &rv[0], &trv[0])
    results = []
    cdef double inv_t
    for t in temperatures:
        result = numpy.zeros((n1, L), dtype="float64")
        out = result
        inv_t = 1.0 / t
        with nogil:
            _forward_backward(L, n1, chain, &cv[0], &ev[0], &rv[0], &trv[0], inv_t,
                              &av[0], &bv[0], &sv[0], &out[0, 0])
        results.append(result)
    return results


def label_marginals(ArcLabeler labeler, Sentence s, const int32_t[:] heads,
                    const float[::1] weights, int root_label=-1, double temperature=1.0):
    """p(label l | tree) of every word under p(labels | tree) proportional to
    exp(score / ``temperature``): float64 (n+1, n_labels), row c for the
    arc heads[c] -> c (row 0 zeros; each other row sums to 1)."""
    return label_marginals_at(labeler, s, heads, weights, root_label, [temperature])[0]
