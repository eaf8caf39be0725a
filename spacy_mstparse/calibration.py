"""Calibrate an ``mst_parser`` pipeline's probabilities, and explain parses.

``calibrate`` re-fits the head temperature T of p(tree) proportional to
exp(score / T) (for a second-order model with a projective decoder the
score includes the sibling scores) and the label temperature of the
labeler's chain distribution on a treebank (``components.mst_calibration``:
what training already does on its dev corpus). It reports the expected
calibration error (15 bins) of ``token._.head_prob`` against head
correctness and of ``token._.dep_prob`` against label correctness (words
whose predicted head is right), with accuracy and coverage at >= 0.9 and
>= 0.99, at the saved and at the re-fitted temperatures, and writes them
into the component's ``cfg`` in the model directory (atomically: the
directory stays loadable whatever happens). The parser's trees and labels
do not depend on the temperatures, only their probabilities.

``explain_sentence`` parses one sentence of a CoNLL file and explains one
word's head and label (``graph.explain``).
"""
import json
from pathlib import Path
from typing import Any, Dict, Optional, Tuple, Union

from .components.mst_calibration import THRESHOLDS, apply_temperatures, fit_temperatures, scored_docs
from .components.mst_parser import MSTParser
from .corpus.atomic import atomic_write_text
from .corpus.conll import read_conll
from .pipeline_input import EvaluationError, load_pipeline, make_input_docs
from .progress import progress_bar

PathLike = Union[str, Path]


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
        stream = proc.pipe(docs) if hasattr(proc, "pipe") else (proc(d) for d in docs)
        docs = list(progress_bar(stream, total=len(docs), desc=other, unit=" docs"))
    return docs


def write_calibration(model_dir: Path, name: str, pipe: MSTParser) -> Path:
    """Set the pipe's temperatures and calibration record in its saved cfg
    (atomic replace)."""
    cfg_path = Path(model_dir) / name / "cfg"
    try:
        cfg = json.loads(cfg_path.read_text(encoding="utf8"))
    except (OSError, ValueError) as err:
        raise EvaluationError(f"cannot read the component settings {cfg_path}: {err}") from None
    for key in ("temperature", "label_temperature", "calibration"):
        cfg[key] = pipe.cfg[key]
    atomic_write_text(cfg_path, json.dumps(cfg, indent=2, sort_keys=True) + "\n")
    return cfg_path


def calibrate(model: PathLike, dev_path: PathLike, *, gold_tags: bool = False,
              fmt: str = "conllu", component: Optional[str] = None,
              write: bool = True) -> Dict[str, Any]:
    """Fit the head and label temperatures on ``dev_path`` and (``write``)
    save them in ``model``."""
    model_dir = Path(model)
    if write and not (model_dir.is_dir() and (model_dir / "config.cfg").exists()):
        raise EvaluationError(f"{model} is not a pipeline directory (no config.cfg): "
                              "calibrate writes the temperatures into the model directory")
    nlp = load_pipeline(model)
    name, pipe = _mst_parser(nlp, model, component)
    gold = list(read_conll(dev_path, nlp.vocab, format=fmt, n_sents=1))
    docs = _annotated_inputs(nlp, name, gold, gold_tags)
    items = scored_docs(pipe, gold, docs)
    if not items or not any((it.gold[1:] >= 0).any() for it in items):
        raise EvaluationError(f"{dev_path}: no sentences with gold trees")
    fitted = fit_temperatures(pipe, items, max_words=None,
                              before=(pipe.cfg["temperature"], pipe.cfg["label_temperature"]))
    result = {"model": str(model), "dev": str(dev_path), "component": name, **fitted}
    if write:
        apply_temperatures(pipe, fitted)
        result["written_to"] = str(write_calibration(model_dir, name, pipe))
    return result


def _format_coverage(r: Dict[str, Any]) -> str:
    parts = []
    for th in THRESHOLDS:
        cover = r[f"coverage@{th}"]
        parts.append(f">= {th}: no words" if not cover else
                     f">= {th}: coverage {100 * cover:.1f}% accuracy "
                     f"{100 * r[f'accuracy@{th}']:.2f}%")
    return "; ".join(parts)


def format_calibration(result: Dict[str, Any]) -> str:
    lines = [f"{result['component']}: {result['sentences']} dev sentences"]
    for part, what, prob in (("head", "head", "head_prob"), ("label", "label", "dep_prob")):
        if part not in result:
            continue
        rep = result[part]
        lines.append(f"{prob} ({rep['after']['words']} words"
                     + (", whose predicted head is right)" if part == "label" else ")"))
        for key, t in (("before", rep["temperature_before"]), ("after", rep["temperature"])):
            r = rep[key]
            lines.append(f"  {key:>6} (T = {t:.4g}): ECE {100 * r['ece']:.2f}%, {what} accuracy "
                         f"{100 * r['accuracy']:.2f}%, mean {prob} {100 * r['mean_prob']:.2f}%; "
                         f"{_format_coverage(r)}")
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

