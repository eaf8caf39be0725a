"""Arc-standard transitions, validity and the static oracle."""
import itertools
from pathlib import Path

import numpy
import pytest
import spacy

from spacy_mstparse.components.arcstandard_gold import lift
from spacy_mstparse.corpus.conll import read_conllu
from spacy_mstparse.decoders.trees import is_projective, is_valid_tree
from spacy_mstparse.transition.arc_standard import ArcStandardState, NotArcStandardTree, oracle

SAMPLE = Path(__file__).resolve().parents[1] / "assets" / "en_ewt_sample"
MOVES = ("SHIFT", "LEFT-ARC", "RIGHT-ARC")


def replay(n, moves):
    state = ArcStandardState(n)
    for m in moves:
        state.apply(MOVES[m], 7)
    assert state.is_terminal
    return state.heads


def sample_trees():
    nlp = spacy.blank("en")
    for doc in read_conllu(SAMPLE / "train.conllu", nlp.vocab):
        for sent in doc.sents:
            heads = [-1] + [0 if t.head.i == t.i else t.head.i - sent.start + 1 for t in sent]
            yield numpy.array(heads, dtype="int32"), [""] + [t.dep_ for t in sent]


def test_transitions_by_hand():
    s = ArcStandardState(3)
    assert (s.stack, s.buffer) == ([0], [1, 2, 3])
    # the root can only take the last word, with the root alone on the stack,
    # and never gets a head
    assert s.valid_moves() == ["SHIFT"]
    s.apply("SHIFT")
    assert (s.stack, s.buffer) == ([0, 1], [2, 3])
    s.apply("LEFT-ARC", 4)  # 2 -> 1
    assert (s.stack, s.buffer) == ([0], [2, 3])
    assert s.heads[1] == 2 and s.labels[1] == 4
    s.apply("SHIFT")
    s.apply("RIGHT-ARC", 5)  # 2 -> 3, 2 back to the buffer front
    assert (s.stack, s.buffer) == ([0], [2])
    assert s.heads[3] == 2 and s.labels[3] == 5
    assert s.valid_moves() == ["RIGHT-ARC"]  # SHIFT would empty the buffer
    s.apply("RIGHT-ARC", 6)
    assert s.is_terminal and s.valid_moves() == []
    assert list(s.heads) == [-1, 2, 0, 2]
    with pytest.raises(ValueError, match="not valid"):
        s.apply("SHIFT")
    with pytest.raises(ValueError, match="unknown move"):
        ArcStandardState(2).apply("REDUCE")


def test_random_valid_runs_always_build_single_root_projective_trees():
    rng = numpy.random.RandomState(0)
    for _ in range(300):
        n = int(rng.randint(0, 12))
        state = ArcStandardState(n)
        steps = 0
        while not state.is_terminal:
            valid = state.valid_moves()
            assert valid, (state.stack, state.buffer)  # never stuck
            state.apply(valid[rng.randint(len(valid))])
            steps += 1
        assert steps == max(0, 2 * n - 1)
        heads = state.heads
        assert is_valid_tree(heads) and is_projective(heads)


def all_trees(n):
    for heads in itertools.product(range(n + 1), repeat=n):
        h = numpy.array((-1,) + heads, dtype="int32")
        if is_valid_tree(h):
            yield h


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_oracle_exactly_on_all_small_trees(n):
    """Brute force over every single-root tree of n words: the oracle
    rebuilds each projective one and rejects each non-projective one."""
    n_proj = 0
    for heads in all_trees(n):
        if is_projective(heads):
            moves, s0, b0 = oracle(heads)
            assert len(moves) == 2 * n - 1
            assert numpy.array_equal(replay(n, moves), heads)
            n_proj += 1
        else:
            with pytest.raises(NotArcStandardTree):
                oracle(heads)
    assert n_proj > 0


def test_oracle_rejects_several_roots_and_bad_heads():
    with pytest.raises(NotArcStandardTree):
        oracle(numpy.array([-1, 0, 0], dtype="int32"))
    with pytest.raises(ValueError, match="head position"):
        oracle(numpy.array([-1, 5, 0], dtype="int32"))


def test_oracle_on_every_sample_tree():
    """Every projective gold tree of the sample, and the lifted version of
    every non-projective one, is rebuilt exactly by the oracle's moves."""
    n_proj = n_lifted = 0
    for heads, deps in sample_trees():
        n = len(heads) - 1
        if not is_projective(heads):
            with pytest.raises(NotArcStandardTree):
                oracle(heads)
            heads, deps = lift(heads, deps)
            assert is_projective(heads) and is_valid_tree(heads)
            assert any("||" in d for d in deps)
            n_lifted += 1
        else:
            n_proj += 1
        moves, s0, b0 = oracle(heads)
        assert numpy.array_equal(replay(n, moves), heads)
        # the recorded configurations are real: sigma0 is left of beta0
        assert numpy.all(s0 < b0)
    assert n_proj > 900 and n_lifted > 5
