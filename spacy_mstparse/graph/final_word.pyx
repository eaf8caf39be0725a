# cython: boundscheck=False, wraparound=False
"""The final-word rule: in most treebanks the sentence-final punctuation
attaches to the root word (UD's guidelines), an attachment a first- or
second-order model cannot see, since it depends on which word the tree makes
its root. The rule is learned from the training trees: the tags (tag row 0)
that end at least ``MIN_SENTENCES`` training sentences and whose final word
attaches to the root word in at least ``MIN_SHARE`` of them. In prediction,
after decoding, a final word with such a tag and no dependents of its own is
attached to the root word of the decoded tree, unless that arc is ruled out
(-inf: the arc filter, pruning); the tree stays a tree, and stays projective
if it was (no arc spans the root word of a projective tree).
Nothing about a language is built in: a treebank whose final punctuation
attaches elsewhere gets no rule.
"""
from libc.stdint cimport uint64_t

import numpy

from ..features.sentence cimport Sentence

# a tag needs this many final words in the training trees, and this share of
# them attached to the root word
MIN_SENTENCES = 20
MIN_SHARE = 0.95


def fit_final_tags(items, min_sentences: int = MIN_SENTENCES, min_share: float = MIN_SHARE):
    """The tags (uint64 array, sorted) of the final-word rule from ``(Sentence,
    heads)`` training items (heads: int array, entry 0 ignored, -1 unknown)."""
    final = {}
    cdef Sentence s
    for sentence, heads in items:
        s = sentence
        n = s.n
        heads = numpy.asarray(heads)
        if n < 2 or heads[n] < 0:
            continue
        roots = numpy.flatnonzero(heads[1:] == 0)
        if len(roots) != 1 or roots[0] + 1 == n:
            continue
        tag = int(s.tag_row(0)[n])
        seen, to_root = final.get(tag, (0, 0))
        final[tag] = (seen + 1, to_root + (heads[n] == roots[0] + 1))
    chosen = sorted(tag for tag, (seen, to_root) in final.items()
                    if seen >= min_sentences and to_root >= min_share * seen)
    return numpy.array(chosen, dtype="uint64")


def attach_final(Sentence sentence, heads, const uint64_t[::1] tags, arc=None):
    """``heads`` (int32, entry 0 = -1) with the final-word rule of ``tags``
    applied (a copy); ``arc``: the sentence's (n+1, n+1) arc scores (None:
    every arc allowed), the rule leaves a final word whose arc from the root
    word scores -inf where it is."""
    cdef int n = sentence.n
    out = numpy.array(heads, dtype="intc")
    cdef int[::1] hv = out
    cdef const float[:, ::1] scores = (numpy.zeros((n + 1, n + 1), dtype="float32") if arc is None
                                       else numpy.ascontiguousarray(arc, dtype="float32"))
    if scores.shape[0] != n + 1 or scores.shape[1] != n + 1:
        raise ValueError(f"arc scores of shape ({scores.shape[0]}, {scores.shape[1]}) for {n} words")
    if tags.shape[0] and n >= 2:
        attach_final_word(sentence.tag_row(0), n, &scores[0, 0], &hv[0], &tags[0], tags.shape[0])
    return out.astype("int32", copy=False)
