"""The attributes of each word that the tagger's features read.

A sentence becomes a ``(n, N_ATTRS)`` uint64 array of string ids
(``features.hashing.string_id``): the lower-cased form, a short shape
(``Xxx``, ``dd.d``), the suffixes of one to four and the prefixes of one to
three characters (0 when the word is not longer than that), a few
orthographic flags and the word's ambiguity class: the set of UPOS tags it
had in the training words (0 for a word not seen; a ``Lexicon`` gives it).
These are the word features of Ratnaparkhi (1996) and Collins (2002), which
also decide the tags of words never seen in training; the ambiguity class of
the next words lets a left-to-right tagger look ahead (Toutanova et al. 2003).
The last columns, the word's stems (the lower-cased form without its last
one to three characters, at least three left; 0 otherwise), are not
features: the FEATS guesser (``guesser.py``) looks them up.
"""
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy

from ..features.hashing import string_id

(LOWER, SHAPE, SUFFIX1, SUFFIX2, SUFFIX3, SUFFIX4, PREFIX1, PREFIX2, PREFIX3, FLAGS,
 AMBIGUITY, STEM1, STEM2, STEM3) = range(14)
N_FEATURE_ATTRS = 11   # the attributes read as features (the stems only guess, guesser.py)
N_ATTRS = 14
MIN_STEM = 3           # characters of a stem
MAX_STEM_CUT = 3
MAX_SHAPE = 8


def word_shape(word: str) -> str:
    """Letters as X / x, digits as d, other characters kept; runs of one
    kind collapsed, at most MAX_SHAPE characters read."""
    out: List[str] = []
    for ch in word[:MAX_SHAPE]:
        kind = "X" if ch.isupper() else "x" if ch.isalpha() else "d" if ch.isdigit() else ch
        if not out or out[-1] != kind:
            out.append(kind)
    return "".join(out)


def word_flags(word: str) -> str:
    """Capitalised / all upper / has a digit / has a hyphen, as a string."""
    return "".join((
        "C" if word[:1].isupper() else "c",
        "U" if word.isupper() else "u",
        "D" if any(ch.isdigit() for ch in word) else "d",
        "H" if "-" in word else "h",
    ))


Lexicon = Dict[int, int]    # lower-cased form id -> ambiguity class id
LEXICON_MIN_COUNT = 5


def build_lexicon(sentences: Iterable[Tuple[numpy.ndarray, numpy.ndarray]],
                  min_count: int = LEXICON_MIN_COUNT) -> Lexicon:
    """The ambiguity class of the words of ``(attrs, upos ids)`` pairs seen
    at least ``min_count`` times (words with an unknown UPOS, -1, are not
    counted). Rare words are left out: in training every word would have
    a class, at parse time the rare ones do not, and the tagger would learn
    to trust a class seen once."""
    seen: Dict[int, set] = {}
    counts: Dict[int, int] = {}
    for attrs, upos in sentences:
        for lower, tag in zip(attrs[:, LOWER].tolist(), upos.tolist()):
            if tag >= 0:
                seen.setdefault(lower, set()).add(tag)
                counts[lower] = counts.get(lower, 0) + 1
    return {lower: string_id("|".join(map(str, sorted(tags)))) for lower, tags in seen.items()
            if counts[lower] >= min_count}


def with_lexicon(attrs: numpy.ndarray, lexicon: Optional[Lexicon]) -> numpy.ndarray:
    """A copy of ``attrs`` whose AMBIGUITY column comes from ``lexicon``."""
    out = attrs.copy()
    get = (lexicon or {}).get
    out[:, AMBIGUITY] = [get(lower, 0) for lower in attrs[:, LOWER].tolist()]
    return out


def word_attributes(words: Sequence[str], lexicon: Optional[Lexicon] = None) -> numpy.ndarray:
    """The ``(len(words), N_ATTRS)`` uint64 attribute ids of a sentence
    (ambiguity classes from ``lexicon``, else 0)."""
    out = numpy.zeros((len(words), N_ATTRS), dtype=numpy.uint64)
    for i, word in enumerate(words):
        lower = word.lower()
        row = out[i]
        row[LOWER] = string_id(lower)
        row[SHAPE] = string_id(word_shape(word))
        for k in range(1, 5):
            if len(lower) > k:
                row[SUFFIX1 + k - 1] = string_id(lower[-k:])
        for k in range(1, 4):
            if len(lower) > k:
                row[PREFIX1 + k - 1] = string_id(lower[:k])
        for k in range(1, MAX_STEM_CUT + 1):
            if len(lower) - k >= MIN_STEM:
                row[STEM1 + k - 1] = string_id(lower[:-k])
        row[FLAGS] = string_id(word_flags(word))
    return with_lexicon(out, lexicon) if lexicon else out
