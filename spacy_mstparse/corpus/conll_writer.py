"""Write spaCy Docs as CoNLL-U, restoring what the reader kept in
``user_data`` and checking that each sentence is one tree (see the module
docstring of ``spacy_mstparse.corpus.conll``)."""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Dict, Iterable, List, Optional, Tuple

from spacy.tokens import Doc

from .atomic import atomic_write_text
from .conll_reader import (
    NEWDOC_ID_KEY, ROOT_LABEL, SPACE_AFTER_NO, UD_ROOT_LABEL, USER_DATA_KEY, PathLike, find_cycle,
)


class InvalidTreeError(ValueError):
    """A Doc whose dependencies are not one tree with one root per sentence,
    found while writing CoNLL-U."""


def stored_sentences(doc: Doc) -> Optional[List[Dict[str, Any]]]:
    """The sentences kept in user_data, if they still describe this Doc."""
    data = doc.user_data.get(USER_DATA_KEY)
    if not isinstance(data, dict):
        return None
    sents = data.get("sents")
    if not isinstance(sents, (list, tuple)) or not sents:  # DocBin loads tuples
        return None
    try:
        if sum(int(sent["n_words"]) for sent in sents) != len(doc):
            return None
    except (KeyError, TypeError, ValueError):
        return None
    return sents


def sentence_bounds(doc: Doc) -> List[Tuple[int, int]]:
    """``(start, end)`` token offsets of the Doc's sentences: the ones read
    from the file if ``user_data`` still matches the Doc, else ``doc.sents``,
    else (no sentence starts and no dependencies) the whole Doc."""
    if len(doc) == 0:
        return []
    stored = stored_sentences(doc)
    if stored is not None:
        bounds = []
        start = 0
        for sent in stored:
            end = start + int(sent["n_words"])
            bounds.append((start, end))
            start = end
        return bounds
    if doc.has_annotation("DEP") or doc.has_annotation("SENT_START"):
        return [(span.start, span.end) for span in doc.sents]
    return [(0, len(doc))]


@lru_cache(maxsize=65536)
def _ud_feats(morph: str) -> str:
    if not morph:
        return "_"
    features = morph.split("|")
    features.sort(key=lambda feature: feature.split("=", 1)[0].lower())
    return "|".join(features)


def _with_probabilities(misc: str, token) -> str:
    """MISC with the parser's ``HeadProb`` / ``DepProb`` (``probabilities =
    true``) and ``Confident`` (``selective.mark_confident``) when set."""
    values = []
    for attr, key, fmt in (("head_prob", "HeadProb", "{:.4f}"), ("dep_prob", "DepProb", "{:.4f}"),
                           ("confident", "Confident", None)):
        value = token._.get(attr) if token.has_extension(attr) else None
        if value is not None:
            values.append(f"{key}={fmt.format(value) if fmt else ('Yes' if value else 'No')}")
    if not values:
        return misc
    items = [item for item in ([] if misc == "_" else misc.split("|"))
             if item.split("=", 1)[0] not in ("HeadProb", "DepProb", "Confident")]
    return "|".join(sorted(items + values, key=lambda item: item.split("=", 1)[0].lower()))


def _set_space_after(misc: str, no_space: bool) -> str:
    items = [] if misc == "_" else misc.split("|")
    has = SPACE_AFTER_NO in items
    if no_space == has:
        return misc
    if no_space:
        items.append(SPACE_AFTER_NO)
    else:
        items = [item for item in items if item != SPACE_AFTER_NO]
    return "|".join(items) if items else "_"


def _line(cols: List[str], doc_index: int) -> str:
    line = "\t".join(cols)
    if line.count("\t") != 9 or "\n" in line or "\r" in line:
        raise ValueError(
            f"token {doc_index}: a field contains a tab or a line break, "
            f"which CoNLL-U cannot hold: {cols!r}"
        )
    return line


def _sentence_label(info: Optional[Dict[str, Any]], number: int, words: List[str]) -> str:
    """"sentence 12 (sent_id = x): 'The cat sat ...'" for error messages."""
    name = f"sentence {number}"
    for comment in (info or {}).get("comments") or ():
        if comment.startswith("# sent_id"):
            name += f" ({comment.lstrip('# ').strip()})"
            break
    text = " ".join(words[:8]) + (" ..." if len(words) > 8 else "")
    return f"{name}: '{text}'"


def _check_tree(doc: Doc, start: int, end: int, where) -> bool:
    """Whether the sentence ``doc[start:end]`` has dependencies; raise
    ``InvalidTreeError`` (message prefixed by ``where()``) unless they form
    one tree with exactly one root inside the sentence."""
    labelled = [bool(doc[i].dep_) for i in range(start, end)]
    if not any(labelled):
        return False
    if not all(labelled):
        missing = [i - start + 1 for i in range(start, end) if not labelled[i - start]]
        raise InvalidTreeError(
            f"{where()}: words {_id_list(missing)} have no head and label while the others do"
        )
    heads = []
    roots = []
    for i in range(start, end):
        head_i = doc[i].head.i
        if head_i == i:
            roots.append(i - start + 1)
            heads.append(0)
        elif start <= head_i < end:
            heads.append(head_i - start + 1)
        else:
            raise InvalidTreeError(
                f"{where()}: word {i - start + 1} ({doc[i].text!r}) has its head outside "
                "the sentence"
            )
    if len(roots) != 1:
        raise InvalidTreeError(
            f"{where()}: {len(roots)} words are attached to the root "
            f"({_id_list(roots) or 'none'}); a CoNLL-U sentence is one tree with one root"
        )
    cycle = find_cycle(heads)
    if cycle:
        chain = " -> ".join(map(str, cycle + [cycle[0]]))
        raise InvalidTreeError(f"{where()}: the words {chain} form a cycle")
    return True


def _id_list(ids: List[int], limit: int = 10) -> str:
    shown = ", ".join(map(str, ids[:limit]))
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def _render_doc(
    doc: Doc, enhanced_deps: bool, check_trees: bool, first_number: int, sent_id_prefix: str = ""
) -> Tuple[str, int]:
    stored = stored_sentences(doc)
    newdoc_id = doc.user_data.get(NEWDOC_ID_KEY) if stored is None else None
    blocks = []
    bounds = sentence_bounds(doc)
    for k, (start, end) in enumerate(bounds):
        info = stored[k] if stored is not None else None
        if check_trees:
            _check_tree(
                doc, start, end,
                lambda: _sentence_label(
                    info, first_number + k, [t.text for t in doc[start:end]]
                ),
            )
        lines: List[str] = []
        if info is not None:
            lines.extend(info.get("comments") or [])
            mwts = {int(mwt["start"]): mwt for mwt in info.get("mwts") or []}
            empty: Dict[int, List[List[str]]] = {}
            if enhanced_deps:
                for node in info.get("empty") or []:
                    empty.setdefault(int(node["after"]), []).append(node["cols"])
            misc_col = info.get("misc")
            deps_col = info.get("deps") if enhanced_deps else None
        else:  # no stored comments (e.g. parsed raw text): UD requires sent_id and text
            text = " ".join(doc[start:end].text.split())
            if newdoc_id is None:
                lines.append(f"# sent_id = {sent_id_prefix}{first_number + k}")
            else:  # the document's id, and sentence ids it numbers
                if k == 0:
                    lines.append(f"# newdoc id = {newdoc_id}")
                lines.append(f"# sent_id = {sent_id_prefix}{newdoc_id}-{k + 1}")
            lines.append(f"# text = {text}")
            mwts, empty, misc_col, deps_col = {}, {}, None, None
        in_mwt = set()
        for mwt in mwts.values():
            in_mwt.update(range(int(mwt["start"]), int(mwt["end"]) + 1))
        for cols in empty.get(0, ()):
            lines.append(_line(list(cols), start))
        for i in range(start, end):
            token = doc[i]
            word_id = i - start + 1
            mwt = mwts.get(word_id)
            if mwt is not None:
                cols = list(mwt["cols"])
                last = doc[start + int(mwt["end"]) - 1]
                cols[9] = _set_space_after(cols[9], not last.whitespace_)
                lines.append(_line(cols, i))
            form = token.text
            if not form:
                raise ValueError(f"token {i} has an empty text, which CoNLL-U cannot hold")
            dep = token.dep_
            if not dep:
                head, deprel = "_", "_"
            elif token.head.i == i:
                head, deprel = "0", UD_ROOT_LABEL
            else:
                head_i = token.head.i
                if not start <= head_i < end:
                    raise InvalidTreeError(
                        f"token {i} ({form!r}) has its head {head_i} outside its sentence "
                        f"(tokens {start}..{end - 1})"
                    )
                head, deprel = str(head_i - start + 1), UD_ROOT_LABEL if dep == ROOT_LABEL else dep
            misc = misc_col[word_id - 1] if misc_col is not None else "_"
            if word_id not in in_mwt:  # a document ends without SpaceAfter=No
                misc = _set_space_after(misc, not token.whitespace_ and not (
                    newdoc_id is not None and i == len(doc) - 1))
            misc = _with_probabilities(misc, token)
            cols = [
                str(word_id),
                form,
                token.lemma_ or "_",
                token.pos_ or "_",
                token.tag_ or "_",
                _ud_feats(str(token.morph)),
                head,
                deprel,
                deps_col[word_id - 1] if deps_col is not None else "_",
                misc,
            ]
            lines.append(_line(cols, i))
            for cols in empty.get(word_id, ()):
                lines.append(_line(list(cols), i))
        blocks.append("\n".join(lines) + "\n\n")
    return "".join(blocks), len(bounds)


def doc_to_conllu(doc: Doc, enhanced_deps: bool = True, check_trees: bool = True) -> str:
    """Render one Doc as CoNLL-U sentence blocks (each followed by a blank
    line).

    ``enhanced_deps=False`` leaves out the stored enhanced graph: DEPS is
    written as "_" and the empty nodes (which only exist in that graph) are
    dropped, so the output is consistent when the basic tree is a new
    (predicted) one. With ``check_trees`` (the default) every sentence with
    dependencies must be one tree with exactly one root, else
    ``InvalidTreeError`` names the sentence."""
    return _render_doc(doc, enhanced_deps, check_trees, 1)[0]


def docs_to_conllu(
    docs: Iterable[Doc], enhanced_deps: bool = True, check_trees: bool = True,
    first_number: int = 1, sent_id_prefix: str = "",
) -> str:
    """Render Docs as one CoNLL-U string (ids restart at 1 per sentence);
    see ``doc_to_conllu``. Sentences are numbered from ``first_number``
    across all Docs, in error messages and in the ``# sent_id`` written for
    sentences without stored comments (``sent_id_prefix`` + number)."""
    parts = []
    number = first_number
    for doc in docs:
        text, n = _render_doc(doc, enhanced_deps, check_trees, number, sent_id_prefix)
        parts.append(text)
        number += n
    return "".join(parts)


def write_conllu(
    docs: Iterable[Doc], path: PathLike, enhanced_deps: bool = True, check_trees: bool = True
) -> None:
    """Write Docs to ``path`` as CoNLL-U (see ``doc_to_conllu``). Everything
    is rendered and checked first and the file is replaced atomically, so a
    failure never leaves a partial file."""
    atomic_write_text(
        path, docs_to_conllu(docs, enhanced_deps=enhanced_deps, check_trees=check_trees)
    )
