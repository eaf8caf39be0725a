"""Calibrate an ``mst_parser`` pipeline's arc probabilities, and explain parses.

``calibrate`` fits the temperature T of p(tree) proportional to
exp(score / T) (``graph.temperature``; for a second-order model with a
projective decoder the score includes the sibling scores) on a dev treebank: the value
maximising the log-likelihood of the gold heads under the arc marginals
(temperature scaling, Guo et al. 2017). It reports the expected calibration
error (15 bins) of ``token._.head_prob`` against head correctness, and
accuracy and coverage at head_prob >= 0.9 and >= 0.99, before and after, and
writes T into the component's ``cfg`` in the model directory (atomically:
the directory stays loadable whatever happens). The parser's trees do not
depend on T, only their probabilities.

``explain_sentence`` parses one sentence of a CoNLL file and explains one
word's head and label (``graph.explain``).
"""
import json
from pathlib import Path
from typing import Any, Dict, List, NamedTuple, Optional, Tuple, Union

import numpy

from .components.mst_parser import MSTParser
from .corpus.atomic import atomic_write_text
from .corpus.conll import read_conll
from .decoders.dispatch import DECODERS
from .graph.calibration_metrics import calibration_report
from .graph.marginals import Temperature, arc_marginals
from .graph.temperature import fit_temperature
from .pipeline_input import EvaluationError, load_pipeline, make_input_docs

PathLike = Union[str, Path]
THRESHOLDS = (0.9, 0.99)


def _mst_parser(nlp, model: PathLike, component: Optional[str]) -> Tuple[str, MSTParser]:
    names = [name for name, proc in nlp.pipeline if isinstance(proc, MSTParser)]
    if component is not None:
        if component not in names:
            raise EvaluationError(f"{model} has no mst_parser component named {component!r} "
                                  f"(mst_parser components: {', '.join(names) or 'none'})")
        names = [component]
    if not names:
        raise EvaluationError(f"{model} has no mst_parser component (pipeline: "
                              f"{', '.join(nlp.pipe_names) or 'empty'})")
    return names[0], nlp.get_pipe(names[0])


def _annotated_inputs(nlp, name: str, gold: list, gold_tags: bool) -> list:
    """Input docs on the gold words and sentences, annotated by the components
    before ``name``."""
    docs = make_input_docs(gold, nlp.vocab, gold_tags=gold_tags)
    for other, proc in nlp.pipeline:
        if other == name:
            break
        docs = list(proc.pipe(docs)) if hasattr(proc, "pipe") else [proc(d) for d in docs]
    return docs


class Scored(NamedTuple):
    """One dev sentence (chunk) as the calibration sees it."""
    arc: numpy.ndarray            # arc scores
    gold: numpy.ndarray           # gold heads (int32, entry 0 = -1)
    predicted: numpy.ndarray      # the parser's heads
    sib: Optional[numpy.ndarray]  # sibling scores (order 2 and 3) or None
    tags: List[str]               # the words' coarse tags (token.pos_)


def scored_sentences(pipe: MSTParser, gold_docs, docs) -> List[Scored]:
    """Every parsed sentence (chunk) whose gold heads stay inside it."""
    pipe.prediction_weights()
    out = []
    for gold, doc in zip(gold_docs, docs):
        chunks = pipe.chunk_spans(pipe.sentence_spans(doc))
        sentences = pipe.encoder.encode(doc, [(s, e) for s, e, _ in chunks])
        for (start, end, _), sentence in zip(chunks, sentences):
            heads = numpy.full(end - start + 1, -1, dtype="int32")
            for c, token in enumerate(gold[start:end], 1):
                h = token.head.i
                heads[c] = 0 if h == token.i else h - start + 1
            if (heads[1:] < 0).any() or (heads[1:] > end - start).any():
                continue
            factors = pipe.graph.scores(sentence)
            predicted = pipe.graph.decode(factors)[0]
            out.append(Scored(factors.arc, heads, predicted, factors.sib,
                              [t.pos_ for t in doc[start:end]]))
    return out


def head_probabilities(items: List[Scored], temperature: Union[float, List[Temperature]],
                       projective: bool):
    """(head_prob of each predicted head, whether it is the gold head) at
    one temperature, or at one per item (a number or one per word)."""
    probs, correct = [], []
    temperatures = temperature if isinstance(temperature, list) else [temperature] * len(items)
    for (arc, gold, predicted, sib, _), t in zip(items, temperatures):
        marg = arc_marginals(arc, t, projective, sib).probs
        n = len(gold) - 1
        probs.append(marg[predicted[1:], numpy.arange(1, n + 1)])
        correct.append(predicted[1:] == gold[1:])
    if not probs:
        return numpy.zeros(0), numpy.zeros(0, dtype=bool)
    return numpy.concatenate(probs), numpy.concatenate(correct)


def write_temperature(model_dir: Path, name: str, temperature: float) -> Path:
    """Set ``temperature`` in the component's saved cfg (atomic replace)."""
    cfg_path = Path(model_dir) / name / "cfg"
    try:
        cfg = json.loads(cfg_path.read_text(encoding="utf8"))
    except (OSError, ValueError) as err:
        raise EvaluationError(f"cannot read the component settings {cfg_path}: {err}") from None
    cfg["temperature"] = float(temperature)
    atomic_write_text(cfg_path, json.dumps(cfg, indent=2, sort_keys=True) + "\n")
    return cfg_path


def calibrate(model: PathLike, dev_path: PathLike, *, gold_tags: bool = False,
              fmt: str = "conllu", component: Optional[str] = None,
              write: bool = True) -> Dict[str, Any]:
    """Fit the temperature on ``dev_path`` and (``write``) save it in ``model``."""
    model_dir = Path(model)
    if write and not (model_dir.is_dir() and (model_dir / "config.cfg").exists()):
        raise EvaluationError(f"{model} is not a pipeline directory (no config.cfg): "
                              "calibrate writes the temperature into the model directory")
    nlp = load_pipeline(model)
    name, pipe = _mst_parser(nlp, model, component)
    gold = list(read_conll(dev_path, nlp.vocab, format=fmt, n_sents=1))
    docs = _annotated_inputs(nlp, name, gold, gold_tags)
    items = scored_sentences(pipe, gold, docs)
    if not items:
        raise EvaluationError(f"{dev_path}: no sentences with complete gold trees")
    projective = DECODERS[pipe.graph.decoder].projective
    before_t = float(pipe.cfg["temperature"])
    fitted, loglik = fit_temperature([(it.arc, it.gold, it.sib) for it in items], projective)
    reports = {}
    for key, t in (("before", before_t), ("after", fitted)):
        probs, correct = head_probabilities(items, t, projective)
        reports[key] = calibration_report(probs, correct, THRESHOLDS)
    result = {"model": str(model), "dev": str(dev_path), "component": name,
              "sentences": len(items), "temperature_before": before_t,
              "temperature": fitted, "mean_gold_head_loglik": loglik, **reports}
    if write:
        result["written_to"] = str(write_temperature(model_dir, name, fitted))
    return result


def format_calibration(result: Dict[str, Any]) -> str:
    lines = [f"{result['component']}: {result['sentences']} dev sentences, "
             f"{result['before']['words']} words"]
    for key in ("before", "after"):
        r, t = result[key], result["temperature_before" if key == "before" else "temperature"]
        cover = "; ".join(
            f">= {th}: coverage {100 * r[f'coverage@{th}']:.1f}% accuracy "
            f"{100 * r[f'accuracy@{th}']:.2f}%" for th in THRESHOLDS)
        lines.append(f"{key:>6} (T = {t:.4g}): ECE {100 * r['ece']:.2f}%, head accuracy "
                     f"{100 * r['accuracy']:.2f}%, mean head_prob {100 * r['mean_prob']:.2f}%; "
                     f"{cover}")
    return "\n".join(lines)


def explain_sentence(model: PathLike, path: PathLike, sent: int, word: int, *,
                     gold_tags: bool = False, fmt: str = "conllu",
                     component: Optional[str] = None) -> Any:
    """Explain word ``word`` (1-based CoNLL ID) of sentence ``sent``
    (1-based) of a CoNLL file: a ``graph.explain.Explanation`` whose
    ``format(conll_ids=True)`` numbers words by CoNLL ID (the parsed doc is
    the file's sentence)."""
    import dataclasses

    nlp = load_pipeline(model)
    name, pipe = _mst_parser(nlp, model, component)
    gold = list(read_conll(path, nlp.vocab, format=fmt, n_sents=1))
    if not 1 <= sent <= len(gold):
        raise EvaluationError(f"{path} has {len(gold)} sentences; --sent must be 1..{len(gold)}")
    if not 1 <= word <= len(gold[sent - 1]):
        raise EvaluationError(f"sentence {sent} of {path} has {len(gold[sent - 1])} words; "
                              f"--word must be 1..{len(gold[sent - 1])}")
    docs = _annotated_inputs(nlp, name, gold[sent - 1:sent], gold_tags)
    return dataclasses.replace(pipe.explain(docs[0], word - 1), sentence_start=0)

