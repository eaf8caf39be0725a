"""Brown word clusters as an extra tag column of the graph parser's features.

Koo, Carreras & Collins (2008) add copies of the dependency features in
which prefixes of a word's Brown cluster path (Brown et al. 1992) stand in
for its POS tag: the clusters are learned from raw text, so they generalize
over words the treebank never showed. Here the first ``cluster_bits`` bits of
the path fill one more tag row of every ``Sentence``, so every template that
reads a tag (first order, siblings, grandparents, labeler) gets its cluster
copy.

A ``ClusterTable`` maps word ids (hashes of the word strings) to paths. A path
is stored as an integer whose lowest bit is the path's first bit (the
encoding of spaCy's ``lexeme_cluster`` tables), so the first k bits are
``path & (2**k - 1)``. Sources: a Brown clusters ``paths`` file (one
``bits<TAB>word[<TAB>count]`` line per word, the output of Liang's
implementation) or the ``lexeme_cluster`` table of the ``spacy-lookups-data``
package for a language. spaCy-free: the caller gives the word -> id function.
"""
import gzip
import io
import json
from pathlib import Path
from typing import Callable, Dict, Iterable, Tuple

import numpy

LOOKUPS_SOURCE = "spacy-lookups-data"
NO_CLUSTER = 0   # the row value of a word without a cluster


class ClusterError(ValueError):
    """A clusters source that cannot be read (names the file and line)."""


class ClusterTable:
    """Sorted word ids (uint64) and their paths (uint64, first bit lowest)."""

    def __init__(self, keys: numpy.ndarray, paths: numpy.ndarray):
        keys = numpy.asarray(keys, dtype="uint64")
        paths = numpy.asarray(paths, dtype="uint64")
        if keys.shape != paths.shape or keys.ndim != 1:
            raise ValueError("a ClusterTable needs two vectors of the same length")
        order = numpy.argsort(keys, kind="stable")
        self.keys, self.paths = keys[order], paths[order]

    @classmethod
    def from_paths(cls, pairs: Iterable[Tuple[str, int]], word_id: Callable[[str], int]):
        """From (word, path as integer) pairs; paths of 0 (no cluster) are left out,
        the first of repeated words is kept."""
        seen: Dict[int, int] = {}
        for word, path in pairs:
            if path:
                seen.setdefault(word_id(word), path)
        keys = numpy.fromiter(seen.keys(), dtype="uint64", count=len(seen))
        paths = numpy.fromiter(seen.values(), dtype="uint64", count=len(seen))
        return cls(keys, paths)

    def __len__(self) -> int:
        return int(self.keys.shape[0])

    def lookup(self, ids: numpy.ndarray) -> numpy.ndarray:
        """The path of each word id (0 where the table has none)."""
        ids = numpy.asarray(ids, dtype="uint64")
        if not len(self):
            return numpy.zeros(ids.shape, dtype="uint64")
        where = numpy.minimum(numpy.searchsorted(self.keys, ids), len(self) - 1)
        return numpy.where(self.keys[where] == ids, self.paths[where], 0).astype("uint64")

    def column(self, orth: numpy.ndarray, lower: numpy.ndarray, bits: int) -> numpy.ndarray:
        """The cluster row values of words: the first ``bits`` bits of the path of
        the word as written, else of its lower-cased form, plus one; 0 (``NO_CLUSTER``)
        for a word with neither."""
        paths = self.lookup(orth)
        missing = paths == 0
        paths[missing] = self.lookup(numpy.asarray(lower, dtype="uint64")[missing])
        mask = numpy.uint64((1 << bits) - 1)
        return numpy.where(paths == 0, NO_CLUSTER, (paths & mask) + numpy.uint64(1))

    def to_arrays(self) -> Dict[str, numpy.ndarray]:
        return {"keys": self.keys, "paths": self.paths}


def path_code(bits: str) -> int:
    """The integer of a path string such as "0110" (its first bit lowest)."""
    return int(bits[::-1], 2)


def path_text(value: int, bits: int) -> str:
    """A cluster row value (``ClusterTable.column``) as the ``bits``-bit path
    prefix it stands for, e.g. "011010"; "<no-cluster>" for 0. (The integer
    encoding drops a path's trailing zeros: the prefix is padded with zeros,
    as the features read it; ``bits`` = 64, the whole path, ends at its last 1.)"""
    if value == NO_CLUSTER:
        return "<no-cluster>"
    path = value - 1
    n = bits if bits < 64 else max(path.bit_length(), 1)
    return "".join(str(path >> i & 1) for i in range(n))


def read_brown_paths(path: Path, word_id: Callable[[str], int]) -> ClusterTable:
    """A ``paths`` file: ``bits<TAB>word[<TAB>count]`` per line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf8")
    except (OSError, UnicodeDecodeError) as err:
        raise ClusterError(f"{path}: cannot read the clusters file ({err})") from None
    pairs = []
    for number, line in enumerate(io.StringIO(text), 1):
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        fields = line.split("\t")
        bits = fields[0]
        if len(fields) < 2 or not fields[1] or not bits or set(bits) - {"0", "1"} or len(bits) > 63:
            raise ClusterError(
                f"{path}, line {number}: expected 'bits<TAB>word[<TAB>count]' with a path "
                f"of 1 to 63 bits, got {line[:60]!r}")
        pairs.append((fields[1], path_code(bits)))
    if not pairs:
        raise ClusterError(f"{path}: no clusters in the file")
    return ClusterTable.from_paths(pairs, word_id)


def read_lookups_clusters(lang: str, word_id: Callable[[str], int]) -> ClusterTable:
    """The ``lexeme_cluster`` table of the spacy-lookups-data package for ``lang``."""
    try:
        import spacy_lookups_data
    except ImportError:
        raise ClusterError(
            f"the {LOOKUPS_SOURCE} package is not installed: pip install "
            f"'spacy-mstparse[clusters]', or give a Brown clusters paths file") from None
    data = Path(spacy_lookups_data.__file__).parent / "data" / f"{lang}_lexeme_cluster.json.gz"
    if not data.exists():
        raise ClusterError(f"{LOOKUPS_SOURCE} has no word clusters for language {lang!r}")
    with gzip.open(data, "rt", encoding="utf8") as f:
        table = json.load(f)
    return ClusterTable.from_paths(table.items(), word_id)


def read_clusters(source: str, lang: str, word_id: Callable[[str], int]) -> ClusterTable:
    """The clusters of ``source``: ``LOOKUPS_SOURCE`` (for ``lang``) or a paths file."""
    if source == LOOKUPS_SOURCE:
        return read_lookups_clusters(lang, word_id)
    return read_brown_paths(Path(source), word_id)
