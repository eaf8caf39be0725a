"""The arc-standard parser with a one-vs-rest linear SVM oracle as a model:
its settings, what training taught it besides the weights (labels,
transition classes, the lexicon: vocabulary after the rare-word cut-off,
valence averages, frequent word pairs), the weights it predicts with, and
the greedy parse of encoded tokens.

Arc-standard transitions (Nivre 2004, 2008); the next transition is the
best-scoring valid one under one binary linear SVM per transition class
(Yamada & Matsumoto 2003), with the feature set and lexicon of Choo &
Shivaditya (2020). Training: ``training.TransitionTrainer``.

Tokens come as rows (LOWER hash, tag id), uint64, of one or more docs;
sentences as (start, end) token bounds (int32). No spaCy here.
"""
from typing import List, Optional, Tuple

import numpy

from . import training_scan
from .features import group_mask
from .parser import ArcStandardModel
from .svm import OneVsRestSVM

MOVES = {"S": 0, "L": 1, "R": 2}
MOVE_NAMES = {"S": "SHIFT", "L": "LEFT-ARC", "R": "RIGHT-ARC"}


def empty_inventory() -> dict:
    return {
        "labels": [],
        "root_label": None,
        "classes": [],
        "lifted_labels": None,
        "unk_valence": [0.0, 0.0],
        "epoch_configs": 0,
        "n_train_trees": 0,
        "n_nonprojective_trees": 0,
        "vocab_size": 0,
    }


def empty_lexicon():
    return (numpy.zeros(0, dtype="uint64"), numpy.zeros((2, 0), dtype="float32"),
            numpy.zeros(0, dtype="uint64"))


class TransitionModel:
    """Settings ``cfg`` (``lam``, ``feature_groups``, ``word_distance``...),
    the ``inventory`` learned from the training data, the lexicon arrays and
    ``svm``, the weights the parser predicts with (a ``OneVsRestSVM``, dense
    or compact; None before training)."""

    def __init__(self, cfg: dict, inventory: Optional[dict] = None, lexicon=None,
                 svm: Optional[OneVsRestSVM] = None):
        self.cfg = cfg
        self.inventory = empty_inventory() if inventory is None else inventory
        self.set_lexicon(*(empty_lexicon() if lexicon is None else lexicon))
        self.set_svm(svm)

    def set_lexicon(self, vocab_ids: numpy.ndarray, valence: numpy.ndarray,
                    pairs: numpy.ndarray) -> None:
        """The vocabulary (sorted LOWER hashes above the cut-off), the (2,
        vocabulary) valence averages and the sorted hashed word pairs."""
        self.vocab_ids = vocab_ids
        self.valence = valence
        self.pairs = pairs
        self._parser = None

    def set_svm(self, svm: Optional[OneVsRestSVM]) -> None:
        self.svm = svm
        self._parser = None

    @property
    def classes(self) -> List[Tuple[str, Optional[str]]]:
        """("SHIFT", None), ("LEFT-ARC", label), ("RIGHT-ARC", label), ..."""
        labels = self.inventory["labels"]
        return [(MOVE_NAMES[m], labels[l] if l >= 0 else None)
                for m, l in self.inventory["classes"]]

    def make_parser(self, svm: OneVsRestSVM) -> ArcStandardModel:
        """The parse and oracle-training loops over ``svm``'s weights."""
        inventory = self.inventory
        root = inventory["root_label"]
        root_id = inventory["labels"].index(root) if root in inventory["labels"] else -1
        return ArcStandardModel(
            svm,
            numpy.array([MOVES[m] for m, _ in inventory["classes"]], dtype="int8"),
            numpy.array([l for _, l in inventory["classes"]], dtype="int32"),
            root_id,
            group_mask(self.cfg["feature_groups"], self.cfg["word_distance"]),
            self.pairs,
        )

    @property
    def parser(self) -> ArcStandardModel:
        """The parser over the prediction weights."""
        if self._parser is None:
            self._parser = self.make_parser(self.svm)
        return self._parser

    def encode(self, rows: numpy.ndarray) -> Tuple[numpy.ndarray, ...]:
        """Word ids after the rare-word cut-off, tag ids and left / right
        valence of tokens given as rows (LOWER, tag)."""
        tags = numpy.ascontiguousarray(rows[:, 1])
        words, known, pos = training_scan.map_words(self.vocab_ids, rows[:, 0])
        unk_dl, unk_dr = self.inventory["unk_valence"]
        if self.vocab_ids.shape[0]:
            dl = numpy.where(known, self.valence[0][pos], unk_dl).astype("float32")
            dr = numpy.where(known, self.valence[1][pos], unk_dr).astype("float32")
        else:
            dl = numpy.full(words.shape[0], unk_dl, dtype="float32")
            dr = numpy.full(words.shape[0], unk_dr, dtype="float32")
        return words, tags, dl, dr

    def parse(self, rows: numpy.ndarray, bounds: numpy.ndarray):
        """Greedy parse of every sentence: (heads, label ids) per token,
        heads 1..n within the sentence and 0 for its root word, label -1
        for none."""
        return self.parser.parse_doc(*self.encode(rows), bounds)
