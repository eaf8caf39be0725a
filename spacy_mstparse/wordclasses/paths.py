"""Leaf classes as Brown-style bit paths: strings, a Liang-format paths file,
and a ``ClusterTable`` for the parser's ``cluster_bits`` features.

A ``ClusterTable`` stores a path as an integer whose lowest bit is the
path's first bit (``features.clusters.path_code``), and 0 means "no cluster"
there, so the all-zero path would be lost. Swapping the two children of a
class does not change the hierarchy; ``spare_zero_path`` swaps them along
one branch so that the all-zero path goes to the leaf with the fewest tokens
(an empty leaf if there is one).
"""
from pathlib import Path
from typing import Callable, Dict, Iterable, Tuple, Union

import numpy

from ..corpus.atomic import atomic_write_text
from ..features.clusters import ClusterTable, path_code


def spare_zero_path(leaves: numpy.ndarray, depth: int, tokens: numpy.ndarray) -> numpy.ndarray:
    """The leaves (``depth``-bit classes, first bit highest) relabelled by
    child swaps so that leaf 0 is the leaf whose words have the fewest
    ``tokens``."""
    mass = numpy.bincount(leaves, weights=tokens, minlength=2 ** depth)
    target = int(numpy.argmin(mass))
    leaves = leaves.copy()
    for level in range(1, depth + 1):
        bit = depth - level                       # this level's bit, from the lowest
        if target >> bit & 1:
            same_parent = (leaves >> (bit + 1)) == (target >> (bit + 1))
            leaves[same_parent] ^= 1 << bit
    return leaves


def leaf_bits(leaf: int, depth: int) -> str:
    """The path of a leaf class as a string of ``depth`` bits, first level first."""
    return format(leaf, f"0{depth}b")


def paths_file_text(paths: Dict[str, str], counts: Dict[str, int]) -> str:
    """Liang's ``paths`` format: ``bits<TAB>word<TAB>count`` lines, by path,
    then by falling count, then by word."""
    rows = sorted(paths.items(), key=lambda item: (item[1], -counts[item[0]], item[0]))
    return "".join(f"{bits}\t{word}\t{counts[word]}\n" for word, bits in rows)


def write_paths_file(path: Union[str, Path], paths: Dict[str, str], counts: Dict[str, int]) -> None:
    """Write a paths file (atomically), readable by ``features.clusters.read_brown_paths``."""
    atomic_write_text(path, paths_file_text(paths, counts))


def cluster_table(paths: Iterable[Tuple[str, str]], word_id: Callable[[str], int]) -> ClusterTable:
    """A ``ClusterTable`` of (word, bit string) pairs, words keyed by ``word_id``."""
    return ClusterTable.from_paths(((word, path_code(bits)) for word, bits in paths), word_id)
