"""How well raw text is cut into a treebank's words, with and without the
tokenizer special cases the raw-text config learns from the training words.

For every ``NAME-ud-train.conllu`` with a dev file in ``--data-dir`` (or a
folder in it): the special cases are learned from the training words
(``spacy_mstparse.tokenizer_cases``, as ``configs/mst_parser_tagged.cfg``
does at ``initialize``); then the dev text (rebuilt from the words and
their ``SpaceAfter``, a multiword token as its words where they spell it
out, else whole) is tokenized by spaCy's tokenizer for the language, with
its own rules and with the cases added, and the token spans are scored
against the dev words (precision, recall, F1 over exact character spans).
Only the dev split is read.

Usage::

    python -m benchmarks.bench_tokenizer_cases

Output: ``benchmarks/results/tokenizer_cases.json`` (``--output``) and a
Markdown table beside it.
"""
import argparse
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from benchmarks import common
from benchmarks.bench_languages import find_treebanks


def text_and_spans(pieces: Sequence[Tuple[str, bool]]) -> Tuple[str, Set[Tuple[int, int]]]:
    """The text the (piece, space after) pairs spell, and each piece's span."""
    parts: List[str] = []
    spans = set()
    at = 0
    for piece, space in pieces:
        spans.add((at, at + len(piece)))
        parts.append(piece + (" " if space else ""))
        at += len(piece) + (1 if space else 0)
    return "".join(parts), spans


def span_scores(tokenizer, texts: Sequence[Tuple[str, Set[Tuple[int, int]]]]) -> Dict[str, float]:
    """Precision, recall and F1 (percent) of the tokenizer's token spans."""
    right = gold = predicted = 0
    for text, spans in texts:
        tokens = {(t.idx, t.idx + len(t.text)) for t in tokenizer(text) if not t.is_space}
        right += len(tokens & spans)
        gold += len(spans)
        predicted += len(tokens)
    p = 100.0 * right / predicted if predicted else 0.0
    r = 100.0 * right / gold if gold else 0.0
    return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0,
            "words": gold}


def measure(treebank: Dict[str, Any]) -> Dict[str, Any]:
    import spacy

    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.tokenizer_cases import add_special_cases, learn_special_cases, word_pieces

    nlp = spacy.blank(treebank["spacy_lang"])
    cases = learn_special_cases(nlp.tokenizer, read_conllu(treebank["train"], nlp.vocab))
    texts = [text_and_spans(word_pieces(doc)) for doc in read_conllu(treebank["dev"], nlp.vocab)]
    before = span_scores(nlp.tokenizer, texts)
    add_special_cases(nlp.tokenizer, cases)
    after = span_scores(nlp.tokenizer, texts)
    return {"spacy_lang": treebank["spacy_lang"], "special_cases": len(cases),
            "rules": before, "with_cases": after}


def markdown_table(results: Dict[str, Any]) -> str:
    lines = ["| treebank | special cases | dev words F1, spaCy's rules | with the cases |",
             "| --- | ---: | ---: | ---: |"]
    for name, run in results["treebanks"].items():
        lines.append(f"| {name} | {run['special_cases']:,} | {run['rules']['f1']:.2f} | "
                     f"{run['with_cases']['f1']:.2f} |")
    lines += ["", "Token spans of the dev text against its words (a multiword token as its words "
              "where they spell it out); cases learned from the train split."]
    return "\n".join(lines) + "\n"


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", type=Path, default=common.DATA)
    p.add_argument("--treebanks", default=None, help="comma-separated names (default: all)")
    p.add_argument("--output", type=Path, default=common.RESULTS / "tokenizer_cases.json")
    p.add_argument("--markdown", type=Path, default=None)
    args = p.parse_args(argv)
    treebanks = [t for t in find_treebanks(args.data_dir) if t["dev"] is not None]
    if args.treebanks:
        names = common.choose_names(p, args.treebanks, [t["name"] for t in treebanks], "treebank")
        treebanks = [t for t in treebanks if t["name"] in names]
    results: Dict[str, Any] = {
        "command": common.invocation("bench_tokenizer_cases", argv),
        "code": common.working_tree_code(), "machine": common.machine_info(), "treebanks": {}}
    for treebank in treebanks:
        common.log(f"{treebank['name']}: learning special cases and tokenizing dev")
        results["treebanks"][treebank["name"]] = run = measure(treebank)
        common.log(f"{treebank['name']}: {run['special_cases']} cases, dev words F1 "
                   f"{run['rules']['f1']:.2f} -> {run['with_cases']['f1']:.2f}")
    markdown = args.markdown or args.output.with_suffix(".md")
    common.finish_results(results, args.output, markdown_table(results), markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
