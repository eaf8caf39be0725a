"""decoder = "auto": the non-projective arc share and the choice made by the
mst_parser component (saved and reloaded)."""
import itertools

import numpy
import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from spacy_mstparse.corpus.readers import gold_annotated_doc
from spacy_mstparse.decoders import is_projective, is_valid_tree, nonprojective_arcs
from spacy_mstparse.graph.decoder_choice import choose_decoder, nonprojective_arc_share

SMALL = {"@mst_features": "spacy_mstparse.GraphFeatures.v1", "n_buckets": 2**16}


def all_trees(n):
    for tail in itertools.product(range(n + 1), repeat=n):
        heads = (-1, *tail)
        if is_valid_tree(heads, single_root=False):
            yield heads


def dominated(heads, h, x):
    """Brute force: x is h or lies below h."""
    while x not in (h, 0, -1):
        x = heads[x]
    return x == h


@pytest.mark.parametrize("n", range(1, 6))
def test_nonprojective_arcs_against_brute_force(n):
    seen_nonprojective = 0
    for heads in all_trees(n):
        expected = [c for c in range(1, n + 1)
                    if any(not dominated(heads, heads[c], x)
                           for x in range(min(heads[c], c) + 1, max(heads[c], c)))]
        got = nonprojective_arcs(heads)
        assert got == expected, heads
        assert (not got) == is_projective(heads), heads
        seen_nonprojective += bool(got)
    assert (seen_nonprojective > 0) == (n >= 3)


def test_nonprojective_arc_share_by_hand():
    # 1 -> 3 and 4 -> 2 cross: only 4 -> 2 has a word (3) its head does not dominate
    crossing = numpy.array([-1, 0, 4, 1, 1])
    assert nonprojective_arcs(crossing) == [2]
    chain = numpy.array([-1, 2, 0, 2])
    assert nonprojective_arc_share([crossing, chain]) == pytest.approx(1 / 7)
    assert nonprojective_arc_share([]) == 0.0
    # the rule: Chu-Liu-Edmonds above the threshold, Eisner at or below it
    assert choose_decoder([crossing, chain], 1 / 7 - 1e-9)[0] == "chu_liu_edmonds"
    assert choose_decoder([crossing, chain], 1 / 7)[0] == "eisner"
    assert choose_decoder([chain], 0.0) == (
        "eisner", {"nonprojective_arc_share": 0.0, "nonprojective_threshold": 0.0, "trees": 1})
    # second order: also above 1%
    assert choose_decoder([crossing, chain], 1 / 7 - 1e-9, order=2)[0] == "chu_liu_edmonds"
    many = [crossing] + [chain] * 40  # 1 arc in 124
    assert choose_decoder(many, 0.003)[0] == "chu_liu_edmonds"
    assert choose_decoder(many, 0.003, order=2)[0] == "eisner"


# A tiny language whose "VXNY" sentences have one crossing arc (Y -> X over N,
# the verb's object): Eisner cannot build them, Chu-Liu-Edmonds can.
VOCAB = {"V": ["sees", "likes", "takes"], "X": ["red", "old", "big"], "N": ["cat", "dog", "box"],
         "Y": ["up", "off", "out"], "D": ["the", "a", "this"]}
UPOS = {"V": "VERB", "X": "ADJ", "N": "NOUN", "Y": "ADP", "D": "DET"}
PATTERNS = {
    "crossing": (["V", "X", "N", "Y"], [0, 4, 1, 1], ["ROOT", "amod", "obj", "compound"]),
    "projective": (["D", "N", "V"], [2, 3, 0], ["det", "nsubj", "ROOT"]),
}


def language(nlp, n, crossing_share, seed=0):
    rng = numpy.random.RandomState(seed)
    examples = []
    for _ in range(n):
        tags, heads, deps = PATTERNS["crossing" if rng.rand() < crossing_share else "projective"]
        words = [VOCAB[t][rng.randint(3)] for t in tags]
        doc = Doc(nlp.vocab, words=words, pos=[UPOS[t] for t in tags], tags=tags,
                  heads=[h - 1 if h else i for i, h in enumerate(heads)], deps=deps)
        examples.append(Example(gold_annotated_doc(Example(doc, doc)), doc))
    return examples


def auto_parser(examples_of, config=None):
    nlp = spacy.blank("en")
    parser = nlp.add_pipe("mst_parser", config={"decoder": "auto", "features": SMALL,
                                                "label_buckets": 2**10, **(config or {})})
    examples = examples_of(nlp)
    nlp.initialize(lambda: examples)
    return nlp, parser, examples


def test_auto_picks_chu_liu_edmonds_on_crossing_arcs(tmp_path):
    nlp, parser, examples = auto_parser(lambda nlp: language(nlp, 100, 0.5))
    assert parser.decoder == "chu_liu_edmonds"
    choice = parser.cfg["decoder_choice"]
    n_crossing = sum(len(eg.reference) == 4 for eg in examples)
    n_arcs = sum(len(eg.reference) for eg in examples)
    assert choice["nonprojective_arc_share"] == pytest.approx(n_crossing / n_arcs)
    assert choice["trees"] == len(examples)
    for _ in range(2):
        for i in range(0, len(examples), 10):
            parser.update(examples[i:i + 10])
    docs = [eg.predicted for eg in examples[:20]]
    parsed = [[t.head.i for t in doc] for doc in nlp.pipe(d.copy() for d in docs)]
    assert any(not is_projective([-1] + [0 if h == i else h + 1 for i, h in enumerate(p)])
               for p in parsed)
    # the choice is saved and reloaded (disk and bytes), with what it rests on
    nlp.to_disk(tmp_path / "model")
    for loaded in (spacy.load(tmp_path / "model"),
                   spacy.blank("en").from_config(nlp.config).from_bytes(nlp.to_bytes())):
        reloaded = loaded.get_pipe("mst_parser")
        assert reloaded.decoder == "chu_liu_edmonds"
        assert reloaded.cfg["decoder_choice"] == choice
        assert [[t.head.i for t in doc] for doc in loaded.pipe(d.copy() for d in docs)] == parsed


def test_auto_picks_eisner_on_projective_data_or_rare_crossings():
    _, parser, _ = auto_parser(lambda nlp: language(nlp, 60, 0.0))
    assert parser.decoder == "eisner"
    assert parser.cfg["decoder_choice"]["nonprojective_arc_share"] == 0.0
    # crossings in about 1 arc in 20: above the default threshold
    # Chu-Liu-Edmonds, under a threshold of 0.1 still Eisner
    _, parser, _ = auto_parser(lambda nlp: language(nlp, 60, 0.2))
    share = parser.cfg["decoder_choice"]["nonprojective_arc_share"]
    assert parser.cfg["nonprojective_threshold"] < share <= 0.1
    assert parser.decoder == "chu_liu_edmonds"
    _, parser, _ = auto_parser(lambda nlp: language(nlp, 60, 0.2), {"nonprojective_threshold": 0.1})
    assert parser.cfg["decoder_choice"]["nonprojective_arc_share"] == share
    assert parser.decoder == "eisner"
    # second order: the share must also exceed 1% (the non-projective
    # second-order decoder is approximate)
    examples_of = lambda nlp: language(nlp, 300, 0.02)  # noqa: E731
    _, parser, _ = auto_parser(examples_of)
    share = parser.cfg["decoder_choice"]["nonprojective_arc_share"]
    assert parser.cfg["nonprojective_threshold"] < share < 0.01
    assert parser.decoder == "chu_liu_edmonds"
    _, parser, _ = auto_parser(examples_of, {"order": 2})
    assert parser.cfg["decoder_choice"]["nonprojective_arc_share"] == share
    assert parser.decoder == "eisner"
    _, parser, _ = auto_parser(lambda nlp: language(nlp, 60, 0.2), {"order": 2})
    assert parser.decoder == "chu_liu_edmonds"
    # a fixed decoder is kept, and no choice is recorded
    _, parser, _ = auto_parser(lambda nlp: language(nlp, 20, 0.5), {"decoder": "eisner"})
    assert parser.decoder == "eisner" and "decoder_choice" not in parser.cfg


def test_partial_trees_are_left_out_of_the_share():
    crossing = numpy.array([-1, 0, 4, 1, 1])
    chain = numpy.array([-1, 2, 0, 2])
    unknown = numpy.array([-1, 2, 0, -1])  # word 3's head not annotated
    assert nonprojective_arc_share([crossing, chain, unknown]) == pytest.approx(1 / 7)
    assert choose_decoder([chain, unknown], 0.0)[1]["trees"] == 1


def test_auto_with_partially_annotated_examples():
    """Training examples with missing heads (partial annotation) train with
    ``auto``: the choice rests on the complete trees only."""

    def partly_annotated(nlp):
        examples = language(nlp, 60, 0.5, seed=3)
        out = []
        for i, eg in enumerate(examples):
            ref = eg.reference
            if i % 3:
                out.append(eg)
                continue
            heads = [t.head.i for t in ref]
            heads[-1] = None  # the last word's head is not annotated
            deps = [t.dep_ for t in ref]
            deps[-1] = None
            doc = Doc(nlp.vocab, words=[t.text for t in ref], pos=[t.pos_ for t in ref],
                      tags=[t.tag_ for t in ref], heads=heads, deps=deps)
            out.append(Example(gold_annotated_doc(Example(doc, doc)), doc))
        return out

    _, parser, examples = auto_parser(partly_annotated)
    complete = [eg for i, eg in enumerate(examples) if i % 3]
    n_crossing = sum(len(eg.reference) == 4 for eg in complete)
    n_arcs = sum(len(eg.reference) for eg in complete)
    choice = parser.cfg["decoder_choice"]
    assert choice["trees"] == len(complete)
    assert choice["nonprojective_arc_share"] == pytest.approx(n_crossing / n_arcs)
    parser.update(examples[:10])  # the partial ones train too
