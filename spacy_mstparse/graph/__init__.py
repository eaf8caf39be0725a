"""The graph-based parser as an object outside spaCy: ``GraphModel`` scores,
decodes and labels encoded sentences (McDonald et al. 2005, 2006; McDonald &
Pereira 2006); ``GraphTrainer`` is its one training loop. The ``mst_parser``
pipe is glue around them."""
from ..decoders.dispatch import DECODERS, Decoder, Factors, decode
from .model import GraphModel
from .training import GraphTrainer, loss_augmented_difference, primal_objective, train_one_slack

__all__ = [
    "DECODERS",
    "Decoder",
    "decode",
    "Factors",
    "GraphModel",
    "GraphTrainer",
    "loss_augmented_difference",
    "primal_objective",
    "train_one_slack",
]
