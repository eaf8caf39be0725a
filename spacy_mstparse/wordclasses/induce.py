"""Induce hierarchical word classes from sentences: the package's entry points.

``induce_word_classes`` counts the bigrams (``bigrams.py``), clusters the
words top-down by exchange (``divisive.py``, ``exchange.pyx``) and gives each
word seen at least ``min_count`` times a Brown-style path of ``depth`` bits
(``paths.py``). ``classes_from_sentences`` returns them as the parser's
``ClusterTable`` directly.
"""
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Iterable, Optional, Sequence, Union

import numpy

from ..features.clusters import ClusterTable
from .bigrams import count_bigrams
from .divisive import ProgressCallback, divisive_classes
from .exchange import ExchangeState
from .paths import cluster_table, leaf_bits, spare_zero_path, write_paths_file

DEPTH = 8        # 256 leaves; the parser reads the first 6 bits by default
MIN_COUNT = 2    # words seen once get no class (on EWT dev they cost UAS)
PASSES = 10      # exchange passes per level at most


@dataclass(frozen=True)
class WordClasses:
    """``paths``: word -> path (``depth`` characters "0"/"1", the first
    split first); ``counts``: word -> tokens in the corpus; ``objectives``:
    the class-bigram log-likelihood at the end of each level."""

    paths: Dict[str, str]
    counts: Dict[str, int]
    depth: int
    objectives: Sequence[float]

    def __len__(self) -> int:
        return len(self.paths)

    def write_paths(self, path: Union[str, Path]) -> None:
        """Write Liang's ``bits<TAB>word<TAB>count`` format (atomically)."""
        write_paths_file(path, self.paths, self.counts)

    def to_cluster_table(self, word_id: Callable[[str], int]) -> ClusterTable:
        return cluster_table(self.paths.items(), word_id)


def induce_word_classes(sentences: Iterable[Sequence[str]], depth: int = DEPTH,
                        min_count: int = MIN_COUNT, passes: int = PASSES, seed: int = 0,
                        lowercase: bool = False,
                        progress: Optional[ProgressCallback] = None) -> WordClasses:
    """Word classes of ``sentences`` (lists of words, taken as written unless
    ``lowercase``). ``progress`` gets an ``ExchangeProgress`` after each
    level's split and each pass. Raises ``bigrams.EmptyCorpusError`` for a
    corpus without words."""
    if not 1 <= depth <= 63:
        raise ValueError(f"depth must be between 1 and 63, got {depth}")
    bigrams = count_bigrams(sentences, min_count=min_count, lowercase=lowercase)
    state = ExchangeState(bigrams.right_ptr, bigrams.right_word, bigrams.right_count,
                          bigrams.left_ptr, bigrams.left_word, bigrams.left_count)
    objectives = []

    def track(report):
        if objectives and objectives[-1][0] == report.level:
            objectives[-1] = (report.level, report.objective)
        else:
            objectives.append((report.level, report.objective))
        if progress is not None:
            progress(report)

    leaves = divisive_classes(state, depth, passes=passes, seed=seed, progress=track)
    is_word = bigrams.is_word()
    leaves = spare_zero_path(leaves, depth, numpy.where(is_word, bigrams.counts, 0))
    paths, counts = {}, {}
    for i in numpy.flatnonzero(is_word):
        word = bigrams.words[i]
        paths[word] = leaf_bits(int(leaves[i]), depth)
        counts[word] = int(bigrams.counts[i])
    return WordClasses(paths, counts, depth, [objective for _, objective in objectives])


def classes_from_sentences(sentences: Iterable[Sequence[str]], word_id: Callable[[str], int],
                           depth: int = DEPTH, min_count: int = MIN_COUNT, passes: int = PASSES,
                           seed: int = 0, lowercase: bool = False,
                           progress: Optional[ProgressCallback] = None) -> ClusterTable:
    """The ``ClusterTable`` of the word classes of ``sentences`` (e.g. the
    training treebank's words at ``initialize``), words keyed by ``word_id``."""
    return induce_word_classes(sentences, depth=depth, min_count=min_count, passes=passes,
                               seed=seed, lowercase=lowercase,
                               progress=progress).to_cluster_table(word_id)
