"""Training and parsing on a Ray cluster (the optional extra
``spacy-mstparse[ray]``): iterative parameter mixing of the graph parser's
weight tables (``mixing``, McDonald, Hall & Mann 2010), the ``ray-train``
driver and its shard actors (``train``), ``ray-parse`` and the Ray Data
callable ``ParseBatch`` (``parse``). Ray is imported only when one of them
runs (``cluster.require_ray``)."""
from .cluster import RAY_MISSING, DistributedError
from .mixing import MIXABLE_LEARNERS, MixedWeights, UnmixableLearnerError, check_mixable

__all__ = ["RAY_MISSING", "DistributedError", "MIXABLE_LEARNERS", "MixedWeights",
           "UnmixableLearnerError", "check_mixable"]
