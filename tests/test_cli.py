"""The ``evaluate`` and ``parse`` commands (and ``spacy_mstparse.evaluation``),
on a small pipeline trained by the ``trained_pipeline`` fixture."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
import spacy

from spacy_mstparse.corpus.conll import read_conllu
from spacy_mstparse.pipeline_input import make_input_docs

from conftest import run_cli

REPO = Path(__file__).resolve().parents[1]
METRIC_KEYS = {
    "uas", "las", "uas_all", "las_all", "conll18_uas", "conll18_las", "spacy_dep_uas", "spacy_dep_las",
    "sentences", "tokens", "tokens_per_second", "parser_seconds", "gold_tags",
    "model", "gold",
}



run = run_cli


def conllu_words(path):
    """[(form, head, deprel)] per sentence, read independently of the
    project's reader (integer ids only)."""
    sents, words = [], []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            if words:
                sents.append(words)
                words = []
        elif not line.startswith("#"):
            cols = line.split("\t")
            if cols[0].isdigit():
                words.append((cols[1], cols[6], cols[7]))
    if words:
        sents.append(words)
    return sents


def recompute(gold_path, pred_path):
    """(UAS without punct, UAS with punct) of the predicted file."""
    gold, pred = conllu_words(gold_path), conllu_words(pred_path)
    assert [[w[0] for w in s] for s in gold] == [[w[0] for w in s] for s in pred]
    n = n_all = ok = ok_all = 0
    for gold_sent, pred_sent in zip(gold, pred):
        for (_, g_head, g_dep), (_, p_head, _) in zip(gold_sent, pred_sent):
            n_all += 1
            ok_all += g_head == p_head
            if g_dep not in ("punct", "p"):
                n += 1
                ok += g_head == p_head
    return 100.0 * ok / n, 100.0 * ok_all / n_all


@pytest.fixture(scope="module")
def gold_metrics(trained_pipeline, sample_dev, tmp_path_factory):
    out = tmp_path_factory.mktemp("evaluate") / "new" / "dir" / "metrics.json"
    result = run("evaluate", trained_pipeline, sample_dev, "--gold-tags", "--output", out)
    assert result.exit_code == 0, result.output
    assert "UAS" in result.stdout
    return json.loads(out.read_text(encoding="utf-8"))


def test_evaluate_gold_tags_metrics(gold_metrics, trained_pipeline, sample_dev):
    m = gold_metrics
    assert METRIC_KEYS <= set(m)
    assert m["sentences"] == 200
    assert m["tokens"] == sum(len(s) for s in conllu_words(sample_dev))
    assert m["gold_tags"] is True
    assert m["model"] == str(trained_pipeline) and m["gold"] == str(sample_dev)
    assert 50 < m["uas"] < 100 and 50 < m["uas_all"] < 100
    for key in ("uas", "uas_all"):
        label_key = key.replace("uas", "las")
        assert 0 < m[label_key] <= m[key]
    # spaCy's scorer differs only in how predicted punctuation is counted.
    assert abs(m["spacy_dep_uas"] - m["uas"]) < 3
    assert abs(m["spacy_dep_las"] - m["las"]) < 3
    assert m["parser_seconds"] > 0
    assert m["tokens_per_second"] == pytest.approx(m["tokens"] / m["parser_seconds"])


def test_parse_conllu_matches_evaluate(gold_metrics, trained_pipeline, sample_dev, tmp_path):
    out = tmp_path / "parsed.conllu"
    result = run("parse", trained_pipeline, sample_dev, out, "--gold-tags")
    assert result.exit_code == 0, result.output
    assert "200 sentences" in result.stdout
    # Valid CoNLL-U (the reader checks one root per sentence and no cycles),
    # with the gold words, comments and multiword tokens.
    vocab = spacy.blank("en").vocab
    parsed = list(read_conllu(out, vocab))
    gold = list(read_conllu(sample_dev, vocab))
    assert len(parsed) == len(gold) == 200
    for p, g in zip(parsed, gold):
        assert [t.text for t in p] == [t.text for t in g]
        assert sum(t.dep_ == "ROOT" for t in p) == 1
        assert p.text == g.text
    assert "# sent_id = " in out.read_text(encoding="utf-8")
    uas, uas_all = recompute(sample_dev, out)
    assert uas < 100  # predicted trees, not the input's gold trees
    assert uas == pytest.approx(gold_metrics["uas"])
    assert uas_all == pytest.approx(gold_metrics["uas_all"])


def test_parse_text_needs_tags(trained_pipeline, tmp_path):
    """The fixture's mst_parser reads UPOS/XPOS and nothing predicts them:
    plain text stops with the remedy (tests/test_cli_input.py parses text
    with a pipeline that has a tagger)."""
    text = tmp_path / "input.txt"
    text.write_text("The cat sat on the mat.\n", encoding="utf-8")
    out = tmp_path / "out" / "text.conllu"
    result = run("parse", trained_pipeline, text, out)
    assert result.exit_code == 1
    assert "UPOS, XPOS" in result.stderr and "--gold-tags" in result.stderr
    assert "configs/mst_parser_tagged.cfg" in result.stderr
    assert not out.parent.exists()


def test_evaluate_subprocess(trained_pipeline, sample_dev, tmp_path):
    out = tmp_path / "metrics.json"
    proc = subprocess.run(
        [sys.executable, "-m", "spacy_mstparse", "evaluate", str(trained_pipeline),
         str(sample_dev.relative_to(REPO)), "--gold-tags", "--output", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    metrics = json.loads(out.read_text(encoding="utf-8"))
    assert METRIC_KEYS <= set(metrics) and metrics["sentences"] == 200
    assert metrics["uas"] > 50


def test_evaluate_missing_model(sample_dev, tmp_path):
    out = tmp_path / "metrics.json"
    result = run("evaluate", tmp_path / "no_such_model", sample_dev, "--output", out)
    assert result.exit_code == 1
    assert "no_such_model" in result.stderr and "Traceback" not in result.output
    assert not out.exists()


def test_evaluate_malformed_gold(trained_pipeline, sample_dev, tmp_path):
    lines = sample_dev.read_text(encoding="utf-8").splitlines(keepends=True)
    bad_line = next(i for i, line in enumerate(lines) if line.startswith("5\t")) + 1
    cols = lines[bad_line - 1].split("\t")
    cols[6] = "x"
    lines[bad_line - 1] = "\t".join(cols)
    bad = tmp_path / "bad.conllu"
    bad.write_text("".join(lines), encoding="utf-8")
    out = tmp_path / "metrics.json"
    result = run("evaluate", trained_pipeline, bad, "--output", out)
    assert result.exit_code == 1
    assert f"{bad}:{bad_line}:" in result.stderr and "HEAD" in result.stderr
    assert not out.exists()
    # parse: same error, and an existing output file is left alone.
    previous = tmp_path / "previous.conllu"
    previous.write_text("keep me\n", encoding="utf-8")
    result = run("parse", trained_pipeline, bad, previous)
    assert result.exit_code == 1 and f"{bad}:{bad_line}:" in result.stderr
    assert previous.read_text(encoding="utf-8") == "keep me\n"


def test_no_parser_and_bad_options(tmp_path, sample_dev):
    blank = tmp_path / "blank"
    spacy.blank("en").to_disk(blank)
    result = run("evaluate", blank, sample_dev)
    assert result.exit_code == 1
    assert "has no dependency parser component" in result.stderr
    text = tmp_path / "in.txt"
    text.write_text("Hello world.\n", encoding="utf-8")
    result = run("parse", blank, text, tmp_path / "out.conllu", "--gold-tags")
    assert result.exit_code == 1 and "gold tags" in result.stderr
    assert not (tmp_path / "out.conllu").exists()


def test_make_input_docs(sample_dev):
    nlp = spacy.blank("en")
    gold = list(read_conllu(sample_dev, nlp.vocab))[:3]
    for gold_tags in (False, True):
        docs = make_input_docs(gold, nlp.vocab, gold_tags)
        for doc, ref in zip(docs, gold):
            assert doc.text == ref.text and len(doc) == len(ref)
            assert not doc.has_annotation("DEP")
            assert [t.is_sent_start for t in doc] == [t.i == 0 for t in doc]
            assert doc.has_annotation("POS") == gold_tags
            if gold_tags:
                assert [t.pos_ for t in doc] == [t.pos_ for t in ref]
                assert [t.tag_ for t in doc] == [t.tag_ for t in ref]
                assert [str(t.morph) for t in doc] == [str(t.morph) for t in ref]
                assert [t.lemma_ for t in doc] == [t.lemma_ for t in ref]


# -- the version, progress bars, a source folder without compiled modules ------


def test_version_option():
    from importlib.metadata import PackageNotFoundError, version

    import spacy_mstparse

    try:
        expected = version("spacy-mstparse")
    except PackageNotFoundError:
        expected = spacy_mstparse.__version__
    for option in ("--version", "-V"):
        result = run(option)
        assert result.exit_code == 0, result.output
        assert result.stdout.strip() == f"spacy-mstparse {expected}"


class TerminalStream:
    """A text stream that says it is a terminal (and one that does not)."""

    def __init__(self, tty: bool):
        self.tty, self.parts = tty, []

    def write(self, text):
        self.parts.append(text)
        return len(text)

    def flush(self):
        pass

    def isatty(self):
        return self.tty

    def text(self):
        return "".join(self.parts)


@pytest.mark.parametrize("tty", [True, False])
def test_convert_shows_bars_on_a_terminal_only(sample_dev, tmp_path, monkeypatch, tty):
    from spacy.tokens import DocBin

    from spacy_mstparse.corpus.convert import convert

    stream = TerminalStream(tty)
    monkeypatch.setattr(sys, "stderr", stream)
    counts = convert(sample_dev, tmp_path / "dev.spacy", n_sents=5, vocab_lang="en")
    monkeypatch.undo()
    n_docs = len(DocBin().from_disk(tmp_path / "dev.spacy"))
    assert counts["docs"] == n_docs
    if tty:
        # both steps drew their bar, the second out of the number of docs written
        assert "reading dev.conllu" in stream.text()
        assert "packing:" in stream.text() and f"/{n_docs} [" in stream.text()
    else:
        assert stream.text() == ""


def test_progress_bar_follows_the_setting(monkeypatch):
    from spacy_mstparse.progress import progress_bar, shows

    for tty in (True, False):
        stream = TerminalStream(tty)
        monkeypatch.setattr(sys, "stderr", stream)
        assert shows() is tty and shows(True) and not shows(False)
        assert sum(progress_bar(range(7), desc="counting")) == 21
        assert ("counting" in stream.text()) is tty
        stream.parts.clear()
        list(progress_bar(range(3), desc="forced", show=not tty))
        assert ("forced" in stream.text()) is (not tty)


def test_calibrate_says_no_words_for_a_threshold_no_word_reaches():
    import numpy

    from spacy_mstparse.calibration import format_calibration
    from spacy_mstparse.graph.calibration_metrics import calibration_report

    rng = numpy.random.default_rng(0)
    probs = rng.uniform(0.5, 0.98, size=300)  # none reaches 0.99
    correct = rng.uniform(size=300) < probs
    report = calibration_report(probs, correct, (0.9, 0.99))
    result = {"component": "mst_parser", "sentences": 12,
              "head": {"temperature_before": 1.0, "temperature": 1.5,
                       "before": report, "after": report}}
    lines = format_calibration(result).splitlines()
    above = probs >= 0.9
    for line in lines[2:]:
        assert line.endswith(">= 0.99: no words"), line
        assert (f">= 0.9: coverage {100 * above.mean():.1f}% accuracy "
                f"{100 * correct[above].mean():.2f}%") in line
    assert "nan" not in "\n".join(lines)


def source_folder_without_extensions(tmp_path) -> Path:
    """A copy of the package's Python files, as a clone installed with
    ``pip install .`` (not editable) has them: nothing compiled."""
    folder = tmp_path / "clone"
    for path in (REPO / "spacy_mstparse").rglob("*.py"):
        target = folder / path.relative_to(REPO)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
    return folder


def installed_build_env() -> dict:
    """The environment of a subprocess that finds the package built here
    after its current folder (as an installed build would be)."""
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def test_a_source_folder_without_extensions_uses_the_installed_build(tmp_path):
    """`python -m spacy_mstparse` from the folder of a clone installed with
    `pip install .`: the folder's uncompiled package hands over to the
    installed build (Ray's workers import it the same way)."""
    folder = source_folder_without_extensions(tmp_path)
    code = ("import spacy_mstparse, spacy_mstparse.decoders.dispatch as d; "
            "print(spacy_mstparse.__file__); print(d.__file__)")
    out = subprocess.run([sys.executable, "-c", code], cwd=folder, env=installed_build_env(),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    package_file, compiled = out.stdout.split()
    assert Path(package_file).parent == REPO / "spacy_mstparse"
    assert Path(compiled).parent == REPO / "spacy_mstparse" / "decoders"
    assert not compiled.endswith(".py")
    version = subprocess.run([sys.executable, "-m", "spacy_mstparse", "--version"], cwd=folder,
                             env=installed_build_env(), capture_output=True, text=True,
                             timeout=120)
    assert version.returncode == 0 and version.stdout.startswith("spacy-mstparse "), version
    # without an installed build the folder's package stays (and cannot load its modules)
    alone = subprocess.run([sys.executable, "-I", "-S", "-c", "import sys; sys.path.insert(0, '.');"
                            "import spacy_mstparse; print(spacy_mstparse.__file__)"],
                           cwd=folder, capture_output=True, text=True, timeout=120)
    assert Path(alone.stdout.strip()).parent.parent == folder, alone


@pytest.mark.slow
def test_ray_workers_started_from_a_source_folder_use_the_installed_build(tmp_path):
    pytest.importorskip("ray")
    folder = source_folder_without_extensions(tmp_path)
    code = """
import logging, ray
ray.init(num_cpus=1, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)

@ray.remote
def where():
    import spacy_mstparse, spacy_mstparse.decoders.dispatch as d
    return spacy_mstparse.__file__ + " " + d.__file__

print(ray.get(where.remote()))
ray.shutdown()
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=folder, env=installed_build_env(),
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    package_file, compiled = out.stdout.split()[-2:]
    assert Path(package_file).parent == REPO / "spacy_mstparse"
    assert Path(compiled).parent == REPO / "spacy_mstparse" / "decoders"
