"""A morphological guesser for the tagger's FEATS decision, read from the
training words.

After a word's UPOS is chosen, its FEATS are chosen among the values seen
with that UPOS in training: in a treebank of an inflected language, tens or
hundreds of them. A guesser tells, from the word form, which are likely, as
the morphological guessers of Hajič (2000) and Spoustová et al. (2009) do
(and the suffix guesser of Brants 2000, TnT, for words never seen). Two
guesses are made for a word and a UPOS, both from the training words with
that UPOS other than the word itself:

* the ending guess: the FEATS values of the words with the longest ending
  (suffix of four to one characters) that at least ``MIN_SUPPORT`` of them
  share. It tells the inflection (case, number, tense);
* the stem guess: the attribute=value pairs of the words sharing the
  longest stem of the word (its form without its last one to three
  characters, at least three characters left). It tells what inflection
  keeps: a noun's gender, a verb's aspect, which the ending of a form not
  seen in training does not tell.

Counts are of word types (each distinct form, UPOS and FEATS once), so
frequent words do not outweigh an ending or a stem. The tagger
(``perceptron.TaggerModel``) reads the guesses as features of each FEATS
candidate: the bin of its share of the ending guess, and of each of its
pairs' share of the stem guess. They do not restrict the candidates (a hard
restriction to the ending guess measured worse), so a wrong guess costs only
what the weights make of it. Leaving the word's own type out of the counts,
in training as at parse time, makes each training word guessed as a word
never seen would be, so the weights learn how far to trust a guess.

The guesser is a table keyed by ``mix3(upos + 1, kind, id)``: kind 0 the
lower-cased form (the word's own FEATS, in tokens, which the guesses
subtract), kind k in 1..4 the suffix of k characters, kind ``STEM_KIND`` a
stem. Its keys are sorted and each has a CSR row of FEATS class ids and
counts (``build_guesser``'s arrays), which ``TaggerModel`` searches in C.
It needs nothing but the training words' forms, UPOS and FEATS: it is the
same for every language, and a treebank without FEATS has none.
"""
from collections import Counter
from typing import Dict, Iterable, Tuple

import numpy

from ..features.hashing import py_mix
from .word_attributes import LOWER, MAX_STEM_CUT, STEM1, SUFFIX1

MIN_SUPPORT = 10   # word types behind an ending for it to guess
MAX_SUFFIX = 4
STEM_KIND = MAX_SUFFIX + 1
ARRAY_NAMES = ("keys", "ptr", "ids", "counts")


def guesser_key(upos: int, kind: int, string_id: int) -> int:
    """The table key of a form (kind 0), a suffix of ``kind`` characters
    (1 to MAX_SUFFIX) or a stem (STEM_KIND) read with a UPOS class id (what
    ``perceptron.guess_key`` computes)."""
    return py_mix(py_mix(upos + 1, kind), string_id)


def empty_guesser() -> Dict[str, numpy.ndarray]:
    return {"keys": numpy.zeros(0, dtype=numpy.uint64), "ptr": numpy.zeros(1, dtype=numpy.int32),
            "ids": numpy.zeros(0, dtype=numpy.int32), "counts": numpy.zeros(0, dtype=numpy.int32)}


def build_guesser(sentences: Iterable[Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]]
                  ) -> Dict[str, numpy.ndarray]:
    """The guesser table of ``(attrs, upos ids, feats ids)`` sentences
    (words with an unknown UPOS or FEATS, -1, are not counted)."""
    tokens: Counter = Counter()     # (lower, upos, feats) -> tokens
    suffixes: Dict[int, Tuple[int, ...]] = {}
    stems: Dict[int, Tuple[int, ...]] = {}
    for attrs, upos, feats in sentences:
        known = (upos >= 0) & (feats >= 0)
        if not known.any():
            continue
        rows = attrs[known]
        for row, u, f in zip(rows.tolist(), upos[known].tolist(), feats[known].tolist()):
            tokens[(row[LOWER], u, f)] += 1
            if row[LOWER] not in suffixes:
                suffixes[row[LOWER]] = tuple(row[SUFFIX1:SUFFIX1 + MAX_SUFFIX])
                stems[row[LOWER]] = tuple(row[STEM1:STEM1 + MAX_STEM_CUT])
    table: Dict[int, Counter] = {}
    for (lower, u, f), n in tokens.items():
        table.setdefault(guesser_key(u, 0, lower), Counter())[f] += n
        for k, suffix in enumerate(suffixes[lower], start=1):
            if suffix:                  # 0: the word is not longer than k characters
                table.setdefault(guesser_key(u, k, suffix), Counter())[f] += 1
        for stem in set(stems[lower]):
            if stem:
                table.setdefault(guesser_key(u, STEM_KIND, stem), Counter())[f] += 1
    if not table:
        return empty_guesser()
    keys = sorted(table)
    rows = [sorted(table[k].items()) for k in keys]
    return {"keys": numpy.asarray(keys, dtype=numpy.uint64),
            "ptr": numpy.cumsum([0] + [len(r) for r in rows]).astype(numpy.int32),
            "ids": numpy.asarray([f for r in rows for f, _ in r], dtype=numpy.int32),
            "counts": numpy.asarray([n for r in rows for _, n in r], dtype=numpy.int32)}
