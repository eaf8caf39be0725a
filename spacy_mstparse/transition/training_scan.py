"""What ``arcstandard_svm``'s ``initialize()`` learns from the training
trees before any SVM step (Choo & Shivaditya 2020, with the departures the
component lists): kept decorations of lifted labels (Nivre & Nilsson 2005),
the vocabulary after the rare-word cut-off, labels and transition classes,
valence averages, the epoch size in oracle configurations and the most
frequent (stack top, buffer front) word pairs.

A training sentence is ``(lower ids, heads, deps)``: the words' LOWER
hashes (uint64, no root), heads 0..n with the root at 0 (``heads[0]``
unused) and labels with ``deps[0]`` unused. No spaCy here.
"""
from collections import Counter
from typing import Dict, List, Optional, Sequence, Tuple

import numpy

from .arc_standard import oracle
from .features import ROOT_WORD, UNK_WORD, pair_keys

Sentence = Tuple[numpy.ndarray, numpy.ndarray, List[str]]


def keep_lifted_labels(sentences: List[Sentence], min_count: int,
                       delimiter: str) -> Tuple[List[str], List[Sentence]]:
    """The decorated labels (``label<delimiter>head label``) seen at least
    ``min_count`` times, sorted, and the sentences with the rarer ones cut
    back to their plain label."""
    decorated = Counter(d for _, _, deps in sentences for d in deps if delimiter in d)
    kept = {d for d, c in decorated.items() if c >= min_count}
    if len(kept) < len(decorated):
        sentences = [
            (lower, heads, [d if d in kept or delimiter not in d else d.split(delimiter)[0]
                            for d in deps])
            for lower, heads, deps in sentences
        ]
    return sorted(kept), sentences


def vocabulary(sentences: Sequence[Sentence], cutoff: int) -> numpy.ndarray:
    """Sorted word ids seen at least ``cutoff`` times."""
    counts = Counter()
    for lower, _, _ in sentences:
        counts.update(lower.tolist())
    return numpy.array(sorted(w for w, c in counts.items() if c >= cutoff), dtype="uint64")


def transition_classes(sentences: Sequence[Sentence], labels: Optional[List[str]] = None):
    """``(labels, root label, classes)``: classes ``["S", -1]``, then
    ``["L", label id]`` for every label seen on a left arc (not the root
    label), then ``["R", label id]`` for those seen on a right arc and the
    root label. With ``labels`` given, every one of them goes both ways."""
    left, right, root = Counter(), Counter(), Counter()
    for _, heads, deps in sentences:
        for i in range(1, len(heads)):
            if heads[i] == 0:
                root[deps[i]] += 1
            elif heads[i] > i:
                left[deps[i]] += 1
            else:
                right[deps[i]] += 1
    if labels is not None:
        label_list = sorted(set(labels))
        left_labels = right_labels = set(label_list)
    else:
        label_list = sorted(set(left) | set(right) | set(root))
        left_labels, right_labels = set(left), set(right)
    root_label = root.most_common(1)[0][0] if root else None
    label_ids = {label: i for i, label in enumerate(label_list)}
    classes = [["S", -1]]
    classes += [["L", label_ids[l]] for l in label_list if l in left_labels and l != root_label]
    classes += [["R", label_ids[l]] for l in label_list if l in right_labels or l == root_label]
    return label_list, root_label, classes


class GoldClasses:
    """The transition class that builds each gold arc: ``LEFT-ARC(label)``
    for a head to the right, ``RIGHT-ARC(label)`` otherwise (root arcs
    included), over ``classes`` as ``transition_classes`` makes them."""

    def __init__(self, labels: List[str], classes: List[list]):
        self.label_ids = {label: i for i, label in enumerate(labels)}
        self.left = {l: c for c, (m, l) in enumerate(classes) if m == "L"}
        self.right = {l: c for c, (m, l) in enumerate(classes) if m == "R"}

    def __call__(self, heads: numpy.ndarray, deps: List[str]) -> Optional[List[int]]:
        """The class of each word's gold arc, or None if a label (or label
        and direction) has no class."""
        out = []
        for i in range(1, len(heads)):
            table = self.left if heads[i] > i else self.right
            c = table.get(self.label_ids.get(deps[i], -1), -1)
            if c < 0:
                return None
            out.append(c)
        return out


def map_words(vocab_ids: numpy.ndarray, lower: numpy.ndarray):
    """(word ids with words outside the vocabulary as UNK, known mask,
    vocabulary index)."""
    if vocab_ids.shape[0]:
        pos = numpy.searchsorted(vocab_ids, lower)
        pos[pos == vocab_ids.shape[0]] = 0
        known = vocab_ids[pos] == lower
    else:
        pos = numpy.zeros(lower.shape[0], dtype="int64")
        known = numpy.zeros(lower.shape[0], dtype=bool)
    words = numpy.ascontiguousarray(numpy.where(known, lower, numpy.uint64(UNK_WORD)),
                                    dtype="uint64")
    return words, known, pos


def valence(sentences: Sequence[Sentence],
            vocab_ids: numpy.ndarray) -> Tuple[numpy.ndarray, Optional[List[float]]]:
    """Average numbers of left and right dependents of each vocabulary word
    (2 x vocabulary float32), and of the UNK word (None if no word was
    unknown)."""
    n_seen, n_left, n_right = Counter(), Counter(), Counter()
    known = set(vocab_ids.tolist())
    for lower, heads, _ in sentences:
        words = [w if w in known else UNK_WORD for w in lower.tolist()]
        n_seen.update(words)
        for i in range(1, len(heads)):
            h = heads[i]
            if h > 0:
                (n_left if i < h else n_right)[words[h - 1]] += 1
    vocab = vocab_ids.tolist()
    table = numpy.array(
        [[n_left[w] / n_seen[w] for w in vocab], [n_right[w] / n_seen[w] for w in vocab]],
        dtype="float32",
    ).reshape(2, len(vocab))
    unk = None
    if n_seen[UNK_WORD]:
        unk = [n_left[UNK_WORD] / n_seen[UNK_WORD], n_right[UNK_WORD] / n_seen[UNK_WORD]]
    return table, unk


def oracle_pairs(sentences: Sequence[Sentence], vocab_ids: numpy.ndarray,
                 limit: int) -> Tuple[int, Optional[numpy.ndarray]]:
    """The number of static-oracle configurations over the sentences (one
    epoch) and the ``limit`` most frequent (stack top, buffer front) word
    pair keys, sorted (None when ``limit`` is 0 or nothing was seen)."""
    n_configs = 0
    keys = []
    for lower, heads, _ in sentences:
        moves, s0, b0 = oracle(heads)
        n_configs += moves.shape[0]
        with_root = numpy.empty(len(lower) + 1, dtype="uint64")
        with_root[0] = ROOT_WORD
        with_root[1:] = map_words(vocab_ids, lower)[0]
        keys.append(pair_keys(with_root[s0], with_root[b0]))
    if not keys or not limit:
        return int(n_configs), None
    unique, freq = numpy.unique(numpy.concatenate(keys), return_counts=True)
    order = numpy.lexsort((unique, -freq))[:limit]
    return int(n_configs), numpy.sort(unique[order])


def scan(sentences: List[Sentence], cfg: Dict, labels: Optional[List[str]],
         delimiter: str):
    """Everything ``initialize()`` learns: ``(inventory updates, vocabulary,
    valence, word pairs or None)`` for settings ``cfg`` (the component's:
    ``min_lifted_label_count``, ``rare_word_cutoff``, ``word_pair_limit``)."""
    kept, sentences = keep_lifted_labels(sentences, cfg["min_lifted_label_count"], delimiter)
    vocab_ids = vocabulary(sentences, cfg["rare_word_cutoff"])
    label_list, root_label, classes = transition_classes(sentences, labels)
    valence_table, unk_valence = valence(sentences, vocab_ids)
    n_configs, pairs = oracle_pairs(sentences, vocab_ids, cfg["word_pair_limit"])
    inventory = {"lifted_labels": kept, "labels": label_list, "root_label": root_label,
                 "classes": classes, "epoch_configs": n_configs,
                 "n_train_trees": len(sentences), "vocab_size": int(vocab_ids.shape[0])}
    if unk_valence is not None:
        inventory["unk_valence"] = unk_valence
    return inventory, vocab_ids, valence_table, pairs
