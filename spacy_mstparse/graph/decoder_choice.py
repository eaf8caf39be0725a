"""What ``decoder = "auto"`` picks: Eisner (projective) or Chu-Liu-Edmonds
(non-projective), decided on the training trees.

Non-projective decoding can only gain on the arcs that need it, and it
costs accuracy wherever the model adds a crossing arc that is wrong (Nguyen
et al. 2007 found projective decoding better on mostly projective
languages, McDonald et al. 2005b non-projective better on Czech). So the
rule is measured, not assumed:

1. the share of non-projective gold arcs (an arc h -> c with a word between
   that h does not dominate; Nivre & Nilsson 2005). At or below
   ``min_arc_share`` Eisner is taken without further work: the most
   non-projective decoding could gain there is about that share of the
   words;
2. otherwise a held-out trial (cross-fitting): the trees are split into
   ``folds`` parts; for each part a model trained for ``epochs`` passes on
   the other parts with each decoder (the same learner settings, the same
   orders) parses it. The decoder with more correct heads over all parts
   wins; a tie goes to Eisner.

Everything here is spaCy-free and trains through ``GraphTrainer``.
"""
import copy
import time
from typing import Dict, List, Sequence, Tuple

import numpy

from ..decoders.trees import nonprojective_arcs
from .model import GraphModel
from .training import GraphTrainer

PROJECTIVE, NONPROJECTIVE = "eisner", "chu_liu_edmonds"


def nonprojective_arc_share(trees: Sequence[numpy.ndarray]) -> float:
    """Share of the arcs of ``trees`` (head arrays) that are non-projective."""
    n_arcs = sum(len(heads) - 1 for heads in trees)
    n_nonproj = sum(len(nonprojective_arcs(heads)) for heads in trees)
    return n_nonproj / n_arcs if n_arcs else 0.0


def held_out_trial(features, order: int, learner, gold: Sequence[Tuple[object, numpy.ndarray]],
                   *, folds: int = 2, epochs: int = 1, seed: int = 0,
                   decoders: Sequence[str] = (PROJECTIVE, NONPROJECTIVE)) -> Dict[str, int]:
    """Correct heads of each decoder on held-out parts of ``gold`` =
    [(Sentence, heads)], each part parsed by models trained on the others
    (a fresh copy of ``learner`` per model). Also ``words``: the words
    parsed per decoder."""
    if folds < 2:
        raise ValueError(f"a held-out trial needs folds >= 2, got {folds}")
    rng = numpy.random.RandomState(seed)
    parts = numpy.array_split(rng.permutation(len(gold)), folds)
    correct = {name: 0 for name in decoders}
    words = 0
    for f, held in enumerate(parts):
        train = [gold[i] for g, part in enumerate(parts) if g != f for i in part]
        orders = [rng.permutation(len(train)) for _ in range(epochs)]
        for name in decoders:
            model = GraphModel(features, order=order, decoder=name)
            trainer = GraphTrainer(model, copy.deepcopy(learner))
            trainer.begin(train)
            for perm in orders:
                trainer.train((train[i][0], train[i][1], None) for i in perm)
                trainer.flush()
            arc_weights = trainer.prediction_weights()[0]  # (no labeler here)
            for i in held:
                sentence, heads = gold[i]
                predicted = model.decode(*model.scores(sentence, arc_weights))[0]
                correct[name] += int(numpy.count_nonzero(predicted[1:] == heads[1:]))
        words += sum(len(gold[i][1]) - 1 for i in held)
    return {**correct, "words": words}


def choose_decoder(features, order: int, learner, gold: List[Tuple[object, numpy.ndarray]], *,
                   min_arc_share: float, folds: int = 2, epochs: int = 1,
                   seed: int = 0) -> Tuple[str, Dict[str, object]]:
    """(decoder name, what the choice rests on: the arc share, the trial's
    held-out UAS of each decoder, its seconds) for the training set ``gold``."""
    start = time.perf_counter()
    share = nonprojective_arc_share([heads for _, heads in gold])
    info: Dict[str, object] = {"nonprojective_arc_share": share}
    if share <= min_arc_share or len(gold) < folds:
        info["rule"] = f"non-projective arc share {share:.4f} <= {min_arc_share}"
        return PROJECTIVE, info
    trial = held_out_trial(features, order, learner, gold, folds=folds, epochs=epochs, seed=seed)
    words = max(1, trial["words"])
    info.update({f"trial_uas_{name}": 100.0 * trial[name] / words
                 for name in (PROJECTIVE, NONPROJECTIVE)},
                trial_words=trial["words"], trial_seconds=time.perf_counter() - start,
                rule=f"held-out trial ({folds} folds, {epochs} epoch(s))")
    winner = NONPROJECTIVE if trial[NONPROJECTIVE] > trial[PROJECTIVE] else PROJECTIVE
    return winner, info
