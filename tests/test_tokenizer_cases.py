"""Tokenizer special cases learned from a treebank's words (tokenizer_cases),
and the raw-text config's after_init callback that learns them."""
from pathlib import Path

import spacy
from spacy.tokens import Doc
from spacy.training.initialize import init_nlp

from spacy_mstparse.corpus.conll import read_conllu
from spacy_mstparse.corpus.convert import convert
from spacy_mstparse.corpus.docbin import read_docbin
from spacy_mstparse.tokenizer_cases import (
    add_special_cases, learn_special_cases, space_free_strings, word_pieces,
)

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "assets" / "en_ewt_sample"

# Two multiword tokens: one whose words spell it out, one whose words do not.
CONLLU = """# text = I don't go del rio.
1\tI\tI\tPRON\t_\t_\t3\tnsubj\t_\t_
2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_
2\tdo\tdo\tAUX\t_\t_\t4\taux\t_\t_
3\tn't\tnot\tPART\t_\t_\t4\tadvmod\t_\t_
4\tgo\tgo\tVERB\t_\t_\t0\troot\t_\t_
5-6\tdel\t_\t_\t_\t_\t_\t_\t_\t_
5\tde\tde\tADP\t_\t_\t7\tcase\t_\t_
6\tel\tel\tDET\t_\t_\t7\tdet\t_\t_
7\trio\trio\tNOUN\t_\t_\t4\tobl\t_\tSpaceAfter=No
8\t.\t.\tPUNCT\t_\t_\t4\tpunct\t_\t_

"""


def test_word_pieces_keep_spelled_out_words_and_other_tokens_whole(tmp_path):
    path = tmp_path / "mwt.conllu"
    path.write_text(CONLLU, encoding="utf8")
    doc, = read_conllu(path, spacy.blank("xx").vocab)
    assert [t.text for t in doc] == ["I", "do", "n't", "go", "de", "el", "rio", "."]
    pieces = word_pieces(doc)
    assert pieces == [("I", True), ("do", False), ("n't", True), ("go", True), ("del", True),
                      ("rio", False), (".", True)]
    assert list(space_free_strings(pieces)) == [("I",), ("do", "n't"), ("go",), ("del",),
                                                ("rio", ".")]


def _doc(vocab, words_spaces):
    words = [w for w, _ in words_spaces]
    return Doc(vocab, words=words, spaces=[s for _, s in words_spaces])


def test_learned_cases_follow_the_majority_split_where_the_rules_differ():
    nlp = spacy.blank("xx")
    assert [t.text for t in nlp.tokenizer("a)")] == ["a", ")"]
    assert [t.text for t in nlp.tokenizer("b)")] == ["b", ")"]
    docs = [
        # "a)" one word in 2 of 3 occurrences: learned as one word
        _doc(nlp.vocab, [("a)", True), ("x", True)]),
        _doc(nlp.vocab, [("a)", True)]),
        _doc(nlp.vocab, [("a", False), (")", True)]),
        # "b)" one word in 1 of 3: the majority is the rules' own split, nothing learned
        _doc(nlp.vocab, [("b)", True), ("b", False), (")", True), ("b", False), (")", True)]),
        # "ab.cd" split in three by the treebank, kept whole by the rules
        _doc(nlp.vocab, [("ab", False), (".", False), ("cd", True)]),
        # "go" is already a token of its own: nothing to learn
        _doc(nlp.vocab, [("go", True)]),
    ]
    cases = learn_special_cases(nlp.tokenizer, docs)
    assert cases == {"a)": ("a)",), "ab.cd": ("ab", ".", "cd")}
    # asking for 70% of the occurrences, "a)" (2 of 3) is not learned
    assert learn_special_cases(nlp.tokenizer, docs, min_share=0.7) == {"ab.cd": ("ab", ".", "cd")}
    add_special_cases(nlp.tokenizer, cases)
    assert [t.text for t in nlp("see a), ab.cd, c)")] == ["see", "a)", ",", "ab", ".", "cd", ",",
                                                         "c", ")"]


def test_tagged_config_learns_the_cases_at_initialize_and_saves_them(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    convert(SAMPLE / "train.conllu", corpus / "train.spacy", n_sents=10, vocab_lang="en")
    convert(SAMPLE / "dev.conllu", corpus / "dev.spacy", n_sents=10, vocab_lang="en")
    config = spacy.util.load_config(
        ROOT / "configs" / "mst_parser_tagged.cfg",
        overrides={"paths.train": str(corpus / "train.spacy"),
                   "paths.dev": str(corpus / "dev.spacy"), "nlp.lang": "en"})
    nlp = init_nlp(config)
    expected = learn_special_cases(spacy.blank("en").tokenizer,
                                   read_docbin(corpus / "train.spacy", spacy.blank("en").vocab))
    assert expected  # the sample has strings English's rules split otherwise
    nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    for text, words in expected.items():
        assert tuple(t.text for t in loaded.tokenizer(text)) == words, text


def test_a_tokenizer_without_special_cases_keeps_its_segmentation(capsys):
    """Chinese's tokenizer takes no special cases: the callback says so and
    leaves the pipeline as it is (no corpus is read)."""
    from spacy_mstparse.registry import make_tokenizer_cases_from_treebank

    nlp = spacy.blank("zh")
    assert not hasattr(nlp.tokenizer, "add_special_case")
    before = [t.text for t in nlp("我们去北京。")]
    assert make_tokenizer_cases_from_treebank()(nlp) is nlp
    assert [t.text for t in nlp("我们去北京。")] == before
    assert "takes no special cases" in capsys.readouterr().out
