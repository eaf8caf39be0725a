"""Training the tagger: epochs of perceptron passes over shuffled sentences,
jackknifed predictions for the training sentences, and the final tagger
blended with the fold taggers.

A parser trained on gold tags, or on tags the tagger predicts for its own
training sentences (which it has nearly learned by heart), trusts tags more
than it should: at parse time the tags are wrong on some words. Jackknifing
(Collins & Koo 2005; Koo et al. 2008) tags each of ``folds`` parts of the
training sentences with a tagger trained on the other parts, so the parser
learns from tags as good as those it will be given.

The fold taggers, trained anyway, are an ensemble of taggers each trained on
most of the sentences in another order; the mean of their weights, mixed
with those of the tagger trained on every sentence (``blend``), tags better
than that tagger alone (the weights of a linear model can be averaged as its
scores would be), at no further training cost.
"""
import random
from dataclasses import dataclass
from typing import Callable, List, NamedTuple, Optional, Sequence, Tuple

import numpy

from .guesser import MIN_SUPPORT, build_guesser
from .inventory import TagInventory
from .perceptron import TaggerModel
from .word_attributes import Lexicon, build_lexicon, with_lexicon


@dataclass
class TaggedSentence:
    """A training sentence: its word attributes (ambiguity classes not
    filled in) and gold class ids."""
    attrs: numpy.ndarray          # (n, N_ATTRS) uint64
    upos: numpy.ndarray           # int32, -1 where unknown
    xpos: numpy.ndarray
    feats: numpy.ndarray


def new_model(inventory: TagInventory, n_buckets: int) -> TaggerModel:
    return TaggerModel(len(inventory.upos), len(inventory.xpos), len(inventory.feats),
                       inventory.arrays(), n_buckets)


def train_model(inventory: TagInventory, sentences: Sequence[TaggedSentence], epochs: int,
                n_buckets: int, seed: int = 0,
                on_epoch: Optional[Callable[[int, float], None]] = None
                ) -> Tuple[TaggerModel, Lexicon]:
    """A TaggerModel trained for ``epochs`` passes over the sentences in a
    shuffled order (the same order for the same seed), its training finished
    (averaged weights) and its FEATS guesser read from the sentences
    (``guesser``), and the lexicon of ambiguity classes of the
    sentences' words it reads. ``on_epoch(epoch, error_rate)`` follows
    progress."""
    lexicon = build_lexicon((s.attrs, s.upos) for s in sentences)
    sentences = [TaggedSentence(with_lexicon(s.attrs, lexicon), s.upos, s.xpos, s.feats)
                 for s in sentences]
    model = new_model(inventory, n_buckets)
    if inventory.feats:
        model.set_guesser(build_guesser((s.attrs, s.upos, s.feats) for s in sentences),
                          MIN_SUPPORT)
    order = list(range(len(sentences)))
    rng = random.Random(seed)
    for epoch in range(epochs):
        rng.shuffle(order)
        errors = decisions = 0
        for k in order:
            s = sentences[k]
            errors += model.train_sentence(s.attrs, s.upos, s.xpos, s.feats)
            decisions += int((s.upos >= 0).sum() + (s.xpos >= 0).sum() + (s.feats >= 0).sum())
        if on_epoch is not None:
            on_epoch(epoch, errors / max(decisions, 1))
    model.finish()
    return model, lexicon


def fold_of(index: int, folds: int) -> int:
    """The fold a training sentence is predicted in (round robin)."""
    return index % folds


class Jackknife(NamedTuple):
    """What jackknifing gives: each training sentence's (upos, xpos, feats)
    from the tagger of the other folds, and the mean of the fold taggers'
    averaged weights and guess weights (None without folds)."""
    tags: List[tuple]
    weights: Optional[numpy.ndarray] = None
    guess_weights: Optional[numpy.ndarray] = None


def jackknife(inventory: TagInventory, sentences: Sequence[TaggedSentence], folds: int,
              epochs: int, n_buckets: int, seed: int = 0,
              on_fold: Optional[Callable[[int], None]] = None) -> Jackknife:
    """For each sentence, the (upos, xpos, feats) a model trained on the
    other folds predicts, and the fold models' mean weights (``folds`` < 2:
    no tags, an empty list)."""
    if folds < 2 or len(sentences) < folds:
        return Jackknife([])
    out: List[tuple] = [None] * len(sentences)
    weights = guess_weights = None
    for fold in range(folds):
        rest = [s for k, s in enumerate(sentences) if fold_of(k, folds) != fold]
        model, lexicon = train_model(inventory, rest, epochs, n_buckets, seed + 1 + fold)
        for k, s in enumerate(sentences):
            if fold_of(k, folds) == fold:
                out[k] = model.tag(with_lexicon(s.attrs, lexicon))
        if weights is None:
            weights, guess_weights = model.weights / folds, model.guess_weights / folds
        else:
            weights += model.weights / folds
            guess_weights += model.guess_weights / folds
        if on_fold is not None:
            on_fold(fold)
    return Jackknife(out, weights, guess_weights)


def blend(model: TaggerModel, inventory: TagInventory, jackknifed: Jackknife,
          share: float) -> TaggerModel:
    """A finished tagger whose weights (and guess weights) are ``share`` of
    the fold taggers' mean and the rest ``model``'s (the finished tagger
    trained on every sentence, whose guesser table it keeps). ``model``
    itself when there are no fold taggers or ``share`` is 0."""
    if jackknifed.weights is None or share <= 0.0:
        return model
    weights = (1.0 - share) * model.weights + share * jackknifed.weights
    guess_weights = (1.0 - share) * model.guess_weights + share * jackknifed.guess_weights
    out = TaggerModel(len(inventory.upos), len(inventory.xpos), len(inventory.feats),
                      inventory.arrays(), model.n_buckets, weights)
    out.set_guesser(model.guesser_arrays(), model.min_support, guess_weights)
    return out
