"""Tests for CoNLL-U / CoNLL-X I/O, the ``convert`` command, the gold
annotations corpus reader and the bundled English EWT sample."""
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc, DocBin

from spacy_mstparse.corpus.conll import (
    USER_DATA_KEY,
    ConllFormatError,
    EmptyInputError,
    InvalidTreeError,
    docs_to_conllu,
    guess_format,
    read_conll,
    read_conllu,
    read_conllx,
    sentence_bounds,
    write_conllu,
)
from spacy_mstparse.corpus.convert import convert
from spacy_mstparse.corpus.docbin import read_docbin
from spacy_mstparse.corpus import readers  # noqa: F401  (registers the reader)

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
UD = DATA / "ud"
CONLLX = DATA / "conllx"
SAMPLE = REPO / "assets" / "en_ewt_sample"

UD_FILES = sorted(UD.glob("*.conllu")) if UD.is_dir() else []
needs_ud = pytest.mark.skipif(not UD_FILES, reason=f"UD treebanks not found in {UD} (../shared/data/ud)")


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("xx")


# ---------------------------------------------------------------------------
# An independent, minimal CoNLL-U parser for comparisons
# ---------------------------------------------------------------------------


def feats_set(feats):
    """FEATS as a set of (name, value), multi-values split: order-free."""
    if feats == "_":
        return frozenset()
    pairs = set()
    for feature in feats.split("|"):
        name, values = feature.split("=", 1)
        pairs.update((name, value) for value in values.split(","))
    return frozenset(pairs)


def parse_blocks(text):
    """[(comments, mwt_lines, empty_lines, words)] with words as tuples of
    FORM, LEMMA, UPOS, XPOS, FEATS-set, HEAD, DEPREL, DEPS, MISC."""
    sentences = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        comments, mwts, empty, words = [], [], [], []
        for line in block.split("\n"):
            if line.startswith("#"):
                comments.append(line)
                continue
            cols = line.split("\t")
            assert len(cols) == 10, line
            if "-" in cols[0]:
                mwts.append((cols[0], cols[1]))
            elif "." in cols[0]:
                empty.append(line)
            else:
                words.append(
                    (cols[1], cols[2], cols[3], cols[4], feats_set(cols[5]), cols[6], cols[7], cols[8], cols[9])
                )
        sentences.append((comments, mwts, empty, words))
    return sentences


def write(tmp_path, name, lines):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# ---------------------------------------------------------------------------
# Round trips on the real treebanks
# ---------------------------------------------------------------------------


@needs_ud
@pytest.mark.parametrize("path", UD_FILES, ids=lambda p: p.name)
def test_round_trip_every_ud_file(path, nlp):
    src = path.read_text(encoding="utf-8")
    expected = parse_blocks(src)
    # DocBin decodes user_data at ~1 ms per Doc: group the big files.
    n_sents = 1 if len(expected) < 3000 else 10
    docs = list(read_conllu(path, nlp.vocab, n_sents=n_sents))
    assert len(docs) == -(-len(expected) // n_sents)
    data = DocBin(store_user_data=True, docs=docs).to_bytes()
    docs = list(DocBin().from_bytes(data).get_docs(nlp.vocab))
    out = docs_to_conllu(docs)
    got = parse_blocks(out)
    assert len(got) == len(expected)
    for k, (exp, sent) in enumerate(zip(expected, got)):
        assert sent == exp, f"{path.name}: sentence {k + 1} differs"
    # UD files come back byte for byte (FEATS are written in UD order).
    assert out == src


@needs_ud
def test_docs_hold_the_annotations(nlp):
    path = UD / "en_ewt-ud-dev.conllu"
    doc = next(read_conllu(path, nlp.vocab))
    assert [t.text for t in doc][:4] == ["From", "the", "AP", "comes"]
    assert doc[3].pos_ == "VERB" and doc[3].tag_ == "VBZ" and doc[3].lemma_ == "come"
    assert doc[3].morph.to_dict()["Tense"] == "Pres"
    assert doc[3].dep_ == "ROOT" and doc[3].head.i == 3  # UD's root, spaCy's ROOT
    assert doc[2].dep_ == "obl" and doc[2].head.i == 3
    assert doc[0].is_sent_start
    subtyped = [t.dep_ for d in read_conllu(path, nlp.vocab, n_sents=50) for t in d if ":" in t.dep_]
    assert "nsubj:pass" in subtyped


@needs_ud
def test_conllx_matches_ud_danish(nlp):
    conllx_path = CONLLX / "da_ddt-dev.conll"
    if not conllx_path.exists():
        pytest.skip(f"{conllx_path} not found")
    ud_docs = list(read_conllu(UD / "da_ddt-ud-dev.conllu", nlp.vocab))
    x_docs = list(read_conllx(conllx_path, nlp.vocab))
    assert len(x_docs) == len(ud_docs) == 564
    for x_doc, ud_doc in zip(x_docs, ud_docs):
        assert [t.text for t in x_doc] == [t.text for t in ud_doc]
        assert [t.head.i for t in x_doc] == [t.head.i for t in ud_doc]
        assert [t.dep_ for t in x_doc] == [t.dep_ for t in ud_doc]
        assert [t.pos_ for t in x_doc] == [t.pos_ for t in ud_doc]
        assert [t.lemma_ for t in x_doc] == [t.lemma_ for t in ud_doc]
        assert [str(t.morph) for t in x_doc] == [str(t.morph) for t in ud_doc]
    assert sum(len(d) for d in x_docs) == 10332


# ---------------------------------------------------------------------------
# The bundled sample
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name,n", [("train.conllu", 1000), ("dev.conllu", 200)])
def test_sample_files(name, n, nlp):
    path = SAMPLE / name
    docs = list(read_conllu(path, nlp.vocab))
    assert len(docs) == n
    assert all(len(list(doc.sents)) == 1 for doc in docs)
    assert any(doc.user_data[USER_DATA_KEY]["sents"][0]["mwts"] for doc in docs)
    source = UD / ("en_ewt-ud-" + name)
    if source.exists():  # a verbatim prefix of the treebank
        text = path.read_text(encoding="utf-8")
        assert source.read_text(encoding="utf-8").startswith(text)
        assert text.endswith("\n\n")


def test_sample_readme():
    readme = (SAMPLE / "README.md").read_text(encoding="utf-8")
    for needle in ("CC BY-SA 4.0", "Silveira", "A Gold Standard Dependency Corpus for English", "Truncation only"):
        assert needle in readme


# ---------------------------------------------------------------------------
# Malformed input
# ---------------------------------------------------------------------------

GOOD = [
    "# sent_id = 1",
    "# text = The cat sat.",
    "1\tThe\tthe\tDET\tDT\tDefinite=Def|PronType=Art\t2\tdet\t_\t_",
    "2\tcat\tcat\tNOUN\tNN\tNumber=Sing\t3\tnsubj\t_\t_",
    "3\tsat\tsit\tVERB\tVBD\tMood=Ind|Tense=Past|VerbForm=Fin\t0\troot\t_\tSpaceAfter=No",
    "4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_",
    "",
]
# The bad sentence starts on line 10 (GOOD is lines 1-7, then 2 comments).
BAD_PREFIX = GOOD + ["# sent_id = 2", "# text = A dog ran"]


def w(i, form, head, deprel, upos="NOUN", feats="_", misc="_"):
    return f"{i}\t{form}\t{form.lower()}\t{upos}\tNN\t{feats}\t{head}\t{deprel}\t_\t{misc}"


MALFORMED = {
    "columns": ([w(1, "A", 2, "det"), "2\tdog\tdog\tNOUN\tNN\t_\t0\troot\t_", w(3, "ran", 2, "acl")], 11, "10 tab-separated columns"),
    "id_not_integer": ([w(1, "A", 2, "det"), w("x", "dog", 0, "root")], 11, "ID 'x'"),
    "id_out_of_sequence": ([w(1, "A", 2, "det"), w(3, "dog", 0, "root")], 11, "ID 3 out of sequence"),
    "id_zero": ([w(0, "A", 2, "det")], 10, "ID 0 out of sequence"),
    "range_reversed": ([w(1, "A", 2, "det"), "3-2\tdog\t_\t_\t_\t_\t_\t_\t_\t_", w(2, "dog", 0, "root")], 11, "ID range '3-2'"),
    "range_out_of_sequence": ([w(1, "A", 2, "det"), "3-4\tdog\t_\t_\t_\t_\t_\t_\t_\t_", w(2, "dog", 0, "root")], 11, "ID range '3-4'"),
    "range_beyond_end": (["1-3\tAdog\t_\t_\t_\t_\t_\t_\t_\t_", w(1, "A", 2, "det"), w(2, "dog", 0, "root")], 10, "ID range '1-3'"),
    "decimal_out_of_sequence": ([w(1, "A", 2, "det"), "1.2\tx\tx\tNOUN\t_\t_\t_\t_\t2:dep\t_", w(2, "dog", 0, "root")], 11, "ID 1.2"),
    "head_not_integer": ([w(1, "A", "two", "det"), w(2, "dog", 0, "root")], 10, "HEAD 'two' is not an integer"),
    "head_out_of_range": ([w(1, "A", 2, "det"), w(2, "dog", 0, "root"), w(3, "ran", 7, "acl")], 12, "HEAD 7 out of range"),
    "head_negative": ([w(1, "A", -1, "det"), w(2, "dog", 0, "root")], 10, "HEAD -1 out of range"),
    "head_self": ([w(1, "A", 2, "det"), w(2, "dog", 2, "root")], 11, "HEAD 2 is the word itself"),
    "cycle": ([w(1, "A", 2, "det"), w(2, "dog", 3, "nsubj"), w(3, "ran", 0, "root"), w(4, "off", 5, "x"), w(5, "now", 4, "y")], 10, "HEAD: the words 4 -> 5 -> 4 form a cycle"),
    "no_root": ([w(1, "A", 2, "det"), w(2, "dog", 1, "nsubj")], 10, "HEAD: no word is attached to the root"),
    "several_roots": ([w(1, "A", 0, "root"), w(2, "dog", 0, "root")], 10, "HEAD: 2 words are attached to the root"),
    "head_missing_in_part": ([w(1, "A", "_", "_"), w(2, "dog", 0, "root")], 10, "HEAD is '_' but other words"),
    "deprel_missing": ([w(1, "A", 2, "_"), w(2, "dog", 0, "root")], 10, "DEPREL is '_' but HEAD is given"),
    "deprel_without_head": ([w(1, "A", "_", "det"), w(2, "dog", "_", "_")], 10, "DEPREL 'det' given but HEAD is '_'"),
    "empty_form": ([w(1, "A", 2, "det"), w(2, "", 0, "root")], 11, "FORM is empty"),
    "empty_lemma": ([w(1, "A", 2, "det"), "2\tdog\t\tNOUN\tNN\t_\t0\troot\t_\t_"], 11, "LEMMA is empty"),
    "feats_no_value": ([w(1, "A", 2, "det", feats="Number"), w(2, "dog", 0, "root")], 10, "FEATS 'Number'"),
    "feats_empty_part": ([w(1, "A", 2, "det", feats="Number=Sing||Case=Nom"), w(2, "dog", 0, "root")], 10, "FEATS 'Number=Sing||Case=Nom'"),
    "feats_repeated": ([w(1, "A", 2, "det", feats="Case=Nom|Case=Acc"), w(2, "dog", 0, "root")], 10, "feature 'Case' occurs twice"),
    "upos_not_ud": ([w(1, "A", 2, "det", upos="NN"), w(2, "dog", 0, "root")], 10, "UPOS 'NN' is not a Universal Dependencies POS tag"),
    "comment_inside": ([w(1, "A", 2, "det"), "# oops", w(2, "dog", 0, "root")], 11, "comment line inside a sentence"),
    "only_mwt": (["1-2\tAdog\t_\t_\t_\t_\t_\t_\t_\t_"], 10, "no word lines"),
}


@pytest.mark.parametrize("kind", sorted(MALFORMED))
def test_malformed_conllu(kind, tmp_path, nlp):
    bad_lines, line_no, problem = MALFORMED[kind]
    path = write(tmp_path, f"{kind}.conllu", BAD_PREFIX + bad_lines)
    with pytest.raises(ConllFormatError) as info:
        list(read_conllu(path, nlp.vocab))
    err = info.value
    assert str(err).startswith(f"{path}:{line_no}: "), str(err)
    assert problem in str(err)
    assert (err.path, err.line_no) == (str(path), line_no)
    assert isinstance(err, ValueError)
    assert str(pickle.loads(pickle.dumps(err))) == str(err)


def test_malformed_encoding_and_trailing_comment(tmp_path, nlp):
    path = tmp_path / "latin1.conllu"
    path.write_bytes(("\n".join(GOOD) + "\n").encode() + "1\tcafé\t_\t_\t_\t_\t_\t_\t_\t_\n".encode("latin-1"))
    with pytest.raises(ConllFormatError, match=r"latin1\.conllu:8: not valid UTF-8"):
        list(read_conllu(path, nlp.vocab))
    path = write(tmp_path, "dangling.conllu", GOOD + ["# sent_id = 2"])
    with pytest.raises(ConllFormatError, match=r"dangling\.conllu:8: comment lines not followed by a sentence"):
        list(read_conllu(path, nlp.vocab))


def test_conllx_rules(tmp_path, nlp):
    def x(i, form, head, deprel, cpos="NOUN", phead="_"):
        return f"{i}\t{form}\t{form.lower()}\t{cpos}\tNN\t_\t{head}\t{deprel}\t{phead}\t_"

    # Several roots are accepted in CoNLL-X; the file's sentence stays one.
    path = write(tmp_path, "roots.conll", [x(1, "A", 0, "ROOT"), x(2, "dog", 1, "dep"), x(3, "ran", 0, "ROOT"), "", x(1, "Yes", 0, "ROOT")])
    docs = list(read_conllx(path, nlp.vocab, n_sents=2))
    assert len(docs) == 1
    assert sentence_bounds(docs[0]) == [(0, 3), (3, 4)]
    assert [s.start for s in docs[0].sents] == [0, 3]
    assert [t.head.i for t in docs[0]] == [0, 0, 2, 3]
    # CoNLL-U allows one root: the writer names the sentence unless told
    # not to check.
    with pytest.raises(InvalidTreeError, match=r"sentence 1: 'A dog ran': 2 words are attached to the root \(1, 3\)"):
        docs_to_conllu(docs)
    again = parse_blocks(docs_to_conllu(docs, check_trees=False))
    assert [len(s[3]) for s in again] == [3, 1]
    assert [wd[5] for wd in again[0][3]] == ["0", "1", "0"]
    # ... but cycles, ranges and non-UD CPOSTAG are not.
    cases = [
        ([x(1, "A", 2, "dep"), x(2, "dog", 1, "dep"), x(3, "ran", 0, "ROOT")], 1, "cycle"),
        ([x(1, "A", 0, "ROOT"), "2-3\tdog\t_\t_\t_\t_\t_\t_\t_\t_"], 2, "ID '2-3' is not an integer"),
        ([x(1, "A", 0, "ROOT", cpos="N")], 1, "CPOSTAG 'N' is not a Universal Dependencies POS tag"),
        ([x(1, "A", 0, "ROOT", phead="p")], 1, "PHEAD 'p' is not an integer"),
        ([x(1, "A", 0, "ROOT") + "\t_"], 1, "expected 10 tab-separated columns"),
    ]
    for k, (lines, line_no, problem) in enumerate(cases):
        path = write(tmp_path, f"bad{k}.conll", lines)
        with pytest.raises(ConllFormatError) as info:
            list(read_conll(path, nlp.vocab, format="conllx"))
        assert str(info.value).startswith(f"{path}:{line_no}: ") and problem in str(info.value)


def run_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "spacy_mstparse", *map(str, args)],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )


def test_cli_convert_malformed_leaves_no_output(tmp_path):
    bad = write(tmp_path, "bad.conllu", BAD_PREFIX + MALFORMED["cycle"][0])
    out = tmp_path / "out" / "bad.spacy"
    result = run_cli("convert", bad, out, "--format", "conllu")
    assert result.returncode == 1
    assert f"{bad}:10: HEAD" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert not out.exists()
    # An existing output is left untouched, and no temporary file remains.
    out.parent.mkdir(exist_ok=True)
    out.write_bytes(b"old")
    assert run_cli("convert", bad, out).returncode == 1
    assert out.read_bytes() == b"old"
    assert sorted(p.name for p in out.parent.iterdir()) == ["bad.spacy"]


def test_cli_convert_sample(tmp_path, nlp):
    out = tmp_path / "dev.spacy"
    result = run_cli("convert", SAMPLE / "dev.conllu", out, "--n-sents", "10", "--lang", "en")
    assert result.returncode == 0, result.stderr
    assert "20 docs, 200 sentences, 4007 words" in " ".join(result.stdout.split())
    docs = list(DocBin().from_disk(out).get_docs(nlp.vocab))
    assert len(docs) == 20
    assert docs_to_conllu(docs) == (SAMPLE / "dev.conllu").read_text(encoding="utf-8")


def test_cli_convert_language_spacy_lacks(tmp_path, nlp):
    # the DocBin holds the file's words whatever the vocab's language: a code
    # spaCy has no class for (UD's Wolof) converts with "xx", and says so
    out = tmp_path / "wo.spacy"
    result = run_cli("convert", SAMPLE / "dev.conllu", out, "--n-sents", "10", "--lang", "wo")
    assert result.returncode == 0, result.stderr
    assert "spaCy has no usable language 'wo'" in result.stderr and "using 'xx'" in result.stderr
    docs = list(DocBin().from_disk(out).get_docs(nlp.vocab))
    assert docs_to_conllu(docs) == (SAMPLE / "dev.conllu").read_text(encoding="utf-8")


def test_convert_function(tmp_path, nlp):
    path = write(tmp_path, "a.conllu", GOOD + GOOD[2:])
    stats = convert(path, tmp_path / "a.spacy", format="conllu", n_sents=1)
    assert stats == {"docs": 2, "sentences": 2, "words": 8}
    docs = list(read_docbin(tmp_path / "a.spacy", nlp.vocab))
    assert [d.text for d in docs] == ["The cat sat. ", "The cat sat. "]
    assert docs[0].user_data[USER_DATA_KEY]["sents"][0]["comments"] == ("# sent_id = 1", "# text = The cat sat.")


# ---------------------------------------------------------------------------
# Whitespace, multiword tokens, several sentences per doc, edge cases
# ---------------------------------------------------------------------------

MWT_SENT = [
    "# text = I don't know.",
    "1\tI\tI\tPRON\tPRP\tCase=Nom|Number=Sing|Person=1|PronType=Prs\t4\tnsubj\t4:nsubj\t_",
    "2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_",
    "2\tdo\tdo\tAUX\tVBP\tMood=Ind|Number=Sing|Person=1|Tense=Pres|VerbForm=Fin\t4\taux\t4:aux\t_",
    "3\tn't\tnot\tPART\tRB\t_\t4\tadvmod\t4:advmod\t_",
    "4\tknow\tknow\tVERB\tVB\tVerbForm=Inf\t0\troot\t0:root\tSpaceAfter=No",
    "4.1\tknow\tknow\tVERB\tVB\t_\t_\t_\t4:conj\tCopyOf=4",
    "5\t.\t.\tPUNCT\t.\t_\t4\tpunct\t4:punct\tGloss=stop",
    "",
]


def test_space_after_and_mwt_round_trip(tmp_path, nlp):
    glued = [
        "1-2\tcannot\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No",
        "1\tcan\tcan\tAUX\tMD\tVerbForm=Fin\t3\taux\t_\t_",
        "2\tnot\tnot\tPART\tRB\t_\t3\tadvmod\t_\t_",
        "3\tgo\tgo\tVERB\tVB\tVerbForm=Inf\t0\troot\t_\tSpaceAfter=No|Foo=Bar",
        "",
    ]
    path = write(tmp_path, "space.conllu", MWT_SENT + glued)
    docs = list(read_conllu(path, nlp.vocab))
    assert docs[0].text == "I don't know. "
    assert [t.text for t in docs[0]] == ["I", "do", "n't", "know", "."]
    assert [bool(t.whitespace_) for t in docs[0]] == [True, False, True, False, True]
    assert docs[1].text == "cannotgo"  # MWT range SpaceAfter=No, and the last word's
    source = path.read_text(encoding="utf-8")
    assert docs_to_conllu(docs) == source
    # SpaceAfter=No follows the Doc's whitespace when it changes.
    words = [t.text for t in docs[1]]
    changed = Doc(nlp.vocab, words=words, spaces=[False, False, True], user_data=docs[1].user_data)
    lines = docs_to_conllu([changed]).splitlines()
    assert lines[0] == "1-2\tcannot\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No"
    assert lines[3].endswith("\tFoo=Bar")  # SpaceAfter=No removed, the rest kept


def test_n_sents_groups_sentences(tmp_path, nlp):
    sents = []
    for k in range(7):
        sents += [f"# sent_id = {k}", f"1\tS{k}\ts\tPROPN\tNNP\t_\t0\troot\t_\t_", "2\tran\trun\tVERB\tVBD\t_\t1\tacl\t_\t_", ""]
    path = write(tmp_path, "seven.conllu", sents)
    docs = list(read_conllu(path, nlp.vocab, n_sents=3))
    assert [len(d) for d in docs] == [6, 6, 2]
    assert [len(list(d.sents)) for d in docs] == [3, 3, 1]
    assert [t.is_sent_start for t in docs[0]] == [True, False, True, False, True, False]
    assert [t.head.i for t in docs[1]] == [0, 0, 2, 2, 4, 4]
    assert docs[0].text == "S0 ran S1 ran S2 ran "
    assert docs_to_conllu(docs) == path.read_text(encoding="utf-8")
    with pytest.raises(ValueError):
        read_conllu(path, nlp.vocab, n_sents=0)


def test_empty_file_gives_no_docs(tmp_path, nlp):
    empty = tmp_path / "empty.conllu"
    empty.write_text("", encoding="utf-8")
    assert list(read_conllu(empty, nlp.vocab)) == []
    blank = tmp_path / "blank.conllu"
    blank.write_text("\n\n  \n", encoding="utf-8")
    assert list(read_conllx(blank, nlp.vocab)) == []
    assert docs_to_conllu([]) == ""


def test_sentences_without_trees(tmp_path, nlp):
    untreed = [
        "1\tHello\thello\tINTJ\tUH\t_\t_\t_\t_\t_",
        "2\tthere\tthere\tADV\tRB\t_\t_\t_\t_\t_",
        "",
    ]
    path = write(tmp_path, "mixed.conllu", untreed + GOOD + untreed)
    docs = list(read_conllu(path, nlp.vocab, n_sents=3))
    doc = docs[0]
    assert [t.is_sent_start for t in doc] == [True, False, True, False, False, False, True, False]
    assert [s.start for s in doc.sents] == [0, 2, 6]
    assert doc[0].dep_ == "" and doc[4].dep_ == "ROOT"
    assert docs_to_conllu(docs) == path.read_text(encoding="utf-8")
    only = list(read_conllu(write(tmp_path, "plain.conllu", untreed), nlp.vocab))[0]
    assert not only.has_annotation("DEP")
    assert only[0].pos_ == "INTJ"


def test_writer_without_user_data(tmp_path, nlp):
    doc = Doc(
        nlp.vocab, words=["Hi", "!", "Go", "home"], spaces=[False, True, True, False],
        heads=[0, 0, 2, 2], deps=["ROOT", "punct", "ROOT", "obj"], pos=["INTJ", "PUNCT", "VERB", "NOUN"],
        morphs=["", "", "VerbForm=Inf|Mood=Imp", ""],
    )
    out = docs_to_conllu([doc])
    assert out == (  # UD's sent_id and text comments, sentences numbered from 1
        "# sent_id = 1\n"
        "# text = Hi!\n"
        "1\tHi\t_\tINTJ\t_\t_\t0\troot\t_\tSpaceAfter=No\n"
        "2\t!\t_\tPUNCT\t_\t_\t1\tpunct\t_\t_\n\n"
        "# sent_id = 2\n"
        "# text = Go home\n"
        "1\tGo\t_\tVERB\t_\tMood=Imp|VerbForm=Inf\t0\troot\t_\t_\n"
        "2\thome\t_\tNOUN\t_\t_\t1\tobj\t_\tSpaceAfter=No\n\n"
    )
    plain = Doc(nlp.vocab, words=["a", "b"])
    assert [line.split("\t")[6:8] for line in docs_to_conllu([plain]).splitlines()[2:4]] == [["_", "_"], ["_", "_"]]
    # write_conllu is atomic: nothing is written if a Doc cannot be rendered.
    target = tmp_path / "out.conllu"
    bad = Doc(nlp.vocab, words=["a\tb"])
    with pytest.raises(ValueError):
        write_conllu([doc, bad], target)
    assert not target.exists() and list(tmp_path.iterdir()) == []
    write_conllu([doc], target)
    assert target.read_text(encoding="utf-8") == out


def test_enhanced_deps_can_be_dropped(tmp_path, nlp):
    docs = list(read_conllu(write(tmp_path, "mwt.conllu", MWT_SENT), nlp.vocab))
    full = docs_to_conllu(docs).splitlines()
    assert any(line.startswith("4.1\t") for line in full)
    lines = [line for line in docs_to_conllu(docs, enhanced_deps=False).splitlines() if line]
    # The enhanced graph goes as a whole: every DEPS is "_" and the empty
    # node (which only exists in that graph) is dropped; the rest stays.
    assert lines == [
        line if line.startswith(("#", "2-3\t")) else "\t".join(line.split("\t")[:8] + ["_", line.split("\t")[9]])
        for line in full if line and not line.startswith("4.1\t")
    ]
    assert [line.split("\t")[0] for line in lines[1:]] == ["1", "2-3", "2", "3", "4", "5"]


# ---------------------------------------------------------------------------
# The corpus reader
# ---------------------------------------------------------------------------


def test_gold_annotations_corpus(tmp_path):
    nlp = spacy.blank("en")
    path = write(tmp_path, "tiny.conllu", GOOD + MWT_SENT + GOOD)
    docs = list(read_conllu(path, nlp.vocab, n_sents=2))
    DocBin(store_user_data=True, docs=docs).to_disk(tmp_path / "tiny.spacy")
    config = {
        "corpus": {
            "@readers": "spacy_mstparse.GoldAnnotationsCorpus.v1",
            "path": str(tmp_path / "tiny.spacy"),
            "copy_tags": True,
            "copy_sents": True,
        }
    }
    corpus = spacy.registry.resolve(config)["corpus"]
    examples = list(corpus(nlp))
    assert len(examples) == 2
    for eg in examples:
        pred, ref = eg.predicted, eg.reference
        assert [t.text for t in pred] == [t.text for t in ref]
        assert [t.pos_ for t in pred] == [t.pos_ for t in ref]
        assert [t.tag_ for t in pred] == [t.tag_ for t in ref]
        assert [str(t.morph) for t in pred] == [str(t.morph) for t in ref]
        assert [t.lemma_ for t in pred] == [t.lemma_ for t in ref]
        assert [t.is_sent_start for t in pred] == [t.is_sent_start for t in ref]
        assert all(t.is_sent_start in (True, False) for t in pred)
        assert not pred.has_annotation("DEP") and all(t.dep_ == "" for t in pred)
        assert ref.has_annotation("DEP")
    assert [t.is_sent_start for t in examples[0].predicted] == [True, False, False, False] + [True] + [False] * 4

    reader = spacy.registry.readers.get("spacy_mstparse.GoldAnnotationsCorpus.v1")
    bare = list(reader(tmp_path / "tiny.spacy", copy_tags=False, copy_sents=False, limit=1)(nlp))
    assert len(bare) == 1
    assert not bare[0].predicted.has_annotation("TAG")
    assert not bare[0].predicted.has_annotation("SENT_START")


def test_gold_annotations_corpus_cache(tmp_path, monkeypatch):
    """cache = true: the first complete pass is read from disk, later passes
    with the same vocab give the same examples; a pass stopped early is not
    kept, another vocab reads again, an augmenter is refused in one line."""
    from confection import ConfigValidationError
    from spacy.training.augment import create_lower_casing_augmenter

    from spacy_mstparse.corpus import readers

    nlp = spacy.blank("en")
    path = write(tmp_path, "tiny.conllu", GOOD + MWT_SENT + GOOD)
    DocBin(store_user_data=True, docs=list(read_conllu(path, nlp.vocab))).to_disk(tmp_path / "c.spacy")
    reads = []
    real = readers.read_docbin
    monkeypatch.setattr(readers, "read_docbin", lambda *a: reads.append(1) or real(*a))
    reader = spacy.registry.readers.get("spacy_mstparse.GoldAnnotationsCorpus.v1")
    corpus = reader(tmp_path / "c.spacy", cache=True)
    next(iter(corpus(nlp)))                     # stopped early: nothing kept
    first = list(corpus(nlp))
    assert len(reads) == 2 and len(first) == 3
    again = list(corpus(nlp))
    assert len(reads) == 2 and all(a is b for a, b in zip(first, again))
    other = spacy.blank("en")
    assert [eg.reference.text for eg in corpus(other)] == [eg.reference.text for eg in first]
    assert len(reads) == 3
    plain = reader(tmp_path / "c.spacy")       # cache = false (the default): every pass reads
    list(plain(nlp)), list(plain(nlp))
    assert len(reads) == 5
    with pytest.raises(ConfigValidationError, match="augmenter"):
        reader(tmp_path / "c.spacy", cache=True, augmenter=create_lower_casing_augmenter(0.5))


def test_gold_annotations_corpus_tokenizer_tokens(tmp_path):
    nlp = spacy.blank("en")
    doc = Doc(
        nlp.vocab, words=["New", "York", "is", "big", ".", "Yes", "."], spaces=[False, True, True, False, True, False, False],
        pos=["ADJ", "PROPN", "AUX", "ADJ", "PUNCT", "INTJ", "PUNCT"], heads=[1, 2, 2, 2, 2, 5, 5],
        deps=["compound", "nsubj", "ROOT", "acomp", "punct", "ROOT", "punct"],
    )
    DocBin(docs=[doc]).to_disk(tmp_path / "t.spacy")
    reader = spacy.registry.readers.get("spacy_mstparse.GoldAnnotationsCorpus.v1")
    (eg,) = list(reader(tmp_path / "t.spacy", gold_tokens=False)(nlp))
    assert [t.text for t in eg.predicted] == ["NewYork", "is", "big", ".", "Yes", "."]
    # "NewYork" matches two reference tokens with different tags: no tag.
    assert [t.pos_ for t in eg.predicted] == ["", "AUX", "ADJ", "PUNCT", "INTJ", "PUNCT"]
    assert [t.is_sent_start for t in eg.predicted] == [True, False, False, False, True, False]
    (eg,) = list(reader(tmp_path / "t.spacy")(nlp))
    assert [t.text for t in eg.predicted] == [t.text for t in doc]

    # with gold tokens the text is never tokenized (the words are the reference's)
    def no_tokenizer(text):
        raise AssertionError(f"tokenized {text!r}")

    nlp.tokenizer = no_tokenizer
    (eg,) = list(reader(tmp_path / "t.spacy")(nlp))
    assert [t.text for t in eg.predicted] == [t.text for t in doc]
    assert [t.pos_ for t in eg.predicted] == [t.pos_ for t in doc]
    with pytest.raises(AssertionError, match="tokenized"):
        list(reader(tmp_path / "t.spacy", gold_tokens=False)(nlp))

    # an augmenter changes the reference: the predicted doc follows it, tagged
    from spacy.training.augment import create_lower_casing_augmenter

    nlp = spacy.blank("en")
    lower = create_lower_casing_augmenter(level=1.0)
    (eg,) = list(reader(tmp_path / "t.spacy", augmenter=lower)(nlp))
    assert [t.text for t in eg.predicted] == [t.text.lower() for t in doc]
    assert [t.text for t in eg.reference] == [t.text.lower() for t in doc]
    assert [t.pos_ for t in eg.predicted] == [t.pos_ for t in doc]
    assert not eg.predicted.has_annotation("DEP")


# ---------------------------------------------------------------------------
# DEPS, CoNLL-X vs CoNLL-U, empty input, tree checks in the writer
# ---------------------------------------------------------------------------


def with_deps(deps, misc="_"):
    """GOOD's second sentence with the first word's DEPS (and MISC) set."""
    cols = GOOD[2].split("\t")
    cols[8], cols[9] = deps, misc
    return GOOD + ["\t".join(cols)] + GOOD[3:]


@pytest.mark.parametrize("deps", ["0:root", "2:det", "2:det|8.1:nsubj", "3:obl:on", "2:det|3:conj:and|10.12:x"])
def test_deps_valid(deps, tmp_path, nlp):
    path = write(tmp_path, "ok.conllu", with_deps(deps))
    docs = list(read_conllu(path, nlp.vocab))
    assert docs[1].user_data[USER_DATA_KEY]["sents"][0]["deps"][0] == deps


@pytest.mark.parametrize("deps,bad", [
    ("2", "2"), ("det", "det"), ("2:", "2:"), (":det", ":det"), ("x:det", "x:det"),
    ("2:det|", ""), ("2:det||3:x", ""), ("2.0:det", "2.0:det"), ("-1:det", "-1:det"),
    ("02:det", "02:det"), ("2:de t", "2:de t"),
])
def test_deps_malformed(deps, bad, tmp_path, nlp):
    path = write(tmp_path, "bad.conllu", with_deps(deps))
    with pytest.raises(ConllFormatError) as info:
        list(read_conllu(path, nlp.vocab))
    message = str(info.value)
    # Line 8: GOOD is lines 1-7.
    assert message.startswith(f"{path}:8: DEPS '{deps}': '{bad}' is not head:deprel"), message
    assert ("use --format conllx" in message) == (deps == "2"), message


def test_conllx_read_as_conllu_gets_a_hint(tmp_path, nlp):
    # A CoNLL-X file with PHEAD/PDEPREL filled: column 9 is an integer.
    lines = [
        "1\tThe\tthe\tDET\tDT\t_\t2\tdet\t2\tdet",
        "2\tcat\tcat\tNOUN\tNN\t_\t3\tnsubj\t3\tnsubj",
        "3\tsat\tsit\tVERB\tVBD\t_\t0\tROOT\t0\tROOT",
    ]
    path = write(tmp_path, "x.conll", lines)
    with pytest.raises(ConllFormatError) as info:
        list(read_conllu(path, nlp.vocab))
    assert str(info.value).startswith(f"{path}:1: DEPS '2'")
    assert "this looks like CoNLL-X" in str(info.value) and "--format conllx" in str(info.value)
    assert guess_format(path) == "conllx"
    assert [t.dep_ for t in next(read_conllx(path, nlp.vocab))] == ["det", "nsubj", "ROOT"]


@pytest.mark.parametrize("lines,line_no,problem", [
    (["1-2\tcannot\t_\t_\t_\t_\t_\t_\t_\t_", "1\tcan\tcan\tAUX\tMD\t_\t0\troot\t_\t_",
      "2\tnot\tnot\tPART\tRB\t_\t1\tadvmod\t_\t_"], 1, "ID '1-2' is not an integer"),
    (MWT_SENT, 2, "PHEAD '4:nsubj' is not an integer"),
    (GOOD[:2] + [GOOD[2].replace("\t_\t_", "\t2:det\t_")] + GOOD[3:], 3, "PHEAD '2:det' is not an integer"),
    (GOOD, 5, "PDEPREL 'SpaceAfter=No' given but PHEAD is '_'"),
])
def test_conllu_read_as_conllx_gets_a_hint(lines, line_no, problem, tmp_path, nlp):
    path = write(tmp_path, "u.conllu", lines)
    with pytest.raises(ConllFormatError) as info:
        list(read_conllx(path, nlp.vocab))
    message = str(info.value)
    assert message.startswith(f"{path}:{line_no}: {problem}"), message
    assert message.endswith("(this looks like CoNLL-U: use --format conllu)"), message
    assert guess_format(path) == "conllu"


def test_guess_format(tmp_path):
    assert guess_format(SAMPLE / "dev.conllu") == "conllu"
    plain = write(tmp_path, "plain.txt", ["The cat sat.", "A dog ran."])
    assert guess_format(plain) is None
    bare = write(tmp_path, "bare.txt", ["1\tHi\t_\tINTJ\t_\t_\t0\troot\t_\t_"])
    assert guess_format(bare) == "conll"
    assert guess_format(write(tmp_path, "empty.txt", [""])) is None
    assert guess_format(tmp_path / "missing.txt") is None


def test_empty_input_is_an_error_for_read_conll_docs(tmp_path, nlp):
    from spacy_mstparse.corpus.conll import read_conll_docs

    for name, text in [("empty.conllu", ""), ("blank.conllu", "\n \n\t\n")]:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        with pytest.raises(EmptyInputError, match=f"^{path}: no sentences"):
            read_conll_docs(path, nlp.vocab)
    comments = write(tmp_path, "comments.conllu", ["# newdoc", "# sent_id = 1", ""])
    with pytest.raises(ConllFormatError, match=r"comments\.conllu:1: comment lines not followed by a sentence"):
        read_conll_docs(comments, nlp.vocab)


def tree_doc(nlp, heads, deps, user_data=None):
    words = [f"w{i}" for i in range(len(heads))]
    doc = Doc(nlp.vocab, words=words, heads=heads, deps=deps, sent_starts=[True] + [False] * (len(words) - 1))
    if user_data:
        doc.user_data.update(user_data)
    return doc


def test_writer_checks_trees(tmp_path, nlp):
    good = tree_doc(nlp, [1, 1, 1], ["det", "ROOT", "punct"])
    assert docs_to_conllu([good]).count("\t0\troot\t") == 1
    # Two roots in one (stored) sentence, as a parser that splits a long
    # sentence into chunks would give: the sentence is named by its sent_id.
    stored = {USER_DATA_KEY: {"format": "conllu", "sents": [
        {"n_words": 4, "comments": ["# sent_id = long-1"], "mwts": [], "empty": [], "deps": None, "misc": None}]}}
    two_roots = Doc(nlp.vocab, words=["a", "b", "c", "d"], heads=[0, 0, 2, 2], deps=["ROOT", "dep", "ROOT", "dep"],
                    user_data=stored)
    target = tmp_path / "out.conllu"
    target.write_text("old\n", encoding="utf-8")
    with pytest.raises(InvalidTreeError) as info:
        write_conllu([good, two_roots], target)
    assert str(info.value) == (
        "sentence 2 (sent_id = long-1): 'a b c d': 2 words are attached to the root (1, 3); "
        "a CoNLL-U sentence is one tree with one root"
    )
    assert target.read_text(encoding="utf-8") == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.conllu"]
    # A partly labelled sentence.
    partial = tree_doc(nlp, [1, 1, 1], ["det", "ROOT", ""])
    with pytest.raises(InvalidTreeError, match=r"^sentence 1: 'w0 w1 w2': words 3 have no head and label"):
        docs_to_conllu([partial])
    # A head outside its sentence.
    cross = Doc(nlp.vocab, words=["a", "b", "c"], heads=[0, 0, 0], deps=["ROOT", "dep", "dep"],
                user_data={USER_DATA_KEY: {"format": "conllu", "sents": [
                    {"n_words": 2, "comments": [], "mwts": [], "empty": [], "deps": None, "misc": None},
                    {"n_words": 1, "comments": [], "mwts": [], "empty": [], "deps": None, "misc": None}]}})
    with pytest.raises(InvalidTreeError, match=r"^sentence 2: 'c': word 1 \('c'\) has its head outside the sentence"):
        docs_to_conllu([cross])
    # Unparsed sentences are fine.
    assert "\t_\t_\t_\t" in docs_to_conllu([Doc(nlp.vocab, words=["a", "b"])])
