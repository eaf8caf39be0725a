"""Why the ``mst_parser`` pipe gave a token its head and label: spaCy glue
of ``graph.explain`` (the words and tag rows of the token's sentence as the
features read them, the rows named by what they hold; token indices for the
model's positions; labels as the Doc carries them)."""
from spacy.tokens import Doc

from ..corpus.conll import doc_label
from ..graph.explain import Explanation, WordView, explain_arc
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
    return WordView(["<root>"] + [t.lower_ for t in span], tags, morphs,
                    pipe.model_features.tag_row_names())


def explain(pipe, doc: Doc, i: int) -> Explanation:
    """Why token ``i`` (``token.i``) got its head and label: an
    ``Explanation`` (``graph.explain``) in token indices; ``print()`` it
    for the text."""
    if not 0 <= i < len(doc):
        raise ValueError(f"no token {i} in a doc of {len(doc)} tokens")
    pipe.prediction_weights()
    spans = pipe.sentence_spans(doc)
    sentence_start = next(s for s, e in spans if s <= i < e)
    chunks = pipe.chunk_spans(spans)
    start, end, _ = next(ch for ch in chunks if ch[0] <= i < ch[1])
    sentence = pipe.encoder.encode(doc, [(start, end)])[0]
    return explain_arc(pipe.graph, sentence, word_view(pipe, doc, start, end), i - start + 1,
                       sentence_constraints(doc, start, end), first_token=start,
                       sentence_start=sentence_start, texts=[t.text for t in doc[start:end]],
                       label_name=doc_label)
