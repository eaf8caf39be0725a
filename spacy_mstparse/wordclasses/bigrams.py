"""Word bigram counts of a corpus, as the sparse arrays the exchange step reads.

The sentences are read as one stream in which a boundary pseudo-word stands
before every sentence and after the last, so that every token has a left and
a right neighbour and sentence-initial / -final words share the boundary as
context (as in the class bigram models of Kneser & Ney 1993 and Martin,
Liermann & Ney 1998). Words seen fewer than ``min_count`` times become one
"rare" pseudo-word: they keep their place in their neighbours' contexts but
get no class of their own. Word ids are frequency ranks (0 = the most
frequent), which the divisive clustering uses to initialise its splits.
"""
from array import array
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence

import numpy



class EmptyCorpusError(ValueError):
    """A corpus without a single word."""


@dataclass
class BigramCounts:
    """``words[i]``: the word of id i (None for the two pseudo-words, ids
    ``boundary_id`` and ``rare_id``), ``counts[i]`` its number of tokens; ``right_*`` the words
    following each word and how often (CSR: ``right_word[right_ptr[i]:right_ptr[i+1]]``),
    ``left_*`` the words preceding it."""

    words: List[Optional[str]]
    counts: numpy.ndarray
    right_ptr: numpy.ndarray
    right_word: numpy.ndarray
    right_count: numpy.ndarray
    left_ptr: numpy.ndarray
    left_word: numpy.ndarray
    left_count: numpy.ndarray
    boundary_id: int
    rare_id: int

    @property
    def n_words(self) -> int:
        return len(self.words)

    def is_word(self) -> numpy.ndarray:
        """Which ids are real words (not a pseudo-word)."""
        real = numpy.ones(len(self.words), dtype=bool)
        real[[self.boundary_id, self.rare_id]] = False
        return real


def _token_stream(sentences: Iterable[Sequence[str]], lowercase: bool):
    """(token ids in order of first appearance, -1 at boundaries; the words)."""
    ids: Dict[str, int] = {}
    stream = array("q", [-1])
    for sentence in sentences:
        if isinstance(sentence, str):
            raise TypeError("expected sentences as lists of words, got a string")
        if not len(sentence):
            continue
        for word in sentence:
            if lowercase:
                word = word.lower()
            stream.append(ids.setdefault(word, len(ids)))
        stream.append(-1)
    return numpy.frombuffer(stream, dtype=numpy.int64), list(ids)


def _csr(rows: numpy.ndarray, cols: numpy.ndarray, n: int):
    """(ptr, col, count) of the (row, col) pairs, counted, rows in order."""
    codes, counts = numpy.unique(rows * n + cols, return_counts=True)
    ptr = numpy.searchsorted(codes // n, numpy.arange(n + 1)).astype(numpy.int64)
    return ptr, (codes % n).astype(numpy.int64), counts.astype(numpy.int64)


def count_bigrams(sentences: Iterable[Sequence[str]], min_count: int = 2,
                  lowercase: bool = False) -> BigramCounts:
    """The bigram counts of ``sentences`` (lists of words, as written unless
    ``lowercase``). Raises ``EmptyCorpusError`` without any word."""
    if min_count < 1:
        raise ValueError(f"min_count must be at least 1, got {min_count}")
    stream, first_seen = _token_stream(sentences, lowercase)
    if not first_seen:
        raise EmptyCorpusError("no words to cluster (the input is empty)")
    tokens = stream[stream >= 0]
    word_counts = numpy.bincount(tokens, minlength=len(first_seen))
    kept = numpy.flatnonzero(word_counts >= min_count)
    # compact ids: the kept words, then the boundary, then the rare pseudo-word
    boundary, rare = len(kept), len(kept) + 1
    compact = numpy.full(len(first_seen) + 1, rare, dtype=numpy.int64)
    compact[kept] = numpy.arange(len(kept))
    compact[-1] = boundary                      # stream's -1 indexes the last entry
    stream = compact[stream]
    counts = numpy.concatenate([word_counts[kept], [len(stream) - len(tokens),
                                                    len(tokens) - word_counts[kept].sum()]])
    names: List[Optional[str]] = [first_seen[i] for i in kept] + [None, None]
    # final ids by frequency rank (ties: first appearance; the pseudo-words last)
    by_rank = numpy.argsort(-counts, kind="stable")
    rank = numpy.empty_like(by_rank)
    rank[by_rank] = numpy.arange(len(by_rank))
    ids = rank[stream]
    n = len(by_rank)
    right = _csr(ids[:-1], ids[1:], n)
    left = _csr(ids[1:], ids[:-1], n)
    return BigramCounts([names[i] for i in by_rank], counts[by_rank].astype(numpy.int64),
                        *right, *left, int(rank[boundary]), int(rank[rare]))
