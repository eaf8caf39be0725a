"""Training copies of the graph parser's weights on differently ordered
streams of the same sentences, and predicting with their mean.

An online learner's averaged weights depend on the order it sees the
sentences in. Training R copies (replicas) of the weight tables, each on its
own order of the training stream, and predicting with the mean of their
averaged weights removes part of that order-dependent noise. It is the
one-shot form of parameter mixing (Mann et al. 2009; McDonald, Hall & Mann
2010) with every replica seeing all the data, as in bagging over orders
rather than over samples. The parse costs nothing more (one weight vector);
training costs R times the passes.

Replica 0 trains on the stream as given (spaCy's shuffled batches), so one
replica is exactly ``GraphTrainer``. Replica r > 0 reorders the stream
through a shuffle buffer of ``buffer`` sentences with its own random
generator (seed r): each arriving sentence enters the buffer, and once the
buffer is full a random one leaves it to be trained on. Its order thus
differs from replica 0's over windows of about ``buffer`` sentences, across
batch and epoch boundaries; the up to ``buffer`` sentences still waiting are
trained on when more arrive (the next update) and are otherwise left out of
that replica's last pass. The buffer holds at most a sixth of the training
sentences (``begin``): a buffer as large as a small treebank's passes would
keep replica r > 0 from training at all, and the mean would be replica 0's
weights halved.

Each replica is one ``GraphTrainer`` (the one training loop) over the same
``GraphModel`` (scoring reads each trainer's own tables). Only learners whose
training state is their weight vector can be copied this way (the
perceptron, MIRA, PA: the ones parameter mixing takes too);
they share the one learner object (``learners.is_weight_only``).
"""
from typing import Iterable, List, Optional, Sequence, Tuple

import numpy

from ..learners import WEIGHT_ONLY_LEARNERS, is_weight_only
from .model import GraphModel
from .training import DEFAULT_PARALLEL_BATCH, GraphTrainer

# Sentences a replica r > 0 holds back to reorder its stream: at most
# DEFAULT_BUFFER (a sixth of EWT train; BENCHMARKS.md, "Learners and
# decoders") and at most 1 / BUFFER_SHARE of the training sentences.
DEFAULT_BUFFER = 2048
BUFFER_SHARE = 6


def check_replicas(learner, replicas: int) -> None:
    """Raise ValueError unless ``replicas`` copies of ``learner``'s training
    can run side by side (replicas >= 1; above 1 a weight-only learner)."""
    if replicas < 1:
        raise ValueError(f"replicas must be >= 1, got {replicas}")
    if replicas > 1 and not is_weight_only(learner):
        names = ", ".join(cls.__name__ for cls in WEIGHT_ONLY_LEARNERS)
        raise ValueError(f"replicas > 1 needs a learner whose training state is its weights "
                         f"({names}); {type(learner).__name__} keeps more")


def make_trainer(model: GraphModel, learner, replicas: int = 1,
                 arc_weights: Optional[numpy.ndarray] = None,
                 label_weights: Optional[numpy.ndarray] = None):
    """The training loop of ``model``: a ``GraphTrainer``, or with
    ``replicas`` > 1 a ``ReplicaTrainer`` over that many."""
    if replicas > 1:
        return ReplicaTrainer(model, learner, replicas, arc_weights, label_weights)
    return GraphTrainer(model, learner, arc_weights, label_weights)


def _shared_setting(name: str) -> property:
    """A ``GraphTrainer`` setting, read from replica 0 and set on every replica."""
    def get(self):
        return getattr(self.trainers[0], name)

    def set_all(self, value) -> None:
        for trainer in self.trainers:
            setattr(trainer, name, int(value))
    return property(get, set_all)


class ReplicaTrainer:
    """``replicas`` ``GraphTrainer``s on reordered copies of one sentence
    stream; predicts with the mean of their prediction weights. Has the
    parts of ``GraphTrainer``'s interface the ``mst_parser`` pipe uses."""

    def __init__(self, model: GraphModel, learner, replicas: int,
                 arc_weights: Optional[numpy.ndarray] = None,
                 label_weights: Optional[numpy.ndarray] = None,
                 n_threads: int = 1, parallel_batch: int = DEFAULT_PARALLEL_BATCH,
                 buffer: int = DEFAULT_BUFFER):
        if replicas < 2:
            raise ValueError(f"replicas must be >= 2 for a ReplicaTrainer, got {replicas}")
        if buffer < 1:
            raise ValueError(f"buffer must be >= 1, got {buffer}")
        check_replicas(learner, replicas)
        self.model = model
        self.learner = learner
        self.buffer = int(buffer)
        self.trainers = [GraphTrainer(model, learner, arc_weights, label_weights,
                                      n_threads, parallel_batch) for _ in range(replicas)]
        self._pools: List[list] = [[] for _ in range(replicas)]
        self._rngs = [numpy.random.default_rng(r) for r in range(replicas)]

    n_threads = _shared_setting("n_threads")
    parallel_batch = _shared_setting("parallel_batch")

    @property
    def unusable(self) -> int:
        return self.trainers[0].unusable

    @property
    def last_step(self) -> Optional[dict]:
        return self.trainers[0].last_step

    def begin(self, gold: list) -> None:
        """``GraphTrainer.begin`` (the label restrictions are fitted once);
        the shuffle buffer shrinks to a sixth of the ``gold`` sentences when
        it is larger."""
        self.trainers[0].begin(gold)
        self.buffer = max(1, min(self.buffer, len(gold) // BUFFER_SHARE))
        rest = [item[:2] for item in gold]
        for trainer in self.trainers[1:]:
            trainer.begin(rest)

    def train(self, sentences: Iterable[tuple]) -> float:
        """Every replica trains on the sentences, replica r > 0 through its
        shuffle buffer; returns replica 0's wrong heads before its updates."""
        items = list(sentences)
        n_wrong = self.trainers[0].train(items)
        for trainer, pool, rng in zip(self.trainers[1:], self._pools[1:], self._rngs[1:]):
            trainer.train(self._reordered(items, pool, rng))
        return n_wrong

    def _reordered(self, items: Sequence[tuple], pool: list, rng) -> Iterable[tuple]:
        for item in items:
            pool.append(item)
            if len(pool) > self.buffer:
                j = int(rng.integers(len(pool)))
                pool[j], pool[-1] = pool[-1], pool[j]
                yield pool.pop()

    def flush(self) -> float:
        """Each replica's pending mini-batch (the shuffle buffers stay)."""
        n_wrong = self.trainers[0].flush()
        for trainer in self.trainers[1:]:
            trainer.flush()
        return n_wrong

    def prediction_weights(self) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """The mean of the replicas' prediction weights (float32)."""
        arc = label = None
        for trainer in self.trainers:
            a, b = trainer.prediction_weights()
            arc = a.astype("float64") if arc is None else arc + a
            label = b.astype("float64") if label is None else label + b
        n = len(self.trainers)
        return (numpy.ascontiguousarray(arc / n, dtype="float32"),
                numpy.ascontiguousarray(label / n, dtype="float32"))

    def install_weights(self) -> GraphModel:
        """Copy the mean prediction weights into the model and return it."""
        self.model.set_weights(*self.prediction_weights())
        return self.model
