"""The HEAD / DEP rows ``Doc.from_array`` takes, built for a whole batch of
parsed docs at once (numpy, no per-sentence Python work in the common case).

A doc is parsed in chunks ``(start, end, continues)`` (its sentences, cut
into pieces of at most ``max_sentence_length`` words); each chunk's parse is
``(heads, labels)`` over its words with the artificial root at index 0
(head 0: the root; label -1: none). The rows hold each word's head as an
offset from the word (0 for the sentence root, as spaCy stores it) and the
string id of its label. The root of a chunk that continues a sentence is
attached to the root of the sentence's first chunk with ``joined_label``.
"""
from typing import List, Sequence, Tuple

import numpy


def doc_rows(items: Sequence[Tuple[int, list, list]], label_ids: numpy.ndarray,
             joined_label: int) -> List[numpy.ndarray]:
    """The uint64 rows (n_words x [HEAD offset, DEP id]) of every
    ``(n_words, chunks, parses)``; ``label_ids`` maps a label index to its
    string id (its last entry, for -1, is 0). Words outside every chunk get
    offset 0 and no label."""
    if not items:
        return []
    parses = [parse for _, _, doc_parses in items for parse in doc_parses]
    heads = numpy.concatenate([numpy.asarray(h, dtype="int64") for h, _ in parses])
    labels = numpy.concatenate([numpy.asarray(l, dtype="int64") for _, l in parses])
    sizes = numpy.fromiter((len(h) for h, _ in parses), dtype="int64", count=len(parses))
    position = numpy.arange(len(heads)) - numpy.repeat(numpy.cumsum(sizes) - sizes, sizes)
    is_word = position > 0
    rows = numpy.empty((int(is_word.sum()), 2), dtype="uint64")
    rows[:, 0] = numpy.where(heads == 0, 0, heads - position)[is_word].astype("uint64")
    rows[:, 1] = label_ids[labels[is_word]]
    out, begin = [], 0
    for n_words, chunks, _ in items:
        size = sum(end - start for start, end, _ in chunks)
        chunk_rows = rows[begin:begin + size]
        if size == n_words and all(a[1] == b[0] for a, b in zip(chunks, chunks[1:])) \
                and (not chunks or chunks[0][0] == 0):
            doc = chunk_rows.copy()
        else:
            doc = numpy.zeros((n_words, 2), dtype="uint64")
            doc[numpy.concatenate([numpy.arange(s, e) for s, e, _ in chunks])] = chunk_rows
        if any(continues for _, _, continues in chunks):
            _join_chunks(doc, chunks, joined_label)
        out.append(doc)
        begin += size
    return out


def _join_chunks(rows: numpy.ndarray, chunks, joined_label: int) -> None:
    """Attach the root of every continuing chunk to its sentence's first root."""
    sentence_root = None
    for start, end, continues in chunks:
        root = start + int(numpy.flatnonzero(rows[start:end, 0] == 0)[0])
        if continues and sentence_root is not None:
            rows[root] = (numpy.int64(sentence_root - root).astype("uint64"), joined_label)
        else:
            sentence_root = root
