"""Hierarchical word classes induced from text, for the ``cluster_bits`` features.

Koo, Carreras & Collins (2008) give the parser Brown cluster paths (Brown et
al. 1992); this package induces such paths for any language from the words
the user has (the treebank, raw text). The method is divisive exchange
clustering: the words are split top-down into a binary hierarchy, each split
refined by exchange passes (Kneser & Ney 1993; Martin, Liermann & Ney 1998)
that maximise the class-bigram log-likelihood (the objective of Uszkoreit &
Brants 2008), a word moving only between the two children of its class; one
bit per level gives Brown-style paths. spaCy-free: words are strings.

- ``bigrams``: word bigram counts as sparse arrays
- ``exchange``: the exchange step with incremental move deltas (Cython)
- ``divisive``: the top-down splits, level by level
- ``paths``: bit paths, Liang-format paths files, ``ClusterTable``
- ``induce``: ``induce_word_classes``, ``classes_from_sentences``
"""
from .bigrams import EmptyCorpusError, count_bigrams
from .divisive import ExchangeProgress
from .exchange import ExchangeState
from .induce import (DEPTH, MIN_COUNT, PASSES, WordClasses, classes_from_sentences,
                     induce_word_classes)

__all__ = [
    "DEPTH", "MIN_COUNT", "PASSES", "EmptyCorpusError", "ExchangeProgress", "ExchangeState",
    "WordClasses", "classes_from_sentences", "count_bigrams", "induce_word_classes",
]
