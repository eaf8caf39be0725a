"""Show parses: a plain-text table per sentence and displaCy pictures.

Used by ``python -m spacy_mstparse show`` (and the ``demo`` workflow) to print
what a trained pipeline does to a few sentences of a CoNLL-U / CoNLL-X file
(on its words) or of plain text (one document per line, through the whole
pipeline, as ``parse`` does), and by users to look at what ``mst_parser``
adds to a Doc:

* ``render_kbest``: the k best trees of a sentence (``doc._.parses``, with
  ``n_best > 1``) stacked in one SVG, each captioned with its rank, score
  and probability;
* ``render_arc_probabilities``: every candidate head of every word whose arc
  marginal (``doc._.arc_probs``, with ``probabilities = true``) reaches
  ``min_prob``, each arc labelled with its probability (the predicted arc
  with its label too) and drawn with that opacity.

Both draw a ``ROOT`` word at the left, so the root attachment shows; the
views themselves (displaCy's manual format) are ``kbest_views`` and
``arc_probability_view``, for ``displacy.render(..., manual=True)``.
"""
import html
import re
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

from spacy import displacy
from spacy.tokens import Doc, Span

from .corpus.atomic import atomic_write_text, check_not_input
from .corpus.conll import EmptyInputError, read_conll
from .parsing import input_format, parse_items, read_text
from .pipeline_input import (
    EvaluationError,
    load_pipeline,
    make_input_docs,
    parser_components,
    plan_tags,
    run_pipeline,
)

PathLike = Union[str, Path]


def format_parse(doc: Union[Doc, Span]) -> str:
    """One line per word: index, word, UPOS, head index and word, label, and
    with probabilities those of the head and of the label."""
    lines = []
    for sent in doc.sents:
        lines.append(sent.text)
        for token in sent:
            head = "ROOT" if token.head.i == token.i else f"{token.head.i - sent.start + 1}:{token.head.text}"
            line = (f"  {token.i - sent.start + 1:>3} {token.text:<16} {token.pos_:<6} "
                    f"-> {head:<20} {token.dep_:<12}")
            if token._.head_prob is not None:
                line += f" p(head) {token._.head_prob:.2f}"
                if token._.dep_prob is not None:
                    line += f"  p(label) {token._.dep_prob:.2f}"
            lines.append(line.rstrip())
    return "\n".join(lines)


def show(
    model: PathLike,
    conll_path: PathLike,
    n: int = 3,
    svg_path: Optional[PathLike] = None,
    gold_tags: bool = False,
    fmt: str = "auto",
    view: str = "tree",
    n_best: int = 5,
    min_prob: float = 0.05,
) -> List[Doc]:
    """Parse the first ``n`` sentences of ``conll_path`` with ``model``, print
    them, and write a displaCy SVG of the first one to ``svg_path``. The file
    is CoNLL-U / CoNLL-X or plain text (``fmt``: as ``parse``'s, "auto" by
    extension); plain text is one document per line, tokenized and
    annotated by the whole pipeline. The SVG draws its
    tree (``view = "tree"``), its candidate heads with their probabilities
    (``"probs"``, heads with p >= ``min_prob``) or its ``n_best`` best trees
    (``"kbest"``); the last two switch the ``mst_parser``'s ``probabilities``
    / ``n_best`` on. Tags come as in ``pipeline_input.plan_tags``; an empty
    file raises ``EmptyInputError``."""
    if view not in VIEWS:
        raise EvaluationError(f"view must be one of {', '.join(VIEWS)}, got {view!r}")
    if view == "probs" and not 0 < min_prob <= 1:
        raise EvaluationError(f"min_prob must be in (0, 1], got {min_prob!r}")
    if svg_path is not None:
        check_not_input(svg_path, conll_path)
    fmt = input_format(conll_path, fmt, gold_tags)
    nlp = load_pipeline(model)
    parsers = parser_components(nlp, model)
    if view != "tree":
        _switch_on(nlp, parsers, model, view, n_best)
    if fmt == "text":  # n lines hold n sentences at least
        lines = read_text(conll_path, limit=n)
        if not lines:
            raise EmptyInputError(conll_path, "text")
        plan_tags(nlp, parsers, None, False, conll_path, model)
        docs, _ = parse_items(nlp, fmt, lines, progress=False)
    else:
        gold = []
        for doc in read_conll(conll_path, nlp.vocab, format=fmt):
            gold.append(doc)
            if len(gold) >= n:
                break
        if not gold:
            raise EmptyInputError(conll_path)
        plan = plan_tags(nlp, parsers, gold, gold_tags, conll_path, model)
        docs, _ = run_pipeline(
            nlp, make_input_docs(gold, nlp.vocab, copy_attrs=plan.copy_attrs), progress=False
        )
    shown = 0
    for doc in docs:
        for sent in doc.sents:
            if shown < n:
                print(format_parse(sent))
                print()
            shown += 1
    if svg_path is not None and docs:
        if view == "kbest":
            svg = render_kbest(docs[0])
        elif view == "probs":
            svg = render_arc_probabilities(docs[0], min_prob=min_prob)
        else:
            svg = displacy.render(docs[0], style="dep", jupyter=False, options={"compact": True})
        Path(svg_path).parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(Path(svg_path), svg)
        print(f"displaCy SVG of the first sentence written to {svg_path}")
    return docs


def _switch_on(nlp, parsers: List[str], model: PathLike, view: str, n_best: int) -> None:
    """Turn on what ``view`` draws in the pipeline's ``mst_parser``(s)."""
    graph_parsers = [name for name in parsers if "probabilities" in getattr(
        nlp.get_pipe(name), "cfg", {})]
    if not graph_parsers:
        raise EvaluationError(f"the '{view}' view needs an mst_parser; {model} parses with "
                              f"{', '.join(parsers)}")
    if view == "kbest" and n_best < 2:
        raise EvaluationError(f"the 'kbest' view needs n_best >= 2, got {n_best}")
    for name in graph_parsers:
        cfg = nlp.get_pipe(name).cfg
        cfg["probabilities"] = True   # the probability of each tree, too
        if view == "kbest":
            cfg["n_best"] = n_best


# -- displaCy views of the k best trees and of the arc probabilities -----------
ROOT_WORD = "ROOT"
VIEWS = ("tree", "probs", "kbest")
_CAPTION_HEIGHT = 30
_ARROW_GROUP = '<g class="displacy-arrow">'


def _chunk(entries, sentence: int, attr: str, setting: Dict[str, Any]):
    """Entry ``sentence`` of ``doc._.<attr>``, which ``setting`` fills."""
    if not entries:
        (name, value), = setting.items()
        raise ValueError(f"doc._.{attr} is not set: parse with mst_parser's {name} = {value!r}, "
                         f"e.g. spacy.load(MODEL, config={{'components': {{'mst_parser': "
                         f"{setting!r}}}}})")
    if not 0 <= sentence < len(entries):
        raise ValueError(f"no sentence {sentence} in doc._.{attr}: it has {len(entries)} "
                         f"(numbered from 0)")
    return entries[sentence]


def _words(doc: Doc, start: int, n: int) -> List[Dict[str, str]]:
    return ([{"text": ROOT_WORD, "tag": ""}]
            + [{"text": t.text, "tag": t.pos_ or t.tag_} for t in doc[start:start + n]])


def _arc(head: int, child: int, label: str, **extra) -> Dict[str, Any]:
    """A displaCy arc between word positions (0 = ROOT) from head to child."""
    if child < head:
        return {"start": child, "end": head, "label": label, "dir": "left", **extra}
    return {"start": head, "end": child, "label": label, "dir": "right", **extra}


def kbest_views(doc: Doc, sentence: int = 0) -> List[Dict[str, Any]]:
    """displaCy manual views of the trees of ``doc._.parses[sentence]``, best
    first, each with a ``title`` (rank, score and, with probabilities, p)."""
    trees = _chunk(doc._.parses, sentence, "parses", {"n_best": 5})
    start, n = trees[0]["start"], len(trees[0]["heads"])
    words = _words(doc, start, n)
    views = []
    for rank, tree in enumerate(trees, 1):
        arcs = [_arc(0 if h == start + c else h - start + 1, c + 1, dep)
                for c, (h, dep) in enumerate(zip(tree["heads"], tree["deps"]))]
        prob = "" if tree["prob"] is None else f", p = {tree['prob']:.3f}"
        views.append({"words": words, "arcs": arcs,
                      "title": f"parse {rank} of {len(trees)}: score {tree['score']:.2f}{prob}"})
    return views


def arc_probability_view(doc: Doc, sentence: int = 0, min_prob: float = 0.05) -> Dict[str, Any]:
    """The displaCy manual view of ``doc._.arc_probs[sentence]``: for every
    word, an arc from each head whose marginal is >= ``min_prob``, labelled
    with the probability (the predicted head's arc also with its label) and
    carrying it as ``prob``."""
    if not 0 < min_prob <= 1:
        raise ValueError(f"min_prob must be in (0, 1], got {min_prob!r}")
    start, marginals = _chunk(doc._.arc_probs, sentence, "arc_probs", {"probabilities": True})
    n = marginals.shape[0] - 1
    arcs = []
    for c, token in enumerate(doc[start:start + n], 1):
        predicted = 0 if token.head.i == token.i else token.head.i - start + 1
        for h in range(n + 1):
            p = float(marginals[h, c])
            if h != c and (p >= min_prob or h == predicted):
                label = f"{token.dep_} {p:.2f}" if h == predicted else f"{p:.2f}"
                arcs.append(_arc(h, c, label, prob=p))
    return {"words": _words(doc, start, n), "arcs": arcs,
            "title": f"arc probabilities (heads with p >= {min_prob:g})"}


def _render_view(view: Dict[str, Any]) -> str:
    """One view as a displaCy SVG (without its title); arcs with a ``prob``
    are drawn with that opacity (at least 0.15, to stay visible)."""
    svg = displacy.render({k: v for k, v in view.items() if k != "title"}, style="dep",
                          manual=True, jupyter=False, options={"distance": 120}).strip()
    probs = [a["prob"] for a in view["arcs"] if "prob" in a]
    if probs:
        parts = svg.split(_ARROW_GROUP)
        if len(parts) != len(view["arcs"]) + 1:
            raise RuntimeError("displaCy's arc markup changed: cannot shade the arcs")
        svg = parts[0] + "".join(f'<g class="displacy-arrow" opacity="{max(p, 0.15):.2f}">{rest}'
                                 for p, rest in zip(probs, parts[1:]))
    return svg


def render_views(views: Sequence[Dict[str, Any]]) -> str:
    """displaCy views stacked in one SVG document, each under its title."""
    inner, width, y = [], 0.0, 0.0
    for view in views:
        svg = _render_view(view)
        size = re.search(r'width="([0-9.]+)" height="([0-9.]+)"', svg)
        w, h = float(size.group(1)), float(size.group(2))
        caption = html.escape(view.get("title", ""))
        inner.append(f'<text x="10" y="{y + 20:g}" font-family="Arial" font-size="16">'
                     f'{caption}</text>')
        inner.append(svg.replace("<svg ", f'<svg x="0" y="{y + _CAPTION_HEIGHT:g}" ', 1))
        width, y = max(width, w), y + _CAPTION_HEIGHT + h
    return (f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
            f'width="{width:g}" height="{y:g}" style="background: #ffffff">'
            + "".join(inner) + "</svg>\n")


def render_kbest(doc: Doc, sentence: int = 0) -> str:
    """SVG of the k best trees of one sentence (``kbest_views``)."""
    return render_views(kbest_views(doc, sentence))


def render_arc_probabilities(doc: Doc, sentence: int = 0, min_prob: float = 0.05) -> str:
    """SVG of one sentence's candidate heads and their probabilities
    (``arc_probability_view``)."""
    return render_views([arc_probability_view(doc, sentence, min_prob)])
