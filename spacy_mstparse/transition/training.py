"""Training of the arc-standard SVM parser (``model.TransitionModel``) as
``spacy train`` drives it, through repeated calls instead of one batch
optimization.

``begin`` scans the training trees once (``training_scan``: vocabulary and
rare-word cut-off, valence averages, frequent word pairs, labels and
transition classes, the number of static-oracle configurations that makes
one epoch) and allocates zero SVMs. ``train`` takes one sub-gradient step
of the one-vs-rest SVMs (step 1/(lambda t); Yamada & Matsumoto 2003, Choo &
Shivaditya 2020) per oracle configuration of the arc-standard system (Nivre
2004, 2008), t counting across calls; every time the configurations seen
reach one epoch, the epoch's training error (share of configurations whose
best valid class was not the oracle's, measured before each step) is
compared with the previous epoch's, and when it fell by less than
``delta`` training has converged. No spaCy here.
"""
from typing import Iterable, List, Optional, Tuple

import numpy

from . import training_scan
from .model import TransitionModel
from .parser import ArcStandardModel
from .svm import OneVsRestSVM
from .svm import _rebuild as rebuild_svm

# (token rows (LOWER, tag), gold heads, gold classes, sentence bounds) of one doc
TrainingDoc = Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray, numpy.ndarray]


def fresh_progress() -> dict:
    return {
        "svm_t": 0,
        "epochs_done": 0,
        "error_history": [],
        "converged": False,
        "epoch_progress": [0, 0],  # configurations and errors in the current epoch
    }


def end_epoch(progress: dict, delta: float) -> bool:
    """Close an epoch of ``progress``: record its training error (share of
    configurations whose best valid class was not the oracle's) and stop
    (``converged``, returned) when it is less than ``delta`` below the
    previous epoch's."""
    n_configs, n_wrong = progress["epoch_progress"]
    error = n_wrong / n_configs if n_configs else 0.0
    history = progress["error_history"]
    if history and history[-1] - error < delta:
        progress["converged"] = True
    history.append(error)
    progress["epochs_done"] += 1
    progress["epoch_progress"] = [0, 0]
    return bool(progress["converged"])


class TransitionTrainer:
    """The trainable SVMs of a ``TransitionModel`` (the running sums and
    their averaging state) and the training ``progress``: the SVM step count
    ``svm_t``, epochs done, per-epoch training errors, ``converged`` and the
    current epoch's counts. Without ``svm`` the SVMs are built from the
    model's weights on first use (warm start: S = w lambda t with the saved
    t, averaging restarted)."""

    def __init__(self, model: TransitionModel, progress: Optional[dict] = None,
                 svm: Optional[OneVsRestSVM] = None):
        self.model = model
        self.progress = fresh_progress() if progress is None else progress
        self._svm = svm
        self._parser: Optional[ArcStandardModel] = None
        self.stale = False  # the model's weights lag behind the SVMs'

    def begin(self, sentences: List[training_scan.Sentence], labels: Optional[List[str]],
              delimiter: str, n_nonprojective: int) -> None:
        """Learn the inventory and lexicon from the training ``sentences``
        (``training_scan``; ``delimiter`` marks lifted labels) and start from
        zero SVMs."""
        cfg, model = self.model.cfg, self.model
        found, vocab_ids, valence, pairs = training_scan.scan(sentences, cfg, labels, delimiter)
        model.inventory.update(found)
        model.set_lexicon(vocab_ids, valence,
                          numpy.zeros(0, dtype="uint64") if pairs is None else pairs)
        model.inventory["n_nonprojective_trees"] = n_nonprojective
        self.progress = fresh_progress()
        self._svm = OneVsRestSVM(cfg["n_buckets"], len(model.inventory["classes"]), cfg["lam"],
                                 cfg["average"])
        self._parser = None
        model.set_svm(None)
        self.stale = True

    @property
    def has_svm(self) -> bool:
        return self._svm is not None

    @property
    def svm(self) -> OneVsRestSVM:
        if self._svm is None:
            weights = self.model.svm.dense_table()
            svm = OneVsRestSVM(weights.shape[0], weights.shape[1], self.model.cfg["lam"],
                               self.model.cfg["average"])
            svm.set_weights(weights, max(1, int(self.progress["svm_t"])))
            self._svm = svm
        return self._svm

    @property
    def parser(self) -> ArcStandardModel:
        """The oracle-training loop over the trainable SVMs."""
        if self._parser is None:
            self._parser = self.model.make_parser(self.svm)
        return self._parser

    @property
    def converged(self) -> bool:
        return bool(self.progress["converged"])

    def train(self, docs: Iterable[TrainingDoc]) -> Tuple[int, bool]:
        """One SVM step per oracle configuration of every doc, until an
        epoch ends converged. Returns the number of configurations whose best
        valid transition was not the oracle's (before the step) and whether
        training converged in these docs."""
        parser = self.parser
        self.stale = True
        loss = 0
        for rows, gold_heads, gold_classes, bounds in docs:
            words, tags, dl, dr = self.model.encode(rows)
            n_configs, n_wrong, _ = parser.train_doc(
                words, tags, dl, dr, bounds, gold_heads, gold_classes)
            loss += n_wrong
            self.progress["svm_t"] = int(parser.svm.t)
            epoch = self.progress["epoch_progress"]
            epoch[0] += n_configs
            epoch[1] += n_wrong
            if epoch[0] >= self.model.inventory["epoch_configs"] > 0:
                if end_epoch(self.progress, self.model.cfg["delta"]):
                    return loss, True
        return loss, False

    def install_weights(self) -> None:
        """Give the model the weights to predict with: the average of the
        SVM iterates with ``average``, else the last iterate."""
        weights = self.svm.prediction_weights()
        lam = self.model.cfg["lam"]
        self.model.set_svm(rebuild_svm(
            weights.shape[0], weights.shape[1], lam,
            {"table": weights, "t": max(1, int(self.progress["svm_t"])), "lam": lam}))
        self.stale = False
