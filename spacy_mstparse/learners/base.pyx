"""The learner contract: what the graph parser's training loop may ask of a
learner, in one place.

Every learner of ``mst_parser`` is a ``Learner``. The training loop
(``spacy_mstparse.graph.training``) reads these attributes and calls these
hooks, and nothing else; a learner never sees the spaCy pipe, only the
feature extractor, the weight table and the encoded gold trees.

Attributes (set in ``__init__``, defaults below):

``batch_size`` (1)
    Sentences decoded with the same weights before one ``step`` (Pegasos'
    mini-batch k; 1 for the online learners).
``loss_augmented`` (False)
    Decode with the Hamming loss added to every non-gold arc score
    (Pegasos, the 1-slack SSVM).
``k_best`` (1)
    Trees per sentence the loop decodes: with k > 1 a step item is a list
    of one constraint per tree (k-best MIRA); decoders without a k-best
    variant give one tree.
``sparse_weights`` (False)
    The saved arc weights are mostly zero (the sparseptron): storage hint.

The stages, in order:

1. Set-up, once: ``begin_training(features, gold, order)`` with the
   first-order feature extractor, the list of ``(Sentence, gold heads)`` of
   the training set and the model's order (1, 2 or 3). A partially
   annotated sentence has -1 as the head of each word whose head is unknown
   (its tree is not known before training). No-op here.
2. Training, for every mini-batch of ``batch_size`` sentences decoded with
   the same weights: ``note_tree(sentence, heads)`` for every tree whose
   features enter the update (gold or, for a partially annotated sentence,
   its completion, and predicted; always a full tree; no-op here), then
   ``step(table, batch)`` (required). ``step`` updates the ``WeightTable``
   for a batch of items, each ``(idx, val, n_wrong)`` (x = phi(gold) -
   phi(predicted) as a sorted sparse vector and the predicted tree's wrong
   heads) or, with ``k_best > 1``, a list of such triples; ticks the
   averaging clock once per averaging step; and returns a dict of
   statistics (``n_sentences`` and ``n_wrong`` always, the rest the
   learner's own), which the trainer keeps as ``GraphTrainer.last_step``.
3. Prediction, between any two steps (spaCy evaluates between epochs):
   ``predicts_with_average()`` says which weights of the table to predict
   with now, the average (``WeightTable.averaged``, the default) or the
   current ones (``WeightTable.current``), and ``finalize_weights(weights)``
   turns those float32 weights into the ones to predict with (here:
   unchanged). A learner that trains in stages answers for the stage it is
   in (the sparseptron: current weights in its sparse stage, the average
   once debiasing); neither call changes the learner.
"""
from .weight_table cimport WeightTable


cdef class Learner:
    """Base class of every ``mst_parser`` learner (see the module docstring)."""

    def __cinit__(self, *args, **kwargs):
        self.batch_size = 1
        self.loss_augmented = False
        self.k_best = 1
        self.sparse_weights = False

    def begin_training(self, features, list gold, int order=1):
        """Called once at initialization (no-op)."""
        pass

    def note_tree(self, sentence, heads):
        """Called for every tree whose features enter an update (no-op)."""
        pass

    def predicts_with_average(self):
        """Whether to predict with the table's averaged weights (here: always)."""
        return True

    def finalize_weights(self, weights):
        """The weights to predict with (here: unchanged)."""
        return weights

    def step(self, WeightTable table, list batch):
        """Update ``table`` for ``batch`` and return statistics (required)."""
        raise NotImplementedError(f"{type(self).__name__} does not define step()")
