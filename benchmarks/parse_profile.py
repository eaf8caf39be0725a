"""Where the parse time of a trained ``mst_parser`` goes, stage by stage.

Helper of ``benchmarks/bench_shipped_speed.py``. Each stage runs alone over
all sentences of the given docs (best of ``repeats``), through the model's
own extractors and decoders (``GraphModel``: ``first_order.score``,
``sibling.score``, ``decode``, ``label``), so their sum is close to, not
exactly, the C batch parse (``parse_batch``); the rest of ``pipe`` (finding
sentences, encoding them into ``Sentence`` arrays, writing heads and labels
back) is ``pipe`` minus ``parse_batch``:

* ``arc_scoring``: the first-order arc score matrix (McDonald et al. 2005),
  with the arc filter and arc pruning ``keep_heads`` as the model predicts
  (the first pass and the full scores of the arcs it keeps);
* ``arc_pruning``: keeping the ``keep_heads`` best heads by the full arc
  scores (order 2);
* ``sibling_factors`` / ``stop_factors`` (order 2): sibling scores alone
  (McDonald & Pereira 2006), then what the stop factors (Koo & Collins 2010)
  add to them;
* ``decoding``: the decoder on the finished scores;
* ``labeler``: the label chains (McDonald et al. 2006);
* ``parse_batch``: the C batch parse (all of the above in one call);
* ``python_glue``: ``pipe`` minus ``parse_batch``; ``encode`` its share
  that encodes the sentences (``encode_docs``, batches of 128 docs).
"""
import time
from typing import Dict, Sequence

from benchmarks import common


def best_of(fn, repeats: int):
    """(fewest CPU seconds of this process, result) of ``repeats`` calls
    (CPU time: on a shared machine wall time also counts the waits)."""
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.process_time()
        out = fn()
        best = min(best, time.process_time() - start)
    return best, out


def timed_pipe_cpu(parser, docs) -> float:
    """CPU seconds of ``parser.pipe`` over copies of ``docs`` (copying untimed)."""
    copies = common.copy_docs(docs)
    start = time.process_time()
    for _ in parser.pipe(copies, batch_size=128):
        pass
    return time.process_time() - start


def profile(parser, docs: Sequence, repeats: int = 3) -> Dict[str, float]:
    """Seconds of each stage of ``parser``'s prediction of ``docs`` under
    its current settings (single thread)."""
    from spacy_mstparse.decoders.dispatch import Factors
    from spacy_mstparse.decoders.pruning import prune
    from spacy_mstparse.features.second_order import SiblingFeatures
    from spacy_mstparse.graph.batch import FIRST_PASS_WIDTH

    parser.cfg["n_threads"] = 1
    parser.prediction_weights()
    graph = parser.graph
    w = graph.prediction_arc_weights
    keep = graph.pruning(True)
    bounds = [parser.sentence_bounds(d) for d in docs]
    stages: Dict[str, float] = {}
    stages["encode"], encoded = best_of(   # as pipe encodes: batches of 128 docs
        lambda: [parser.encoder.encode_docs(list(zip(docs[i:i + 128], bounds[i:i + 128])))
                 for i in range(0, len(docs), 128)], repeats)
    sents = [s for batch in encoded for doc in batch for s in doc]
    first = graph.prediction_first_order   # with the arc filter when it is on
    if graph.sibling is None:
        stages["arc_scoring"], arcs = best_of(
            lambda: [first.score(s, w, 1.0, keep) for s in sents], repeats)
        factors = [Factors(a) for a in arcs]
    else:
        wide = FIRST_PASS_WIDTH * keep    # the cascade of GraphModel.scores
        stages["arc_scoring"], arcs = best_of(lambda: [first.score(s, w, 1.0, wide)
                                                       for s in sents], repeats)
        if keep:
            stages["arc_pruning"], _ = best_of(lambda: [prune(a.copy(), keep) for a in arcs],
                                               repeats)
            arcs = [prune(a, keep) for a in arcs]
        sib = graph.sibling
        given = arcs   # the factors of -inf (pruned, filtered) arcs are skipped
        if sib.stops:
            bare = SiblingFeatures(sib.n_buckets, sib.n_tagsets, False)
            stages["sibling_factors"], _ = best_of(
                lambda: [bare.score(s, w, 1.0, a) for s, a in zip(sents, given)], repeats)
        seconds, sibs = best_of(lambda: [sib.score(s, w, 1.0, a) for s, a in zip(sents, given)],
                                repeats)
        if sib.stops:
            stages["stop_factors"] = seconds - stages["sibling_factors"]
        else:
            stages["sibling_factors"] = seconds
        factors = [Factors(a, g) for a, g in zip(arcs, sibs)]
    stages["decoding"], trees = best_of(lambda: [graph.decode(f)[0] for f in factors], repeats)
    stages["labeler"], _ = best_of(
        lambda: [graph.label(s, h) for s, h in zip(sents, trees)], repeats)
    stages["parse_batch"], _ = best_of(lambda: graph.parse_batch(sents, 1), repeats)
    pipe = min(timed_pipe_cpu(parser, docs) for _ in range(repeats))
    stages["pipe_total"] = pipe
    stages["python_glue"] = pipe - stages["parse_batch"]
    return stages


def shares(stages: Dict[str, float]) -> Dict[str, float]:
    """Each stage's share of ``pipe_total`` (the stages of the C parse
    measured one by one, so the shares sum to about 1)."""
    total = stages["pipe_total"]
    parts = [k for k in stages if k not in ("pipe_total", "parse_batch", "encode")]
    return {k: stages[k] / total for k in parts}
