"""Greedy arc-standard parsing and oracle training over whole sentences.

``ArcStandardModel`` ties the transition classes (SHIFT, LEFT-ARC(label),
RIGHT-ARC(label)), the feature set and the one-vs-rest SVMs together:

* ``parse_doc``: for each sentence, from the initial configuration, extract
  the features, score every class and apply the best-scoring *valid* class
  until the configuration is terminal (Choo & Shivaditya, section 4
  "Prediction"; at most 2n - 1 transitions).
* ``train_doc``: follow the static oracle through each gold sentence and take
  one SVM step per configuration (the examples of the seed's batch training,
  fed online).

Both loops run without the GIL on doc-level arrays; the root (position 0 of
every sentence) is added here.
"""
from cymem.cymem cimport Pool
from libc.stdint cimport uint64_t

import numpy

from .arc_standard cimport (
    LEFT, RIGHT, SHIFT, State, apply_move, can_left, can_right, can_shift, is_terminal,
    oracle_move, stack_top, state_init,
)
from .features cimport Sent, extract, max_features
from .svm cimport OneVsRestSVM

from .features import ROOT_TAG, ROOT_WORD

cdef uint64_t C_ROOT_WORD = ROOT_WORD
cdef uint64_t C_ROOT_TAG = ROOT_TAG


cdef class ArcStandardModel:
    """class_moves[c] in {0 SHIFT, 1 LEFT-ARC, 2 RIGHT-ARC}, class_labels[c]
    the label id of the class (-1 for SHIFT); class 0 must be SHIFT.
    root_label: label id that only the arc from the root takes (and that arc
    takes no other), -1 for none. pairs: sorted hashed word-pair feature ids
    allowed to fire."""
    cdef readonly OneVsRestSVM svm
    cdef readonly int groups
    cdef readonly int root_label
    cdef object _moves, _labels, _pairs
    cdef const signed char* moves
    cdef const int* labels
    cdef const uint64_t* pairs
    cdef int n_pairs

    def __init__(self, OneVsRestSVM svm, class_moves, class_labels, int root_label,
                 int groups, pairs):
        moves = numpy.ascontiguousarray(class_moves, dtype="int8")
        labels = numpy.ascontiguousarray(class_labels, dtype="int32")
        pairs = numpy.ascontiguousarray(pairs, dtype="uint64")
        if moves.shape[0] != svm.n_classes or labels.shape[0] != svm.n_classes:
            raise ValueError("class_moves and class_labels need one entry per SVM class")
        if moves.shape[0] == 0 or moves[0] != SHIFT:
            raise ValueError("class 0 must be SHIFT")
        if not numpy.array_equal(pairs, numpy.unique(pairs)):
            raise ValueError("pairs must be sorted and unique")
        self.svm = svm
        self.groups = groups
        self.root_label = root_label
        self._moves, self._labels, self._pairs = moves, labels, pairs
        cdef const signed char[:] mv = moves
        cdef const int[:] lv = labels
        cdef const uint64_t[:] pv = pairs
        self.moves = &mv[0]
        self.labels = &lv[0]
        self.n_pairs = pairs.shape[0]
        self.pairs = &pv[0] if self.n_pairs else NULL

    def __reduce__(self):
        return (ArcStandardModel, (self.svm, self._moves, self._labels, self.root_label,
                                   self.groups, self._pairs))

    cdef inline bint _valid(self, const State* s, int c) noexcept nogil:
        cdef int move = self.moves[c]
        cdef int label = self.labels[c]
        if move == SHIFT:
            return can_shift(s)
        if move == LEFT:
            return can_left(s) and (self.root_label < 0 or label != self.root_label)
        if not can_right(s):
            return False
        if self.root_label < 0:
            return True
        if stack_top(s) == 0:
            return label == self.root_label
        return label != self.root_label

    cdef int _best_valid(self, const State* s, const float* raw) noexcept nogil:
        # _valid for every class, with the move checks done once
        cdef bint ok[3]
        cdef int c, move, label, best = -1
        cdef bint from_root = stack_top(s) == 0
        ok[SHIFT] = can_shift(s)
        ok[LEFT] = can_left(s)
        ok[RIGHT] = can_right(s)
        for c in range(self.svm.n_classes):
            move = self.moves[c]
            if not ok[move]:
                continue
            if self.root_label >= 0 and move != SHIFT:
                label = self.labels[c]
                if move == LEFT and label == self.root_label:
                    continue
                if move == RIGHT and (label == self.root_label) != from_root:
                    continue
            if best < 0 or raw[c] > raw[best]:
                best = c
        return best

    cdef void _fallback(self, State* s) noexcept nogil:
        # No class is valid (a label set seen in too little training data):
        # still finish a tree, with an unlabeled arc.
        if can_right(s):
            apply_move(s, RIGHT, self.root_label if stack_top(s) == 0 else -1)
        elif can_left(s):
            apply_move(s, LEFT, -1)
        else:
            apply_move(s, SHIFT, -1)

    def parse_doc(self, const uint64_t[:] words, const uint64_t[:] tags, const float[:] dl,
                  const float[:] dr, const int[:, :] bounds):
        """Parse the sentences ``bounds`` ([start, end) token ranges) of a doc.
        Returns (heads, labels): int32 arrays over the doc's tokens, heads as
        positions inside the sentence (0 = root, i = its i-th word), labels
        as label ids (-1 = none)."""
        cdef int n_tokens = words.shape[0]
        _check_lengths(n_tokens, tags, dl, dr, bounds)
        heads_out = numpy.full(n_tokens, -1, dtype="int32")
        labels_out = numpy.full(n_tokens, -1, dtype="int32")
        cdef int[:] ho = heads_out
        cdef int[:] lo = labels_out
        cdef int longest = _longest(bounds)
        cdef Scratch sc = Scratch(longest, self.svm.n_classes)
        cdef int b, i, start, n, best
        cdef State s
        cdef int nf
        with nogil:
            for b in range(bounds.shape[0]):
                start = bounds[b, 0]
                n = bounds[b, 1] - start
                sc.load(&words[start], &tags[start], &dl[start], &dr[start], n)
                state_init(&s, n, sc.stack, sc.heads, sc.labels, sc.n_children)
                while not is_terminal(&s):
                    nf = extract(&sc.x, &s, self.groups, self.pairs, self.n_pairs,
                                 sc.ids, sc.vals, sc.ic)
                    self.svm.raw_scores(sc.ids, sc.vals, nf, sc.raw)
                    best = self._best_valid(&s, sc.raw)
                    if best < 0:
                        self._fallback(&s)
                    else:
                        apply_move(&s, self.moves[best], self.labels[best])
                for i in range(1, n + 1):
                    ho[start + i - 1] = sc.heads[i]
                    lo[start + i - 1] = sc.labels[i]
        return heads_out, labels_out

    def train_doc(self, const uint64_t[:] words, const uint64_t[:] tags, const float[:] dl,
                  const float[:] dr, const int[:, :] bounds, const int[:] gold_heads,
                  const int[:] gold_classes):
        """One SVM step per oracle configuration of each gold sentence.
        gold_heads: doc-level, positions inside the sentence (0 = root);
        gold_classes: the class of the arc into each token (LEFT-ARC(label)
        when its head is to its right, RIGHT-ARC(label) otherwise). Every
        tree must be projective with one root word (``arc_standard.oracle``
        checks). Returns (configurations, wrong predictions before the step,
        summed hinge loss over all classes)."""
        self.svm.check_trainable()
        cdef int n_tokens = words.shape[0]
        _check_lengths(n_tokens, tags, dl, dr, bounds)
        if gold_heads.shape[0] != n_tokens or gold_classes.shape[0] != n_tokens:
            raise ValueError("gold_heads and gold_classes need one entry per token")
        cdef int b, i, start, n, best, move, gold, nf
        for b in range(bounds.shape[0]):
            for i in range(bounds[b, 0], bounds[b, 1]):
                if not 0 <= gold_classes[i] < self.svm.n_classes:
                    raise ValueError(f"gold class {gold_classes[i]} of token {i} is not a class")
                if self.moves[gold_classes[i]] == SHIFT:
                    raise ValueError(f"gold class of token {i} is SHIFT, not an arc")
        cdef int longest = _longest(bounds)
        cdef Scratch sc = Scratch(longest, self.svm.n_classes)
        cdef Pool mem = Pool()
        cdef int* gh = <int*>mem.alloc(longest + 1, sizeof(int))
        cdef int* gc = <int*>mem.alloc(longest + 1, sizeof(int))
        cdef int* gold_children = <int*>mem.alloc(longest + 1, sizeof(int))
        cdef State s
        cdef long n_configs = 0, n_wrong = 0
        cdef double hinge = 0.0
        cdef bint broken = False
        with nogil:
            for b in range(bounds.shape[0]):
                start = bounds[b, 0]
                n = bounds[b, 1] - start
                sc.load(&words[start], &tags[start], &dl[start], &dr[start], n)
                for i in range(n + 1):
                    gold_children[i] = 0
                gh[0] = -1
                gc[0] = -1
                for i in range(1, n + 1):
                    gh[i] = gold_heads[start + i - 1]
                    gc[i] = gold_classes[start + i - 1]
                    if gh[i] < 0 or gh[i] > n:
                        broken = True
                        break
                    gold_children[gh[i]] += 1
                if broken:
                    break
                state_init(&s, n, sc.stack, sc.heads, sc.labels, sc.n_children)
                while not is_terminal(&s):
                    move = oracle_move(&s, gh, gold_children)
                    if move == SHIFT:
                        gold = 0
                    elif move == LEFT:
                        gold = gc[stack_top(&s)]
                    else:
                        gold = gc[s.front]
                    if not self._valid(&s, gold):
                        broken = True
                        break
                    nf = extract(&sc.x, &s, self.groups, self.pairs, self.n_pairs,
                                 sc.ids, sc.vals, sc.ic)
                    self.svm.raw_scores(sc.ids, sc.vals, nf, sc.raw)
                    best = self._best_valid(&s, sc.raw)
                    if best != gold:
                        n_wrong += 1
                    self.svm.step(sc.ids, sc.vals, nf, gold, sc.raw, sc.coef, &hinge)
                    n_configs += 1
                    apply_move(&s, move, self.labels[gold])
                if broken:
                    break
        if broken:
            raise ValueError(
                f"gold sentence {b} (tokens {bounds[b, 0]}..{bounds[b, 1] - 1}) cannot be "
                "built by the arc-standard oracle with these classes: non-projective, "
                "several root words, a bad head, or the root label on a non-root arc"
            )
        return int(n_configs), int(n_wrong), float(hinge)


cdef class Scratch:
    """Per-call work arrays sized for the longest sentence."""
    cdef Pool mem
    cdef Sent x
    cdef uint64_t* word
    cdef uint64_t* tag
    cdef float* dl
    cdef float* dr
    cdef int* stack
    cdef int* heads
    cdef int* labels
    cdef int* n_children
    cdef uint64_t* ids
    cdef float* vals
    cdef uint64_t* ic
    cdef float* raw
    cdef float* coef

    def __init__(self, int longest, int n_classes):
        self.mem = Pool()
        cdef int m = longest + 2
        self.word = <uint64_t*>self.mem.alloc(m, sizeof(uint64_t))
        self.tag = <uint64_t*>self.mem.alloc(m, sizeof(uint64_t))
        self.dl = <float*>self.mem.alloc(m, sizeof(float))
        self.dr = <float*>self.mem.alloc(m, sizeof(float))
        self.stack = <int*>self.mem.alloc(m, sizeof(int))
        self.heads = <int*>self.mem.alloc(m, sizeof(int))
        self.labels = <int*>self.mem.alloc(m, sizeof(int))
        self.n_children = <int*>self.mem.alloc(m, sizeof(int))
        self.ids = <uint64_t*>self.mem.alloc(max_features(longest), sizeof(uint64_t))
        self.vals = <float*>self.mem.alloc(max_features(longest), sizeof(float))
        self.ic = <uint64_t*>self.mem.alloc(2 * m, sizeof(uint64_t))
        self.raw = <float*>self.mem.alloc(n_classes, sizeof(float))
        self.coef = <float*>self.mem.alloc(n_classes, sizeof(float))
        self.x.word = self.word
        self.x.tag = self.tag
        self.x.dl = self.dl
        self.x.dr = self.dr

    cdef void load(self, const uint64_t* words, const uint64_t* tags, const float* dl,
                   const float* dr, int n) noexcept nogil:
        # Position 0 is the root: one right dependent, no left ones.
        cdef int i
        self.x.n = n
        self.word[0] = C_ROOT_WORD
        self.tag[0] = C_ROOT_TAG
        self.dl[0] = 0.0
        self.dr[0] = 1.0
        for i in range(n):
            self.word[i + 1] = words[i]
            self.tag[i + 1] = tags[i]
            self.dl[i + 1] = dl[i]
            self.dr[i + 1] = dr[i]


cdef int _longest(const int[:, :] bounds) except -1:
    cdef int b, longest = 0
    if bounds.shape[0] and bounds.shape[1] != 2:
        raise ValueError("bounds must have shape (n_sentences, 2)")
    for b in range(bounds.shape[0]):
        longest = max(longest, bounds[b, 1] - bounds[b, 0])
    return longest


cdef int _check_lengths(int n_tokens, const uint64_t[:] tags, const float[:] dl,
                        const float[:] dr, const int[:, :] bounds) except -1:
    cdef int b
    if tags.shape[0] != n_tokens or dl.shape[0] != n_tokens or dr.shape[0] != n_tokens:
        raise ValueError("words, tags, dl and dr must have one entry per token")
    for b in range(bounds.shape[0]):
        if not (0 <= bounds[b, 0] <= bounds[b, 1] <= n_tokens):
            raise ValueError(f"sentence bounds {bounds[b, 0]}..{bounds[b, 1]} outside 0..{n_tokens}")
    return 0
