"""Induced word classes (``spacy_mstparse.wordclasses``, divisive exchange
clustering) and the ``clusters`` command: incremental move deltas against a
full recomputation, monotone passes, the first split of an obvious corpus,
paths files and ClusterTables, and the command's output and errors."""
import numpy
import pytest
from spacy.strings import get_string_id

from spacy_mstparse.features.clusters import path_code, read_brown_paths
from spacy_mstparse.wordclasses import (EmptyCorpusError, ExchangeState, classes_from_sentences,
                                        count_bigrams, induce_word_classes)

from conftest import run_cli


def random_corpus(rng, n_sentences=60, vocab=25):
    # Zipf-like word frequencies, so that some words fall below min_count
    weights = 1.0 / numpy.arange(1, vocab + 1)
    weights /= weights.sum()
    return [[f"w{i}" for i in rng.choice(vocab, size=rng.integers(1, 12), p=weights)]
            for _ in range(n_sentences)]


def dense_bigrams(counts):
    n = counts.n_words
    dense = numpy.zeros((n, n), dtype=numpy.int64)
    rows = numpy.repeat(numpy.arange(n), numpy.diff(counts.right_ptr))
    dense[rows, counts.right_word] = counts.right_count
    return dense


def reference_objective(word_bigrams, classes, n_classes):
    """F = sum N(c,d) log N(c,d) - sum N(c,.) log N(c,.) - sum N(.,d) log N(.,d),
    the class counts summed from the dense word bigram matrix."""
    onehot = numpy.zeros((len(classes), n_classes))
    onehot[numpy.arange(len(classes)), classes] = 1
    class_bigrams = onehot.T @ word_bigrams @ onehot

    def xlogx(x):
        x = x[x > 0]
        return float((x * numpy.log(x)).sum())

    return (xlogx(class_bigrams) - xlogx(class_bigrams.sum(axis=1))
            - xlogx(class_bigrams.sum(axis=0))), class_bigrams


def make_state(counts):
    return ExchangeState(counts.right_ptr, counts.right_word, counts.right_count,
                         counts.left_ptr, counts.left_word, counts.left_count)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_incremental_delta_matches_full_recomputation(seed):
    rng = numpy.random.default_rng(seed)
    counts = count_bigrams(random_corpus(rng), min_count=1 + seed % 2)
    word_bigrams = dense_bigrams(counts)
    state = make_state(counts)
    n_classes = 8
    classes = rng.integers(0, n_classes, size=counts.n_words)
    state.set_classes(classes, n_classes)
    before, class_bigrams = reference_objective(word_bigrams, classes, n_classes)
    assert state.objective() == pytest.approx(before, rel=1e-12, abs=1e-9)
    assert numpy.array_equal(state.class_bigrams, class_bigrams)
    for _ in range(200):
        word = int(rng.integers(counts.n_words))
        to_class = int(rng.integers(n_classes))
        moved = classes.copy()
        moved[word] = to_class
        after, class_bigrams = reference_objective(word_bigrams, moved, n_classes)
        assert state.move_delta(word, to_class) == pytest.approx(after - before, abs=1e-7)
        if rng.random() < 0.5:  # take the move: the counts must follow
            state.move(word, to_class)
            classes, before = moved, after
            assert numpy.array_equal(state.classes, classes)
            assert numpy.array_equal(state.class_bigrams, class_bigrams)
            assert state.objective() == pytest.approx(before, abs=1e-7)


def test_exchange_pass_moves_only_to_the_sibling_and_gains():
    rng = numpy.random.default_rng(3)
    counts = count_bigrams(random_corpus(rng, n_sentences=100), min_count=1)
    state = make_state(counts)
    classes = rng.integers(0, 8, size=counts.n_words)
    state.set_classes(classes, 8)
    before = state.objective()
    moves = state.exchange_pass(rng.permutation(counts.n_words))
    changed = state.classes != classes
    assert moves == changed.sum() > 0  # each word is visited once
    assert numpy.all(state.classes[changed] == classes[changed] ^ 1)
    assert state.objective() >= before


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_objective_never_decreases_over_passes(seed):
    rng = numpy.random.default_rng(seed)
    reports = []
    induce_word_classes(random_corpus(rng, n_sentences=200, vocab=60), depth=4, min_count=1,
                        passes=20, seed=seed, progress=reports.append)
    assert [r.level for r in reports if r.pass_number == 0] == [1, 2, 3, 4]
    for level in range(1, 5):
        objectives = [r.objective for r in reports if r.level == level]
        assert len(objectives) >= 2
        assert all(b >= a - 1e-9 for a, b in zip(objectives, objectives[1:])), objectives
        passes = [r for r in reports if r.level == level and r.pass_number > 0]
        # a level ends after a pass without a move, or after the last pass
        assert passes[-1].moves == 0 or passes[-1].pass_number == 20


def test_first_split_separates_determiners_from_nouns():
    rng = numpy.random.default_rng(0)
    determiners = ["the", "a", "this", "that", "every", "some"]
    nouns = ["dog", "cat", "house", "tree", "car", "idea", "river", "book"]
    sentences = [[w for _ in range(rng.integers(1, 4))
                  for w in (str(rng.choice(determiners)), str(rng.choice(nouns)))]
                 for _ in range(300)]
    classes = induce_word_classes(sentences, depth=3, min_count=1)
    first_bits = {word: bits[0] for word, bits in classes.paths.items()}
    assert len({first_bits[w] for w in determiners}) == 1
    assert len({first_bits[w] for w in nouns}) == 1
    assert first_bits["the"] != first_bits["dog"]
    assert all(len(bits) == 3 for bits in classes.paths.values())


def test_runs_are_reproducible_and_seeded():
    rng = numpy.random.default_rng(5)
    sentences = random_corpus(rng, n_sentences=300, vocab=80)
    first = induce_word_classes(sentences, depth=5, seed=0)
    assert induce_word_classes(sentences, depth=5, seed=0).paths == first.paths
    assert induce_word_classes(iter(sentences), depth=5, seed=0).paths == first.paths
    assert any(induce_word_classes(sentences, depth=5, seed=s).paths != first.paths
               for s in (1, 2, 3))


def test_min_count_leaves_out_rare_words_and_lowercase_folds():
    sentences = [["The", "cat", "sat"], ["the", "cat", "ran"], ["A", "dog", "sat"]]
    classes = induce_word_classes(sentences, depth=2, min_count=2)
    assert set(classes.paths) == {"cat", "sat"}
    assert classes.counts == {"cat": 2, "sat": 2}
    folded = induce_word_classes(sentences, depth=2, min_count=2, lowercase=True)
    assert set(folded.paths) == {"the", "cat", "sat"}
    assert set(induce_word_classes(sentences, depth=2, min_count=1).paths) == {
        "The", "the", "A", "cat", "sat", "ran", "dog"}


def test_no_word_gets_the_all_zero_path():
    # the all-zero path reads as "no cluster" in a ClusterTable: it goes to
    # the leaf with the fewest tokens
    rng = numpy.random.default_rng(1)
    for depth in (1, 2, 6):
        classes = induce_word_classes(random_corpus(rng, n_sentences=200, vocab=40),
                                      depth=depth, min_count=1)
        leaves = {}
        for word, bits in classes.paths.items():
            leaves[bits] = leaves.get(bits, 0) + classes.counts[word]
        zero = "0" * depth
        assert leaves.get(zero, 0) == min(leaves.get(format(i, f"0{depth}b"), 0)
                                          for i in range(2 ** depth))


def test_paths_file_and_cluster_table(tmp_path):
    rng = numpy.random.default_rng(2)
    sentences = random_corpus(rng, n_sentences=200, vocab=50)
    classes = induce_word_classes(sentences, depth=6)
    out = tmp_path / "paths.tsv"
    classes.write_paths(out)
    lines = [line.split("\t") for line in out.read_text(encoding="utf8").splitlines()]
    assert len(lines) == len(classes)
    assert [bits for bits, _, _ in lines] == sorted(bits for bits, _, _ in lines)
    assert all(classes.paths[w] == bits and classes.counts[w] == int(n) for bits, w, n in lines)
    from_file = read_brown_paths(out, get_string_id)
    table = classes_from_sentences(sentences, get_string_id, depth=6)
    words = sorted(classes.paths)
    ids = [get_string_id(w) for w in words]
    expected = [path_code(classes.paths[w]) for w in words]
    assert from_file.lookup(ids).tolist() == expected
    assert table.lookup(ids).tolist() == expected
    # the parser's first bits: a prefix of the path, plus one
    assert table.column(ids, ids, 3).tolist() == [path_code(classes.paths[w][:3]) + 1 for w in words]


def test_empty_corpus_and_bad_arguments():
    with pytest.raises(EmptyCorpusError):
        induce_word_classes([[], []])
    with pytest.raises(ValueError, match="depth"):
        induce_word_classes([["a", "b"]], depth=0)
    with pytest.raises(ValueError, match="min_count"):
        induce_word_classes([["a", "b"]], min_count=0)
    with pytest.raises(TypeError, match="lists of words"):
        induce_word_classes(["a sentence as a string"])


# -- the clusters command -------------------------------------------------------

CONLLU = """# text = The cat sleeps.
1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_
2\tcat\tcat\tNOUN\tNN\t_\t3\tnsubj\t_\t_
3-4\tsleeps.\t_\t_\t_\t_\t_\t_\t_\t_
3\tsleeps\tsleep\tVERB\tVBZ\t_\t0\troot\t_\t_
4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_

1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_
2\tdog\tdog\tNOUN\tNN\t_\t3\tnsubj\t_\t_
3\tsleeps\tsleep\tVERB\tVBZ\t_\t0\troot\t_\t_
4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_

"""
RAW = "The dog barks.\n\nA cat sleeps on the mat.\nThe cat barks at a dog.\n"


@pytest.fixture
def inputs(tmp_path):
    raw = tmp_path / "raw.txt"
    raw.write_text(RAW, encoding="utf8")
    treebank = tmp_path / "train.conllu"
    treebank.write_text(CONLLU, encoding="utf8")
    return raw, treebank


def read_paths(path):
    return {w: (bits, int(n)) for bits, w, n in
            (line.split("\t") for line in path.read_text(encoding="utf8").splitlines())}


def test_clusters_command_raw_text_and_treebank(inputs, tmp_path):
    raw, treebank = inputs
    out = tmp_path / "out" / "classes.tsv"
    result = run_cli("clusters", raw, "--output", out, "--lang", "en", "--treebank", treebank,
                     "--depth", "3", "--min-count", "2")
    assert result.exit_code == 0, result.output
    paths = read_paths(out)
    # words of both inputs, tokenized by spaCy's English tokenizer ("barks" "."),
    # the treebank's syntactic words (not the range "sleeps.")
    assert paths["The"][1] == 4 and paths["."][1] == 5 and paths["sleeps"][1] == 3
    assert paths["barks"][1] == 2 and "sleeps." not in paths and "mat" not in paths
    assert all(len(bits) == 3 for bits, _ in paths.values())
    assert "level 3" in result.stdout
    # a treebank alone, as a .spacy DocBin too
    spacy_file = tmp_path / "train.spacy"
    assert run_cli("convert", treebank, spacy_file).exit_code == 0
    for source in (treebank, spacy_file):
        alone = tmp_path / f"alone_{source.suffix[1:]}.tsv"
        result = run_cli("clusters", "--output", alone, "--treebank", source, "--min-count", "1")
        assert result.exit_code == 0, result.output
        assert set(read_paths(alone)) == {"The", "cat", "dog", "sleeps", "."}


def test_clusters_command_language_spacy_lacks(inputs, tmp_path):
    # a code spaCy has no class for tokenizes with the multi-language class, and says so
    raw, _ = inputs
    outs = {}
    for lang in ("zz", "xx"):
        outs[lang] = tmp_path / f"{lang}.tsv"
        result = run_cli("clusters", raw, "--output", outs[lang], "--lang", lang, "--min-count", "1")
        assert result.exit_code == 0, result.output
        assert ("using 'xx'" in result.stderr) == (lang == "zz"), result.stderr
    assert "spaCy has no usable language 'zz'" in run_cli(
        "clusters", raw, "--output", tmp_path / "again.tsv", "--lang", "zz").stderr
    assert read_paths(outs["zz"]) == read_paths(outs["xx"]) != {}


def test_clusters_command_errors_write_nothing(inputs, tmp_path):
    raw, treebank = inputs
    out = tmp_path / "classes.tsv"
    empty = tmp_path / "empty.txt"
    empty.write_text("\n \n", encoding="utf8")
    bad_conllu = tmp_path / "bad.conllu"
    bad_conllu.write_text("1\tThe\n", encoding="utf8")
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("caf\xe9 au lait\n".encode("latin-1"))
    cases = [
        ((raw, "--output", raw), "Refusing to write"),
        ((raw, "--output", treebank, "--treebank", treebank), "Refusing to write"),
        ((empty, "--output", out), "Empty input"),
        (("--output", out), "No input"),
        ((raw, "--output", out, "--treebank", bad_conllu), "Invalid CoNLL-U input"),
        ((latin1, "--output", out), "not valid UTF-8"),
    ]
    for args, message in cases:
        result = run_cli("clusters", *args)
        assert result.exit_code == 1, (args, result.output)
        assert message in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.output
        assert not out.exists()
    assert raw.read_text(encoding="utf8") == RAW
    assert treebank.read_text(encoding="utf8") == CONLLU
