"""Plain text in ``parse`` and ``show``: each input line is a document whose
CoNLL-U says which line it is (``# newdoc id = lineN``, sentences
``lineN-1``, ``lineN-2``, ... each with its ``# text``), valid for UD's
validator; ``show`` parses plain text as ``parse`` does."""
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
from spacy.language import Language
from spacy.training import Example

from spacy_mstparse.corpus.conll import read_conllu
from spacy_mstparse.corpus.readers import gold_annotated_doc

from conftest import SAMPLE, run_cli

UD_VALIDATE = Path(__file__).resolve().parents[2] / "shared" / "tools" / "ud" / "validate.py"
TEXT = ("The cat sat on the mat. It was happy.\n"
        "\n"
        "  Dogs   bark at\tnight.\n"
        "She reads books\n"
        "\n")
LINES = {1: "The cat sat on the mat. It was happy.", 3: "Dogs bark at night.",
         4: "She reads books"}


@Language.factory("test_text_constant_pos", assigns=["token.pos"])
def make_constant_pos(nlp, name):
    """A tagger stand-in: UPOS NOUN for every word."""
    def tag(doc):
        for token in doc:
            token.pos_ = "NOUN"
        return doc
    return tag


@pytest.fixture(scope="module")
def text_pipeline(tmp_path_factory):
    """A small mst_parser reading UPOS only, after the stand-in tagger."""
    nlp = spacy.blank("en")
    parser = nlp.add_pipe("mst_parser", config={"features": {
        "@mst_features": "spacy_mstparse.GraphFeatures.v2", "n_buckets": 2**14,
        "tag_columns": "upos", "use_morph": False, "lemma": False}})
    docs = list(read_conllu(SAMPLE / "train.conllu", nlp.vocab))[:60]
    examples = [Example(gold_annotated_doc(Example(d, d)), d) for d in docs]
    nlp.initialize(lambda: examples)
    parser.update(examples)
    nlp.add_pipe("test_text_constant_pos", before="mst_parser")
    path = tmp_path_factory.mktemp("text") / "pipeline"
    nlp.to_disk(path)
    return path


def comments(block: str, key: str):
    return [line.split(" = ", 1)[1] for line in block.splitlines() if line.startswith(f"# {key} = ")]


def test_parse_output_maps_to_the_input_lines(text_pipeline, tmp_path):
    source, out = tmp_path / "in.txt", tmp_path / "out.conllu"
    source.write_text(TEXT, encoding="utf-8")
    result = run_cli("parse", text_pipeline, source, out)
    assert result.exit_code == 0, result.output
    blocks = [b for b in out.read_text(encoding="utf-8").split("\n\n") if b.strip()]
    by_doc = {}
    for block in blocks:
        (sent_id,), (text,) = comments(block, "sent_id"), comments(block, "text")
        newdoc = comments(block, "newdoc id")
        if newdoc:
            by_doc[newdoc[0]] = []
            current = newdoc[0]
        assert sent_id == f"{current}-{len(by_doc[current]) + 1}"
        words = [line.split("\t")[1] for line in block.splitlines() if line[0].isdigit()]
        assert text.replace(" ", "") == "".join(words)
        by_doc[current].append(text)
    # one document per non-empty input line, named by its line number; its
    # sentences' texts make up the line
    assert list(by_doc) == [f"line{n}" for n in LINES]
    for n, line in LINES.items():
        assert " ".join(by_doc[f"line{n}"]) == line
    assert len(by_doc["line1"]) == 2
    if UD_VALIDATE.is_file():
        check = subprocess.run([sys.executable, str(UD_VALIDATE), "--lang", "en", "--level", "2",
                                str(out)], capture_output=True, text=True, timeout=300)
        assert check.returncode == 0, check.stdout + check.stderr


def test_show_parses_plain_text(text_pipeline, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text(TEXT, encoding="utf-8")
    result = run_cli("show", text_pipeline, source, "-n", 3)
    assert result.exit_code == 0, result.output
    shown = [line for line in result.stdout.splitlines() if line and not line.startswith(" ")]
    assert shown == ["The cat sat on the mat.", "It was happy.", "Dogs bark at night."]
    assert result.stdout.count("-> ROOT") == 3
    # the parses are the ones parse writes
    out = tmp_path / "out.conllu"
    run_cli("parse", text_pipeline, source, out)
    first = next(read_conllu(out, spacy.blank("en").vocab))
    rows = [line.split() for line in result.stdout.splitlines()[1:len(first) + 1]]
    heads = [0 if row[4] == "ROOT" else int(row[4].split(":")[0]) for row in rows]
    assert heads == [0 if t.head.i == t.i else t.head.i + 1 for t in first]
    # gold tags: plain text has none, said in one line
    result = run_cli("show", text_pipeline, source, "--gold-tags")
    assert result.exit_code == 1
    assert "gold tags need a CoNLL-U / CoNLL-X input" in result.stderr
