"""Real input for the command line: an output path that is the input, empty
files, CoNLL-X vs CoNLL-U, parse output checked by UD's own validator, the
CoNLL 2018 scores against the shared task's scorer, where the parser's tags
come from, and invalid trees. UD's tools are run from ../shared/tools/ud as
subprocesses (never imported or copied)."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
from spacy.language import Language

from spacy_mstparse.corpus.conll import read_conllu
from spacy_mstparse.scoring import conll18_scores

from conftest import run_cli

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
UD_TOOLS = SHARED / "tools" / "ud"
EWT_DEV = SHARED / "data" / "ud" / "en_ewt-ud-dev.conllu"
needs_ud_tools = pytest.mark.skipif(
    not (UD_TOOLS / "validate.py").is_file() or not (UD_TOOLS / "eval.py").is_file(),
    reason=f"UD's validate.py / eval.py not found in {UD_TOOLS} (../shared/tools/ud)",
)



run = run_cli


def assert_user_error(result, *needles):
    """Exit 1, one line on stderr holding every needle, no traceback."""
    assert result.exit_code == 1, (result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert "Traceback" not in result.output
    errors = [line for line in lines if not line.startswith("Warning:")]
    assert len(errors) == 1, result.stderr
    for needle in needles:
        assert needle in errors[0], (needle, errors[0])
    return errors[0]


def first_sentences(path, n):
    blocks = Path(path).read_text(encoding="utf-8").split("\n\n")
    return "\n\n".join(blocks[:n]) + "\n\n"


@pytest.fixture(scope="module")
def small_dev(sample_dev, tmp_path_factory):
    path = tmp_path_factory.mktemp("small") / "small.conllu"
    path.write_text(first_sentences(sample_dev, 30), encoding="utf-8")
    return path


# A tagger and morphologizer stand-in that predicts UPOS "X" / XPOS "XX" /
# FEATS "Foo=Bar" for every word: a component that assigns what the default
# mst_parser reads of the English sample, whose output is easy to tell from
# the file's tags.
@Language.factory("test_constant_tagger", assigns=["token.pos", "token.tag", "token.morph"])
def make_constant_tagger(nlp, name):
    def tag(doc):
        for token in doc:
            token.pos_ = "X"
            token.tag_ = "XX"
            token.set_morph("Foo=Bar")
        return doc

    return tag


@pytest.fixture(scope="module")
def tagged_pipeline(trained_pipeline, tmp_path_factory):
    nlp = spacy.load(trained_pipeline)
    nlp.add_pipe("test_constant_tagger", before="mst_parser")
    path = tmp_path_factory.mktemp("tagged") / "tagged"
    nlp.to_disk(path)
    return path


@pytest.fixture(scope="module")
def chunked_pipeline(trained_pipeline, tmp_path_factory):
    """The trained parser saved with max_sentence_length = 5: a longer
    sentence is decoded in chunks, which must still come out as one tree."""
    nlp = spacy.load(trained_pipeline,
                     config={"components": {"mst_parser": {"max_sentence_length": 5}}})
    path = tmp_path_factory.mktemp("chunked") / "chunked"
    nlp.to_disk(path)
    assert spacy.load(path).get_pipe("mst_parser").cfg["max_sentence_length"] == 5
    return path


# ---------------------------------------------------------------------------
# 1. The output is the input
# ---------------------------------------------------------------------------


def output_aliases(path):
    """Other names of ``path``: itself, a relative path with '..', a symlink
    and a hard link."""
    folder = path.parent
    (folder / "sub").mkdir(exist_ok=True)
    symlink = folder / "link.conllu"
    if not symlink.exists():
        symlink.symlink_to(path.name)
    hardlink = folder / "hard.conllu"
    if not hardlink.exists():
        os.link(path, hardlink)
    return {
        "same": path,
        "relative": Path("sub") / ".." / path.name,
        "symlink": symlink,
        "hardlink": hardlink,
    }


@pytest.mark.parametrize("alias", ["same", "relative", "symlink", "hardlink"])
@pytest.mark.parametrize("command", ["convert", "parse", "evaluate", "show"])
def test_output_that_is_the_input_is_refused(command, alias, small_dev, trained_pipeline, tmp_path, monkeypatch):
    source = tmp_path / "in.conllu"
    source.write_bytes(small_dev.read_bytes())
    before = source.read_bytes()
    monkeypatch.chdir(tmp_path)
    out = output_aliases(source)[alias]
    args = {
        "convert": ["convert", source, out],
        "parse": ["parse", trained_pipeline, source, out, "--gold-tags"],
        "evaluate": ["evaluate", trained_pipeline, source, "--gold-tags", "--output", out],
        "show": ["show", trained_pipeline, source, "--svg", out, "--gold-tags"],
    }[command]
    result = run(*args)
    assert_user_error(result, f"Refusing to write {out}", f"it is the input file {source}")
    assert source.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hard.conllu", "in.conllu", "link.conllu", "sub"]


def test_output_beside_the_input_is_fine(small_dev, tmp_path, monkeypatch):
    source = tmp_path / "in.conllu"
    source.write_bytes(small_dev.read_bytes())
    monkeypatch.chdir(tmp_path)
    result = run("convert", "in.conllu", Path("sub") / ".." / "in.spacy")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "in.spacy").is_file()


# ---------------------------------------------------------------------------
# 2. Empty input
# ---------------------------------------------------------------------------

EMPTY_FILES = {"empty": "", "blank": "\n\n   \n\t\n"}


@pytest.mark.parametrize("kind", sorted(EMPTY_FILES))
@pytest.mark.parametrize("command", ["convert", "parse", "parse-text", "evaluate", "show"])
def test_empty_input_is_refused(command, kind, trained_pipeline, tmp_path):
    source = tmp_path / ("in.txt" if command == "parse-text" else "in.conllu")
    source.write_text(EMPTY_FILES[kind], encoding="utf-8")
    out = tmp_path / "out" / "result"
    args = {
        "convert": ["convert", source, out],
        "parse": ["parse", trained_pipeline, source, out, "--gold-tags"],
        "parse-text": ["parse", trained_pipeline, source, out],
        "evaluate": ["evaluate", trained_pipeline, source, "--output", out],
        "show": ["show", trained_pipeline, source, "--svg", out],
    }[command]
    result = run(*args)
    what = "text" if command == "parse-text" else "sentences"
    assert_user_error(result, f"{source}: no {what}", "empty")
    assert not out.parent.exists()
    assert result.stdout == ""


def test_convert_comments_only(tmp_path):
    source = tmp_path / "comments.conllu"
    source.write_text("# newdoc id = x\n# sent_id = 1\n\n", encoding="utf-8")
    result = run("convert", source, tmp_path / "out.spacy")
    assert_user_error(result, f"{source}:1: comment lines not followed by a sentence")
    assert not (tmp_path / "out.spacy").exists()


# ---------------------------------------------------------------------------
# 3. CoNLL-X vs CoNLL-U on the command line
# ---------------------------------------------------------------------------

CONLLX = (
    "1\tThe\tthe\tDET\tDT\t_\t2\tdet\t2\tdet\n"
    "2\tcat\tcat\tNOUN\tNN\t_\t3\tnsubj\t3\tnsubj\n"
    "3\tsat\tsit\tVERB\tVBD\t_\t0\troot\t0\troot\n\n"
)


def test_conllx_given_as_conllu(tmp_path):
    source = tmp_path / "x.conll"
    source.write_text(CONLLX, encoding="utf-8")
    result = run("convert", source, tmp_path / "x.spacy", "--format", "conllu")
    assert_user_error(result, f"{source}:1: DEPS '2'", "looks like CoNLL-X", "use --format conllx")
    assert not (tmp_path / "x.spacy").exists()
    assert run("convert", source, tmp_path / "x.spacy", "--format", "conllx").exit_code == 0


def test_conllu_given_as_conllx(small_dev, trained_pipeline, tmp_path):
    result = run("convert", small_dev, tmp_path / "u.spacy", "--format", "conllx")
    assert_user_error(result, f"{small_dev}:", "looks like CoNLL-U", "use --format conllu")
    # parse --format auto takes .conll as CoNLL-X.
    renamed = tmp_path / "u.conll"
    renamed.write_bytes(small_dev.read_bytes())
    result = run("parse", trained_pipeline, renamed, tmp_path / "out.conllu", "--gold-tags")
    assert_user_error(result, f"{renamed}:", "looks like CoNLL-U", "use --format conllu")
    assert not (tmp_path / "out.conllu").exists()


@pytest.mark.parametrize("content,hint", [("u", "CoNLL-U"), ("x", "CoNLL-X")])
def test_conll_named_txt(content, hint, small_dev, trained_pipeline, tmp_path):
    source = tmp_path / "treebank.txt"
    source.write_text(small_dev.read_text(encoding="utf-8") if content == "u" else CONLLX, encoding="utf-8")
    out = tmp_path / "out.conllu"
    result = run("parse", trained_pipeline, source, out)
    fmt = "conllu" if content == "u" else "conllx"
    assert_user_error(result, f"{source} looks like {hint}", f"--format {fmt}")
    assert not out.exists()
    result = run("parse", trained_pipeline, source, out, "--format", fmt, "--gold-tags")
    assert result.exit_code == 0, result.output


# ---------------------------------------------------------------------------
# 4. What parse writes passes UD's validator
# ---------------------------------------------------------------------------


def blocks_of(path):
    return [b for b in Path(path).read_text(encoding="utf-8").split("\n\n") if b.strip()]


def validate(path):
    return subprocess.run(
        [sys.executable, str(UD_TOOLS / "validate.py"), "--lang", "en", "--level", "2",
         "--no-warnings", str(path)],
        capture_output=True, text=True, timeout=300,
    )


@needs_ud_tools
@pytest.mark.skipif(not EWT_DEV.is_file(), reason=f"{EWT_DEV} (../shared/data/ud) not found")
def test_parse_output_passes_ud_validator(trained_pipeline, tmp_path):
    # Every EWT dev sentence with an empty node (enhanced graph), and some
    # with multiword tokens.
    blocks = blocks_of(EWT_DEV)
    empty = [b for b in blocks if re.search(r"^[0-9]+\.[0-9]+\t", b, re.M)]
    mwt = [b for b in blocks if re.search(r"^[0-9]+-[0-9]+\t", b, re.M)][:20]
    assert empty and mwt
    source = tmp_path / "in.conllu"
    source.write_text("\n\n".join(empty + mwt) + "\n\n", encoding="utf-8")
    assert validate(source).returncode == 0
    out = tmp_path / "out.conllu"
    result = run("parse", trained_pipeline, source, out)
    assert result.exit_code == 0, result.output
    check = validate(out)
    assert check.returncode == 0, check.stderr
    assert "PASSED" in check.stderr
    # Comments, multiword tokens and the words' own columns survive; the
    # enhanced graph (DEPS, empty nodes) is left out as a whole.
    written = blocks_of(out)
    assert len(written) == len(empty) + len(mwt)
    for src, got in zip(empty + mwt, written):
        src_lines, got_lines = src.splitlines(), got.splitlines()
        assert [l for l in got_lines if l.startswith("#")] == [l for l in src_lines if l.startswith("#")]
        assert [l for l in got_lines if re.match(r"[0-9]+-", l)] == [l for l in src_lines if re.match(r"[0-9]+-", l)]
        src_words = [l.split("\t") for l in src_lines if re.match(r"[0-9]+\t", l)]
        got_words = [l.split("\t") for l in got_lines if re.match(r"[0-9]+\t", l)]
        # ID, FORM, UPOS, XPOS (taken from the file: no tagger) and MISC.
        keep = [0, 1, 3, 4, 9]
        assert [[w[i] for i in keep] for w in got_words] == [[w[i] for i in keep] for w in src_words]
        assert all(w[8] == "_" for w in got_words)
        assert not any(re.match(r"[0-9]+\.", l) for l in got_lines)


@needs_ud_tools
def test_parse_sample_passes_ud_validator(trained_pipeline, sample_dev, tmp_path):
    out = tmp_path / "out.conllu"
    result = run("parse", trained_pipeline, sample_dev, out, "--gold-tags")
    assert result.exit_code == 0, result.output
    check = validate(out)
    assert check.returncode == 0, check.stderr


# ---------------------------------------------------------------------------
# 5. CoNLL 2018 scores
# ---------------------------------------------------------------------------


def test_conll18_scores_by_hand():
    # Heads absolute (-1 = root). Word 1: right head, subtype differs
    # (nmod:poss vs nmod): wrong for full labels, right for CoNLL 2018.
    # Word 2: wrong head. Word 3 (punct): right. Word 0: the root, which the
    # parser called "ROOT".
    gold_heads, gold_labels = [-1, 0, 0, 0], ["root", "nmod:poss", "obj", "punct"]
    pred_heads, pred_labels = [-1, 0, 1, 0], ["ROOT", "nmod", "obj", "punct"]
    assert conll18_scores(gold_heads, gold_labels, pred_heads, pred_labels) == {"uas": 75.0, "las": 75.0}
    pred_labels[1] = "amod"
    assert conll18_scores(gold_heads, gold_labels, pred_heads, pred_labels) == {"uas": 75.0, "las": 50.0}


def eval_py_scores(gold, system):
    proc = subprocess.run(
        [sys.executable, str(UD_TOOLS / "eval.py"), "-v", str(gold), str(system)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    scores = {}
    for line in proc.stdout.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) >= 4 and cells[0] in ("UAS", "LAS"):
            scores[cells[0]] = cells[3]  # F1
    return scores


@needs_ud_tools
def test_conll18_scores_match_eval_py(trained_pipeline, sample_dev, tmp_path):
    metrics_path = tmp_path / "metrics.json"
    result = run("evaluate", trained_pipeline, sample_dev, "--gold-tags", "--output", metrics_path)
    assert result.exit_code == 0, result.output
    assert "CoNLL 2018 LAS (all words, universal labels)" in result.stdout
    metrics = json.loads(metrics_path.read_text(encoding="utf-8"))
    out = tmp_path / "parsed.conllu"
    assert run("parse", trained_pipeline, sample_dev, out, "--gold-tags").exit_code == 0
    official = eval_py_scores(sample_dev, out)
    assert official["UAS"] == f"{metrics['conll18_uas']:.2f}"
    assert official["LAS"] == f"{metrics['conll18_las']:.2f}"
    # Universal relations only: never below the full-label LAS; every word
    # counts, as in uas_all.
    assert metrics["conll18_las"] >= metrics["las_all"]
    assert metrics["conll18_uas"] == pytest.approx(metrics["uas_all"])
    assert "universal" in metrics["conventions"]["conll18_las"]


# ---------------------------------------------------------------------------
# 6. Where the parser's tags come from
# ---------------------------------------------------------------------------


def heads_of(path):
    return [[(t.head.i, t.dep_) for t in doc] for doc in read_conllu(path, spacy.blank("en").vocab)]


def test_file_tags_used_when_no_component_predicts_them(trained_pipeline, small_dev, tmp_path):
    plain, gold = tmp_path / "plain.conllu", tmp_path / "gold.conllu"
    result = run("parse", trained_pipeline, small_dev, plain)
    assert result.exit_code == 0, result.output
    warning = [line for line in result.stderr.splitlines() if line.startswith("Warning:")]
    assert len(warning) == 1, result.stderr
    # the default mst_parser reads what the English sample gives: UPOS, XPOS,
    # FEATS (no lemmas: they differ from the words too rarely)
    for needle in ("mst_parser reads UPOS, XPOS, FEATS",
                   f"using the UPOS, XPOS, FEATS column(s) of {small_dev}",
                   "--gold-tags", "configs/mst_parser_tagged.cfg"):
        assert needle in warning[0]
    assert run("parse", trained_pipeline, small_dev, gold, "--gold-tags").exit_code == 0
    # The parser read the file's UPOS/XPOS/FEATS: the same trees as with --gold-tags.
    assert heads_of(plain) == heads_of(gold)

    metrics_path = tmp_path / "m.json"
    result = run("evaluate", trained_pipeline, small_dev, "--output", metrics_path)
    assert result.exit_code == 0, result.output
    assert "predicted tags" not in result.stdout
    assert "UPOS, XPOS, FEATS from the file" in result.stdout
    metrics = json.loads(metrics_path.read_text(encoding="utf-8"))
    assert metrics["tags_from_file"] == ["UPOS", "XPOS", "FEATS"] and metrics["gold_tags"] is False
    result = run("evaluate", trained_pipeline, small_dev, "--gold-tags", "--output", metrics_path)
    assert "Warning" not in result.stderr
    assert json.loads(metrics_path.read_text(encoding="utf-8"))["uas"] == metrics["uas"]


def test_no_tags_anywhere_stops(trained_pipeline, small_dev, tmp_path):
    text = tmp_path / "in.txt"
    text.write_text("The cat sat on the mat.\n", encoding="utf-8")
    out = tmp_path / "out.conllu"
    result = run("parse", trained_pipeline, text, out)
    assert_user_error(result, "mst_parser reads UPOS, XPOS", "plain text", "--gold-tags",
                      "configs/mst_parser_tagged.cfg")
    assert not out.exists()
    # A CoNLL-U file whose UPOS/XPOS columns are empty.
    lines = []
    for line in small_dev.read_text(encoding="utf-8").splitlines():
        cols = line.split("\t")
        if len(cols) == 10:
            cols[3] = cols[4] = "_"
        lines.append("\t".join(cols))
    untagged = tmp_path / "untagged.conllu"
    untagged.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for args in (["parse", trained_pipeline, untagged, out], ["parse", trained_pipeline, untagged, out, "--gold-tags"],
                 ["evaluate", trained_pipeline, untagged, "--output", out], ["show", trained_pipeline, untagged]):
        result = run(*args)
        assert_user_error(result, f"{untagged} has no UPOS, XPOS", "configs/mst_parser_tagged.cfg")
        assert not out.exists()


def test_pipeline_with_a_tagger_uses_its_tags(tagged_pipeline, small_dev, tmp_path):
    out = tmp_path / "out.conllu"
    result = run("parse", tagged_pipeline, small_dev, out)
    assert result.exit_code == 0, result.output
    assert "Warning" not in result.stderr
    docs = list(read_conllu(out, spacy.blank("en").vocab))
    assert {t.pos_ for d in docs for t in d} == {"X"} and {t.tag_ for d in docs for t in d} == {"XX"}
    # Plain text goes through the whole pipeline, tagger included.
    text = tmp_path / "input.txt"
    text.write_text("The cat sat on the mat.\n\n  I like\tgreen   eggs and ham!\nHello\n", encoding="utf-8")
    out = tmp_path / "text.conllu"
    result = run("parse", tagged_pipeline, text, out)
    assert result.exit_code == 0, result.output
    assert "(text): 3 docs" in result.stdout
    sents = list(read_conllu(out, spacy.blank("en").vocab))
    assert [[t.text for t in s] for s in sents] == [
        ["The", "cat", "sat", "on", "the", "mat", "."],
        ["I", "like", "green", "eggs", "and", "ham", "!"],
        ["Hello"],
    ]
    for doc in sents:
        assert sum(t.head.i == t.i for t in doc) == 1


# ---------------------------------------------------------------------------
# 8. An invalid tree from the parser is reported, not written
# ---------------------------------------------------------------------------


def test_sentences_decoded_in_chunks_are_written_as_one_tree(chunked_pipeline, sample_dev,
                                                             tmp_path):
    """Sentences longer than max_sentence_length come out as one tree with
    one root each (the chunk trees are joined), so the writer's tree check
    passes and every sentence of the input is written."""
    gold = list(read_conllu(sample_dev, spacy.blank("en").vocab))
    assert any(len(doc) > 5 for doc in gold)
    out = tmp_path / "out.conllu"
    result = run("parse", chunked_pipeline, sample_dev, out, "--gold-tags")
    assert result.exit_code == 0, result.stderr
    parsed = list(read_conllu(out, spacy.blank("en").vocab))
    assert [len(doc) for doc in parsed] == [len(doc) for doc in gold]
    for doc in parsed:
        assert sum(t.head.i == t.i for t in doc) == 1


# ---------------------------------------------------------------------------
# 7. The package step says how to install the pipeline with the plugin
# ---------------------------------------------------------------------------


def test_package_step_prints_how_to_install_both():
    from weasel.util import load_project_config, split_command

    config = load_project_config(REPO)
    variables = config["vars"]
    (package,) = [c for c in config["commands"] if c["name"] == "package"]
    printed = []
    for line in package["script"]:
        argv = split_command(line)
        if argv[:2] == ["python", "-c"]:
            proc = subprocess.run([sys.executable, "-c", argv[2]], capture_output=True, text=True, timeout=60)
            assert proc.returncode == 0, proc.stderr
            printed.append(proc.stdout)
    (text,) = printed
    name = f"{variables['lang']}_{variables['package_name']}-{variables['package_version']}"
    assert "python -m pip wheel --no-deps . -w packages/" in text
    assert f"python -m pip install packages/spacy_mstparse-*.whl packages/{name}/dist/{name}.tar.gz" in text
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "python -m pip wheel --no-deps . -w packages/" in readme
