"""The one training loop of the graph parser.

``GraphTrainer`` trains a ``GraphModel`` with a ``Learner``
(``spacy_mstparse.learners.base``) on encoded gold sentences, as Figure 3 of
McDonald et al. (2005): for each sentence, score with the current weights
(adding the Hamming loss to every non-gold arc for loss-augmented learners:
Pegasos-DP, Lee et al. 2010; the 1-slack SSVM, Joachims et al. 2009),
decode the best tree or the k best (k-best MIRA), form one constraint
``(phi(gold) - phi(tree), wrong heads)`` per tree, and hand ``batch_size``
sentences at a time to ``learner.step``. The second-stage labeler (McDonald
et al. 2006) learns on the gold tree as an averaged perceptron (multi-class,
or structured over each head's label chain).
The prediction weights are the tables' averages (one rule, ``averaged``),
passed through ``learner.finalize_weights``.

Partial annotation (Li, Zhang, Zhang, Chen & Liu 2016, after the
latent-structure perceptron): a gold head of -1 marks a word whose head is
unknown. Such a sentence trains toward its best completion under the
current weights: the "gold" tree is the best tree (of the decoder's search
space) that keeps every known arc, decoded with -inf on every other head of
an annotated word (``Constraints.decode``); the predicted tree is the best
(loss-augmented, the Hamming loss counting annotated words only) tree, and
its wrong heads are counted over annotated words only. No arc is invented
before training: the completion changes as the weights do. The labeler
learns only the labels of annotated arcs (in the context of the completed
tree). Known arcs that cross are completed by Chu-Liu-Edmonds even under
Eisner, as a fully annotated non-projective gold tree is used as it is;
known arcs that no tree holds (two roots) make no update and are counted in
``unusable``. With every head known, training is exactly as before.

Fully annotated sentences are scored, decoded and turned into constraints in
C (``training_batch.decode_for_training``; at first and second order the
update vector is built from the factors where the trees differ, not from the
whole trees),
with one thread as with many. Parallel training (``n_threads`` > 1): the
sentences of a block of ``parallel_batch`` sentences (rounded down to whole
learner mini-batches, at least one) are scored, loss-augmented, k-best
decoded and turned into constraints in C over ``n_threads`` threads with the
weights of the block start (``training_batch.decode_for_training``); then,
in input order, the learner steps on each stored constraint set against the
current weights and the labeler steps, as in serial training. This is
mini-batch training with delayed updates (Zhao & Huang 2013; Sun & Ma 2017):
a sentence is decoded with weights up to ``parallel_batch - 1`` updates old,
so the result differs from serial training (BENCHMARKS.md measures how
much). The block's constraints equal the serial ones under the same frozen
weights. Partially annotated sentences are decoded in the calling thread,
also with the block-start weights. With ``n_threads = 1`` a block is one
mini-batch: the serial online loop.

The component, the benchmarks and ``train_one_slack`` all train through
this class.
"""
import time
import warnings
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy

from ..learners import Learner, WeightTable, sparse_difference
from ..decoders.dispatch import DECODERS, Factors, add_hamming_loss, decode, serves
from .constraints import Constraints
from .model import GraphModel
from .training_batch import decode_for_training

# Sentences decoded in parallel with the same weights before their updates
# (n_threads > 1). On full EWT the delay costs no accuracy beyond the
# spread between training orders with blocks of 8 or 32, and 32 takes less
# CPU (benchmarks/results/training_explore_seed*.json).
DEFAULT_PARALLEL_BATCH = 32

_NO_UPDATE = (numpy.zeros(0, dtype="uint64"), numpy.zeros(0, dtype="float64"))


class GraphTrainer:
    """Training state of a ``GraphModel``: the learner and two ``WeightTable``s.

    ``arc_weights`` / ``label_weights``: warm start from these (e.g. the
    weights of a loaded model); default zeros. ``n_threads`` > 1: parallel
    training over blocks of ``parallel_batch`` sentences (module docstring).
    """

    def __init__(self, model: GraphModel, learner: Learner,
                 arc_weights: Optional[numpy.ndarray] = None,
                 label_weights: Optional[numpy.ndarray] = None,
                 n_threads: int = 1, parallel_batch: int = DEFAULT_PARALLEL_BATCH):
        if not isinstance(learner, Learner):
            raise TypeError(f"the learner must be a spacy_mstparse Learner, got {learner!r}")
        if n_threads < 1 or parallel_batch < 1:
            raise ValueError(f"n_threads and parallel_batch must be >= 1, "
                             f"got {n_threads}, {parallel_batch}")
        self.n_threads = int(n_threads)
        self.parallel_batch = int(parallel_batch)
        self.model = model
        self.learner = learner
        self.arc_table = (WeightTable(model.n_arc_weights) if arc_weights is None
                          else WeightTable.from_weights(arc_weights))
        self.label_table = (WeightTable(max(1, model.n_label_weights)) if label_weights is None
                            else WeightTable.from_weights(label_weights))
        self._pending: List[tuple] = []
        self.unusable = 0   # partially annotated sentences no tree can complete
        self.last_step: Optional[dict] = None   # the statistics of the last learner step

    # -- set-up ------------------------------------------------------------------
    def begin(self, gold: List[tuple]) -> None:
        """Give the learner the training set's ``(Sentence, gold heads)``
        (the sparseptron's feature groups, the 1-slack SSVM's pass length).
        Items ``(Sentence, gold heads, gold label ids)`` also fit the
        labeler's label restrictions (labeler version 2)."""
        if gold and len(gold[0]) == 3:
            self.model.fit_label_restrictions(gold)
            gold = [(sentence, heads) for sentence, heads, _ in gold]
        self.learner.begin_training(self.model.first_order, gold, self.model.order)

    # -- the loop ------------------------------------------------------------------
    def train(self, sentences: Iterable[Tuple[object, numpy.ndarray, Optional[numpy.ndarray]]]) -> float:
        """Train on ``(Sentence, gold heads, gold label ids or None)``; steps
        whenever ``learner.batch_size`` sentences are pending. Returns the
        number of wrong heads before the updates."""
        n_wrong = 0.0
        size = self.block_size
        for item in sentences:
            self._pending.append(item)
            if len(self._pending) == size:
                n_wrong += self.flush()
        return n_wrong

    @property
    def block_size(self) -> int:
        """Sentences collected before they are decoded: one learner
        mini-batch, or with ``n_threads`` > 1 ``parallel_batch`` sentences
        rounded down to whole mini-batches (at least one)."""
        size = self.learner.batch_size
        if self.n_threads > 1:
            size *= max(1, self.parallel_batch // size)
        return size

    def flush(self) -> float:
        """Step on the pending sentences (a short last mini-batch)."""
        if not self._pending:
            return 0.0
        batch, self._pending = self._pending, []
        if getattr(self.learner, "converged", False):
            # converged (the 1-slack SSVM): no more decoding, the labeler goes on
            self.train_labeler([item for item in batch
                                if item[2] is not None and (item[1][1:] >= 0).all()])
            return 0.0
        return self.train_block(batch)

    def batch_constraints(self, items: Sequence[tuple], k: int = 1, notes: bool = False):
        """``(constraints, target)`` of every ``(Sentence, heads)`` of
        ``items`` under the current weights, as ``constraints`` /
        ``_constraints`` give them one by one, computed over ``n_threads``
        threads. With ``notes``, a third item: the trees ``note_tree`` must
        see, in the serial loop's order (the learner is not called here)."""
        model = self.model
        # the C stage: every fully annotated sentence
        parallel = [i for i, (s, h) in enumerate(items) if s.n >= 1 and (h[1:] >= 0).all()]
        out: List[Optional[tuple]] = [None] * len(items)
        if parallel:
            results = decode_for_training(
                [items[i][0] for i in parallel], [items[i][1] for i in parallel], model,
                self.arc_table.values, self.arc_table.scale, k, self.learner.loss_augmented,
                self.n_threads)
            for i, (trees, n_wrong, diffs) in zip(parallel, results):
                sentence, heads = items[i]
                constraints, tree_notes, gold_ids = [], [], None
                for t, tree in enumerate(trees):
                    if not n_wrong[t]:
                        constraints.append((*_NO_UPDATE, 0))
                        continue
                    if not tree_notes:
                        tree_notes.append(heads)
                    tree_notes.append(tree)
                    if diffs is None:  # order 3: the features in this thread
                        if gold_ids is None:  # once for the sentence's k trees
                            gold_ids = numpy.sort(model.tree_features(sentence, heads),
                                                  axis=None).astype("uint64", copy=False)
                        diff = sparse_difference(gold_ids, model.tree_features(sentence, tree))
                    else:
                        diff = diffs[t]
                    constraints.append((*diff, n_wrong[t]))
                out[i] = (constraints, heads, tree_notes)
        for i, (sentence, heads) in enumerate(items):
            if out[i] is None:  # partial annotation: here
                noted = []
                constraints, target = self._constraints(sentence, heads, k, noted.append)
                out[i] = (constraints, target, noted)
        return out if notes else [(c, t) for c, t, _ in out]

    def train_block(self, block: Sequence[tuple]) -> float:
        """Decode every sentence of ``block`` with the current weights (in C,
        over ``n_threads`` threads), then one learner step per mini-batch of
        the block, in input order. With one thread a block is one mini-batch
        and this is the plain online loop."""
        decoded = self.batch_constraints([(s, h) for s, h, _ in block], self.learner.k_best,
                                         notes=True)
        size = self.learner.batch_size
        return sum(self._step(block[i:i + size], decoded[i:i + size])
                   for i in range(0, len(block), size))

    def _step(self, batch: Sequence[tuple], decoded: Sequence[tuple]) -> float:
        """The learner's step on a mini-batch's ``(constraints, target,
        trees to note)`` and the labeler's steps; the wrong heads."""
        learner = self.learner
        keyed = getattr(learner, "cache", None) is not None
        steps = []
        n_wrong_total = 0
        for (sentence, heads, labels), (constraints, target, notes) in zip(batch, decoded):
            for tree in notes:
                learner.note_tree(sentence, tree)
            n_wrong_total += constraints[0][2]
            # k-best learners get every tree's constraint, the others one; a
            # learner with a per-sentence cache (the 1-slack SSVM) the sentence.
            step = constraints if learner.k_best > 1 else constraints[0]
            steps.append((*step, sentence) if keyed else step)
            if labels is not None and target is not None:
                if target is not heads:  # partial: learn the annotated arcs' labels only
                    labels = numpy.where(heads >= 0, labels, -1).astype("int32")
                self._label_step(sentence, target, labels)
        self.last_step = learner.step(self.arc_table, steps)
        return float(n_wrong_total)

    def constraints(self, sentence, heads: numpy.ndarray, k: int = 1) -> List[tuple]:
        """``(idx, val, n_wrong)`` for each of the (up to) k best trees under
        the current weights, loss-augmented if the learner asks for it.
        ``heads`` may mark unknown heads with -1 (see the module docstring)."""
        return self._constraints(sentence, heads, k)[0]

    def _constraints(self, sentence, heads, k, note=None):
        """The constraints and the tree they train toward (``heads`` itself
        when every head is known, the completion otherwise, None when no
        tree holds the known arcs). ``note``: called with each tree instead
        of ``learner.note_tree`` (the parallel loop replays them later)."""
        factors = self.model.scores(sentence, self.arc_table.values, self.arc_table.scale)
        known = heads[1:] >= 0
        partial = not known.all()
        target = heads
        if partial:
            target = self._completion(factors, heads)
            if target is None:
                return [(*_NO_UPDATE, 0)], None
        if self.learner.loss_augmented:
            add_hamming_loss(factors.arc, heads)
        gold_ids = None
        out = []
        for predicted in self.model.decode(factors, k):
            wrong = predicted[1:] != heads[1:]
            n_wrong = int(numpy.count_nonzero(wrong & known if partial else wrong))
            if n_wrong:
                if gold_ids is None:
                    gold_ids = self._tree_features(sentence, target, note)
                idx, val = sparse_difference(gold_ids,
                                             self._tree_features(sentence, predicted, note))
            else:
                idx, val = _NO_UPDATE
            out.append((idx, val, n_wrong))
        return out, target

    def completion(self, sentence, heads: numpy.ndarray) -> Optional[numpy.ndarray]:
        """The best tree under the current weights that keeps every known
        arc of ``heads`` (-1: unknown head); None if no tree holds them."""
        factors = self.model.scores(sentence, self.arc_table.values, self.arc_table.scale)
        return self._completion(factors, heads)

    def _completion(self, factors, heads):
        n = len(heads) - 1
        arc = factors.arc
        constraints = Constraints(n, {c: int(heads[c]) for c in range(1, n + 1) if heads[c] >= 0})
        known = numpy.flatnonzero(heads[1:] >= 0) + 1
        if numpy.isneginf(arc[heads[known], known]).any():
            # order 3 prunes heads, in training too: a known arc pruned away
            # scores 0 (every completion holds it, so its score does not matter)
            arc = arc.copy()
            pruned = numpy.isneginf(arc[heads[known], known])
            arc[heads[known][pruned], known[pruned]] = 0.0
        # known arcs that cross: completed non-projectively, as a fully
        # annotated non-projective gold tree is used as it is
        for name in dict.fromkeys((self.model.decoder, "chu_liu_edmonds")):
            # a decoder without the model's order completes with the factors it has
            parts = factors if serves(name, factors.order) else Factors(factors.arc, factors.sib)
            best = lambda masked: decode(name, parts.with_arc(masked))[0]  # noqa: E731
            try:
                tree = constraints.decode(best, arc, DECODERS[name].projective)
            except ValueError:  # NoTreeError, crossing or impossible known arcs
                continue
            return numpy.asarray(tree, dtype="int32")
        if not self.unusable:
            warnings.warn("skipping partially annotated sentences whose known arcs no tree "
                          "holds (several roots)")
        self.unusable += 1
        return None

    def _tree_features(self, sentence, heads, note=None) -> numpy.ndarray:
        if note is None:
            self.learner.note_tree(sentence, heads)
        else:
            note(heads)
        return self.model.tree_features(sentence, heads)

    def train_labeler(self, sentences) -> None:
        """Labeler steps alone on ``(Sentence, gold heads, gold label ids)``
        (what ``train`` does besides the arc steps)."""
        for sentence, heads, labels in sentences:
            self._label_step(sentence, heads, labels)

    def _label_step(self, sentence, heads, labels) -> None:
        """Averaged (structured) perceptron step of the labeler on the gold tree."""
        model, table = self.model, self.label_table
        guess = model.labeler.predict(sentence, heads, table.values, model.root_label_id, table.scale)
        idx, val, _ = model.labeler.update_vector(sentence, heads, labels, guess)
        if idx.shape[0]:
            table.add(idx, val, 1.0)
        table.tick()

    # -- prediction weights ----------------------------------------------------------
    def prediction_weights(self) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """The weights to predict with: averaged (or current, if the learner
        says so) and finalized by the learner; O(table)."""
        table = self.arc_table
        arc = table.averaged() if self.learner.predicts_with_average() else table.current()
        arc = self.learner.finalize_weights(arc)
        return (numpy.ascontiguousarray(arc, dtype="float32"),
                numpy.ascontiguousarray(self.label_table.averaged(), dtype="float32"))

    def install_weights(self) -> GraphModel:
        """Copy the prediction weights into the model and return it."""
        self.model.set_weights(*self.prediction_weights())
        return self.model

    # -- iterative parameter mixing (spacy_mstparse.distributed.mixing) --------------
    def tables(self) -> Dict[str, WeightTable]:
        return {"arc": self.arc_table, "label": self.label_table}

    def restart_from(self, weights: Dict[str, numpy.ndarray]) -> None:
        """A shard's epoch start: every table continues from w = ``weights[name]``
        with its average restarted (``WeightTable.restart_average``)."""
        self.flush()
        for name, table in self.tables().items():
            table.restart_average(weights[name])

    def epoch_state(self) -> Dict[str, dict]:
        """A shard's epoch end: per table the current weights, the mean of the
        weights over the ticks since ``restart_from`` and their number."""
        self.flush()
        tables = self.tables()
        return {"weights": {k: t.current() for k, t in tables.items()},
                "averages": {k: t.averaged() for k, t in tables.items()},
                "n_ticks": {k: int(t.n_ticks) for k, t in tables.items()}}

    def set_mixed_state(self, state: Dict[str, dict]) -> None:
        """Hold the mixed weights ``state["weights"][name]`` as the current w
        and ``totals / n_ticks`` as the average (``MixedWeights.state()``;
        ``WeightTable.set_mixed``)."""
        self.flush()
        for name, table in self.tables().items():
            table.set_mixed(state["weights"][name], state["totals"][name],
                            int(state["n_ticks"][name]))


def loss_augmented_difference(model: GraphModel, sentence, heads, weights, scale: float = 1.0):
    """(idx, val, n_wrong) of the most violated tree under ``weights``."""
    factors = model.scores(sentence, weights, scale)
    add_hamming_loss(factors.arc, heads)
    predicted = model.decode(factors)[0]
    n_wrong = int(numpy.count_nonzero(predicted[1:] != heads[1:]))
    if n_wrong == 0:
        return (*_NO_UPDATE, 0)
    idx, val = sparse_difference(model.tree_features(sentence, heads),
                                 model.tree_features(sentence, predicted))
    return idx, val, n_wrong


def primal_objective(model: GraphModel, data, weights, lam: float) -> float:
    """lam/2 ||w||^2 + (1/n) sum_i max_y [Delta(y_i, y) - w . x_i(y)] for the
    weight vector ``weights`` over ``data`` = [(Sentence, heads)]."""
    w = numpy.ascontiguousarray(weights, dtype=numpy.float32)
    total = 0.0
    for sentence, heads in data:
        idx, val, n_wrong = loss_augmented_difference(model, sentence, heads, w)
        margin = float(w[idx.astype(numpy.intp)].astype(numpy.float64) @ val) if len(idx) else 0.0
        total += max(0.0, n_wrong - margin)
    w64 = w.astype(numpy.float64)
    return 0.5 * lam * float(w64 @ w64) + total / len(data)


def train_one_slack(model: GraphModel, data, lam: float = 1e-3, eps: float = 0.01,
                    max_iter: int = 1000, time_limit: float = 0.0, callback=None, **kwargs):
    """Train a 1-slack SSVM (arc weights only) on ``data`` = [(Sentence,
    heads)] through ``GraphTrainer``. Stops at gap <= eps, after ``max_iter``
    QP iterations or decoding passes or ``time_limit`` seconds (0 = none). ``callback(learner,
    table)`` runs after every pass. Returns (learner, arc table)."""
    from ..learners.one_slack import OneSlackSSVM

    learner = OneSlackSSVM(lam=lam, eps=eps, **kwargs)
    trainer = GraphTrainer(model, learner)
    trainer.begin(list(data))
    start = time.perf_counter()
    while True:
        trainer.train((sentence, heads, None) for sentence, heads in data)
        trainer.flush()
        if callback is not None:
            callback(learner, trainer.arc_table)
        if learner.converged or max(learner.iteration, learner.n_passes) >= max_iter:
            break
        if time_limit > 0.0 and time.perf_counter() - start > time_limit:
            break
    return learner, trainer.arc_table
