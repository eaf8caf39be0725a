"""Arc-standard parser state (Nivre 2008), shared by the oracle, the feature
extractor and the parse / train loops.

Positions: 0 is the artificial root, 1..n the words. The stack holds
positions; the buffer is ``front`` (which RIGHT-ARC may replace by the popped
stack top) followed by the untouched words ``next .. n``.
"""

cdef enum:
    SHIFT = 0
    LEFT = 1
    RIGHT = 2


cdef struct State:
    int n
    int* stack
    int stack_len
    int front       # buffer front, -1 when the buffer is empty
    int next        # first word after the front that was never shifted (n+1: none)
    int* heads      # [0..n], -1 = no head yet
    int* labels     # [0..n], label id of the arc into each word, -1 = none
    int* n_children  # [0..n], dependents attached so far


cdef inline void state_init(State* s, int n, int* stack, int* heads, int* labels,
                            int* n_children) noexcept nogil:
    cdef int i
    s.n = n
    s.stack = stack
    s.heads = heads
    s.labels = labels
    s.n_children = n_children
    for i in range(n + 1):
        heads[i] = -1
        labels[i] = -1
        n_children[i] = 0
    stack[0] = 0
    s.stack_len = 1
    if n >= 1:
        s.front = 1
        s.next = 2
    else:
        s.front = -1
        s.next = 1


cdef inline int buffer_size(const State* s) noexcept nogil:
    return (1 if s.front >= 0 else 0) + (s.n - s.next + 1)


cdef inline int stack_top(const State* s) noexcept nogil:
    return s.stack[s.stack_len - 1] if s.stack_len > 0 else -1


cdef inline int buffer_at(const State* s, int i) noexcept nogil:
    # i-th buffer position (0 = front), -1 when the buffer is shorter
    cdef int p
    if s.front < 0:
        return -1
    if i == 0:
        return s.front
    p = s.next + i - 1
    return p if p <= s.n else -1


cdef inline bint is_terminal(const State* s) noexcept nogil:
    # After RIGHT-ARC from the root the stack is empty (the root is back in
    # the buffer); a sentence without words is terminal from the start.
    return s.stack_len == 0 or s.front < 0


cdef inline bint can_shift(const State* s) noexcept nogil:
    # Never empty the buffer while the stack holds words: the last word
    # must stay to receive its head, so every run ends in one tree.
    return s.front >= 0 and buffer_size(s) > 1


cdef inline bint can_left(const State* s) noexcept nogil:
    return s.front >= 0 and s.stack_len >= 1 and stack_top(s) != 0


cdef inline bint can_right(const State* s) noexcept nogil:
    # RIGHT-ARC from the root only for the last word with the root alone on
    # the stack: exactly one word attached to the root.
    if s.front < 0 or s.stack_len < 1:
        return False
    if stack_top(s) == 0:
        return s.stack_len == 1 and buffer_size(s) == 1
    return True


cdef inline void do_shift(State* s) noexcept nogil:
    s.stack[s.stack_len] = s.front
    s.stack_len += 1
    if s.next <= s.n:
        s.front = s.next
        s.next += 1
    else:
        s.front = -1


cdef inline void do_left(State* s, int label) noexcept nogil:
    cdef int child = s.stack[s.stack_len - 1]
    s.stack_len -= 1
    s.heads[child] = s.front
    s.labels[child] = label
    s.n_children[s.front] += 1


cdef inline void do_right(State* s, int label) noexcept nogil:
    cdef int head = s.stack[s.stack_len - 1]
    s.stack_len -= 1
    s.heads[s.front] = head
    s.labels[s.front] = label
    s.n_children[head] += 1
    s.front = head


cdef inline void apply_move(State* s, int move, int label) noexcept nogil:
    if move == SHIFT:
        do_shift(s)
    elif move == LEFT:
        do_left(s, label)
    else:
        do_right(s, label)


cdef inline int oracle_move(const State* s, const int* gold_heads,
                            const int* gold_n_children) noexcept nogil:
    # The static oracle of the seed: LEFT-ARC if beta0 is the gold head of
    # sigma0; RIGHT-ARC if sigma0 is the gold head of beta0 and beta0 has all
    # its gold dependents; SHIFT otherwise.
    cdef int s0 = stack_top(s)
    cdef int b0 = s.front
    if s0 >= 0 and b0 >= 0:
        if s0 != 0 and gold_heads[s0] == b0:
            return LEFT
        if gold_heads[b0] == s0 and s.n_children[b0] == gold_n_children[b0]:
            return RIGHT
    return SHIFT
