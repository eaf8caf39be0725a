"""Why the ``mst_parser`` pipe gave a token its head and label: spaCy glue
of ``graph.explain`` (the words and tag rows of the token's sentence as the
features read them, token indices for the model's positions)."""
from typing import List

from spacy.tokens import Doc

from ..graph.explain import WordView, explain_arc, format_explanation
from ..tag_columns import TAG_COLUMN_ATTRS
from .extensions import sentence_constraints


def word_view(pipe, doc: Doc, start: int, end: int) -> WordView:
    """What the explanation shows of doc[start:end] (root at position 0)."""
    span = doc[start:end]
    tags = [["<root>"] + [getattr(t, a.lower() + "_") for t in span]
            for a in pipe.tag_attrs if a in TAG_COLUMN_ATTRS["both"]]
    if pipe.model_features.supertags:
        tags.append(["<root>"] + [t._.supertag or "<no-supertag>" for t in span])
    if pipe.model_features.cluster_bits:
        tags.append(["<root>"] + pipe.encoder.cluster_names(span))
    morphs = [[]] + [[f for f in str(t.morph).split("|") if f] for t in span]
    return WordView(["<root>"] + [t.lower_ for t in span], tags, morphs)


def explain(pipe, doc: Doc, i: int) -> dict:
    """The explanation of token i's head and label (``graph.explain``), with
    positions also as token indices (``token``, ``head/competitor.token``;
    None = the root) and the readable text under ``"text"``."""
    if not 0 <= i < len(doc):
        raise ValueError(f"no token {i} in a doc of {len(doc)} tokens")
    pipe.prediction_weights()
    chunks = pipe.chunk_spans(pipe.sentence_spans(doc))
    start, end, _ = next(ch for ch in chunks if ch[0] <= i < ch[1])
    sentence = pipe.encoder.encode(doc, [(start, end)])[0]
    expl = explain_arc(pipe.graph, sentence, word_view(pipe, doc, start, end), i - start + 1,
                       sentence_constraints(doc, start, end))
    for part in (expl["head"], expl["competitor"]):
        if part is not None:
            part["token"] = None if part["position"] == 0 else start + part["position"] - 1
    expl["token"] = i
    names: List[str] = ["ROOT"] + [f"{t.text}/{t.i}" for t in doc[start:end]]
    expl["names"] = names
    expl["text"] = format_explanation(expl, names)
    return expl
