"""Show parses: a plain-text table per sentence and a displaCy SVG.

Used by ``python -m spacy_mstparse show`` (and the ``demo`` workflow) to print
what a trained pipeline does to a few sentences of a CoNLL-U file.
"""
from pathlib import Path
from typing import List, Optional, Union

from spacy import displacy
from spacy.tokens import Doc

from .corpus.atomic import atomic_write_text, check_not_input
from .corpus.conll import EmptyInputError, read_conll
from .evaluation import load_pipeline, make_input_docs, parser_components, plan_tags, run_pipeline

PathLike = Union[str, Path]


def format_parse(doc: Doc) -> str:
    """One line per word: index, word, UPOS, head index and word, label."""
    lines = []
    for sent in doc.sents:
        lines.append(sent.text)
        for token in sent:
            head = "ROOT" if token.head.i == token.i else f"{token.head.i - sent.start + 1}:{token.head.text}"
            lines.append(
                f"  {token.i - sent.start + 1:>3} {token.text:<16} {token.pos_:<6} -> {head:<20} {token.dep_}"
            )
    return "\n".join(lines)


def show(
    model: PathLike,
    conll_path: PathLike,
    n: int = 3,
    svg_path: Optional[PathLike] = None,
    gold_tags: bool = False,
    fmt: str = "conllu",
) -> List[Doc]:
    """Parse the first ``n`` sentences of ``conll_path`` with ``model``, print
    them, and write a displaCy SVG of the first one to ``svg_path``. Tags
    come as in ``evaluation.plan_tags``; an empty file raises
    ``EmptyInputError``."""
    if svg_path is not None:
        check_not_input(svg_path, conll_path)
    nlp = load_pipeline(model)
    parsers = parser_components(nlp, model)
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
    for doc in docs:
        print(format_parse(doc))
        print()
    if svg_path is not None and docs:
        svg = displacy.render(docs[0], style="dep", jupyter=False, options={"compact": True})
        Path(svg_path).parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(Path(svg_path), svg)
        print(f"displaCy SVG of the first sentence written to {svg_path}")
    return docs
