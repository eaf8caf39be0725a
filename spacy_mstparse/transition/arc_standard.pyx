"""Arc-standard transitions and the static oracle (Nivre 2008; the parser of
Choo & Shivaditya, the Cornell CS 5740 report, 2020, section 2
and section 4 "Finding gold-standard transitions").

The state and transitions are inline C functions in ``arc_standard.pxd``;
this module gives Python access for tests and for the component's
initialization (``oracle`` runs the static oracle over a gold tree) and
``ArcStandardState``, a Python view of one parse in progress.
"""
from cymem.cymem cimport Pool

import numpy

MOVE_NAMES = ("SHIFT", "LEFT-ARC", "RIGHT-ARC")


class NotArcStandardTree(ValueError):
    """The gold tree cannot be built by arc-standard transitions (it is
    non-projective or has more than one word attached to the root)."""


cdef class ArcStandardState:
    """One parse of ``n`` words (positions 1..n, 0 the root)."""
    cdef Pool mem
    cdef State s

    def __init__(self, int n):
        if n < 0:
            raise ValueError("n must be >= 0")
        self.mem = Pool()
        cdef int* stack = <int*>self.mem.alloc(n + 2, sizeof(int))
        cdef int* heads = <int*>self.mem.alloc(n + 1, sizeof(int))
        cdef int* labels = <int*>self.mem.alloc(n + 1, sizeof(int))
        cdef int* n_children = <int*>self.mem.alloc(n + 1, sizeof(int))
        state_init(&self.s, n, stack, heads, labels, n_children)

    @property
    def stack(self):
        return [self.s.stack[i] for i in range(self.s.stack_len)]

    @property
    def buffer(self):
        return [buffer_at(&self.s, i) for i in range(buffer_size(&self.s))]

    @property
    def heads(self):
        return numpy.array([self.s.heads[i] for i in range(self.s.n + 1)], dtype="int32")

    @property
    def labels(self):
        return numpy.array([self.s.labels[i] for i in range(self.s.n + 1)], dtype="int32")

    @property
    def is_terminal(self):
        return bool(is_terminal(&self.s))

    def valid_moves(self):
        """Names of the moves allowed now (a terminal state allows none)."""
        if is_terminal(&self.s):
            return []
        allowed = (can_shift(&self.s), can_left(&self.s), can_right(&self.s))
        return [name for name, ok in zip(MOVE_NAMES, allowed) if ok]

    def apply(self, str move, int label=-1):
        """Apply "SHIFT", "LEFT-ARC" or "RIGHT-ARC" (with a label id)."""
        if move not in MOVE_NAMES:
            raise ValueError(f"unknown move {move!r}; expected one of {MOVE_NAMES}")
        if move not in self.valid_moves():
            raise ValueError(f"{move} is not valid in stack={self.stack} buffer={self.buffer}")
        apply_move(&self.s, MOVE_NAMES.index(move), label)


def oracle(const int[:] gold_heads):
    """Run the static oracle on a gold tree (``gold_heads[0] = -1``, root
    word(s) have head 0). Returns ``(moves, s0, b0)``: int8 move codes (0
    SHIFT, 1 LEFT-ARC, 2 RIGHT-ARC) and the stack top / buffer front of the
    configuration each move was taken in. Raises ``NotArcStandardTree`` when
    the tree is not projective with one root word."""
    cdef int n = gold_heads.shape[0] - 1
    cdef int i, h, move, k = 0
    if n < 0:
        raise ValueError("gold_heads needs at least the root position")
    for i in range(1, n + 1):
        h = gold_heads[i]
        if h < 0 or h > n or h == i:
            raise ValueError(f"gold_heads[{i}] = {h} is not a head position in 0..{n}")
    mem = Pool()
    cdef int* stack = <int*>mem.alloc(n + 2, sizeof(int))
    cdef int* heads = <int*>mem.alloc(n + 1, sizeof(int))
    cdef int* labels = <int*>mem.alloc(n + 1, sizeof(int))
    cdef int* n_children = <int*>mem.alloc(n + 1, sizeof(int))
    cdef int* gold_children = <int*>mem.alloc(n + 1, sizeof(int))
    cdef int* gh = <int*>mem.alloc(n + 1, sizeof(int))
    gh[0] = -1
    for i in range(1, n + 1):
        gh[i] = gold_heads[i]
        gold_children[gh[i]] += 1
    moves = numpy.zeros(2 * n, dtype="int8")
    s0 = numpy.zeros(2 * n, dtype="int32")
    b0 = numpy.zeros(2 * n, dtype="int32")
    cdef signed char[:] mv = moves
    cdef int[:] s0v = s0
    cdef int[:] b0v = b0
    cdef State s
    cdef bint ok = True
    state_init(&s, n, stack, heads, labels, n_children)
    with nogil:
        while not is_terminal(&s):
            move = oracle_move(&s, gh, gold_children)
            if move == SHIFT and not can_shift(&s):
                ok = False
            elif move == LEFT and not can_left(&s):
                ok = False
            elif move == RIGHT and not can_right(&s):
                ok = False
            if not ok or k >= 2 * n:
                ok = False
                break
            mv[k] = move
            s0v[k] = stack_top(&s)
            b0v[k] = s.front
            k += 1
            apply_move(&s, move, 0)
    if ok:
        for i in range(1, n + 1):
            if heads[i] != gh[i]:
                ok = False
                break
    if not ok:
        raise NotArcStandardTree(
            "the tree is not projective with a single root word, so arc-standard "
            "transitions cannot build it (projectivize it or drop it)"
        )
    return moves[:k], s0[:k], b0[:k]
