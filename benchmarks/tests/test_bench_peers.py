"""The parts of benchmarks/bench_peers.py that decide its figures: the one
CoNLL-U scorer every system goes through, the blanking of gold trees before
UDPipe sees the dev file, the per-system parse runner and the option
handling. The benchmark itself (hours of training) never runs here.

The benchmarks are the package ``benchmarks`` at the repository root,
imported as ``python -m pytest`` run from there puts it on the path."""
import json
from pathlib import Path

import pytest

from benchmarks import bench_peers, peer_runner
from benchmarks.common import take_sentences

REPO = Path(__file__).resolve().parents[2]

GOLD = """\
# sent_id = a
# text = She reads books.
1\tShe\tshe\tPRON\tPRP\t_\t2\tnsubj\t2:nsubj\t_
2\treads\tread\tVERB\tVBZ\t_\t0\troot\t0:root\t_
3\tbooks\tbook\tNOUN\tNNS\t_\t2\tobj\t2:obj\tSpaceAfter=No
4\t.\t.\tPUNCT\t.\t_\t2\tpunct\t2:punct\t_

# sent_id = b
# text = He sleeps.
1\tHe\the\tPRON\tPRP\t_\t2\tnsubj\t2:nsubj\t_
2\tsleeps\tsleep\tVERB\tVBZ\t_\t0\troot\t0:root\tSpaceAfter=No
3\t.\t.\tPUNCT\t.\t_\t2\tpunct\t2:punct\t_

"""


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _edit(text, sent, word, head=None, deprel=None):
    """``text`` with HEAD / DEPREL of word ``word`` of sentence ``sent``
    (both 1-based) replaced."""
    blocks = text.strip("\n").split("\n\n")
    lines = blocks[sent - 1].split("\n")
    for k, line in enumerate(lines):
        cols = line.split("\t")
        if len(cols) == 10 and cols[0] == str(word):
            if head is not None:
                cols[6] = str(head)
            if deprel is not None:
                cols[7] = deprel
            lines[k] = "\t".join(cols)
    blocks[sent - 1] = "\n".join(lines)
    return "\n\n".join(blocks) + "\n\n"


def test_score_conllu_counts_heads_labels_and_punctuation(tmp_path):
    gold = _write(tmp_path, "gold.conllu", GOLD)
    pred_text = _edit(GOLD, 1, 1, head=3)              # She: wrong head
    pred_text = _edit(pred_text, 1, 3, deprel="iobj")  # books: right head, wrong label
    pred_text = _edit(pred_text, 2, 3, head=1)         # "." of b: wrong head (punctuation)
    pred = _write(tmp_path, "pred.conllu", pred_text)
    scores = bench_peers.score_conllu(pred, gold)
    # 5 non-punctuation words: She (head wrong), reads, books (label wrong), He, sleeps.
    assert scores["uas"] == pytest.approx(100 * 4 / 5)
    assert scores["las"] == pytest.approx(100 * 3 / 5)
    # 7 words: also "." of a (right) and "." of b (head wrong).
    assert scores["uas_all"] == pytest.approx(100 * 5 / 7)
    assert scores["las_all"] == pytest.approx(100 * 4 / 7)
    assert scores["spacy_dep_uas"] == pytest.approx(100 * 4 / 5)
    assert scores["spacy_dep_las"] == pytest.approx(100 * 3 / 5)
    assert bench_peers.score_conllu(gold, gold)["las_all"] == 100.0


def test_score_conllu_scores_a_resegmented_parse_word_by_word(tmp_path):
    """A system that joins the two sentences into one tree (``sleeps``
    attached to ``reads`` instead of being a root) loses exactly that word."""
    gold = _write(tmp_path, "gold.conllu", GOLD)
    joined = """\
1\tShe\tshe\tPRON\tPRP\t_\t2\tnsubj\t_\t_
2\treads\tread\tVERB\tVBZ\t_\t0\troot\t_\t_
3\tbooks\tbook\tNOUN\tNNS\t_\t2\tobj\t_\tSpaceAfter=No
4\t.\t.\tPUNCT\t.\t_\t2\tpunct\t_\t_
5\tHe\the\tPRON\tPRP\t_\t6\tnsubj\t_\t_
6\tsleeps\tsleep\tVERB\tVBZ\t_\t2\tparataxis\t_\tSpaceAfter=No
7\t.\t.\tPUNCT\t.\t_\t6\tpunct\t_\t_

"""
    scores = bench_peers.score_conllu(_write(tmp_path, "pred.conllu", joined), gold)
    assert scores["uas"] == pytest.approx(80.0)
    assert scores["las"] == pytest.approx(80.0)
    assert scores["uas_all"] == pytest.approx(100 * 6 / 7)


def test_score_conllu_refuses_other_words(tmp_path):
    gold = _write(tmp_path, "gold.conllu", GOLD)
    pred = _write(tmp_path, "pred.conllu", GOLD.replace("\tbooks\tbook\t", "\tbook\tbook\t"))
    with pytest.raises(ValueError, match="differ .* word 3"):
        bench_peers.score_conllu(pred, gold)


def test_blank_trees_hides_heads_labels_and_deps_only():
    text = GOLD.replace("# sent_id = b\n", "# sent_id = b\n1-2\tHe's\t_\t_\t_\t_\t_\t_\t_\t_\n", 1)
    blanked = peer_runner.blank_trees(text)
    for before, after in zip(text.splitlines(), blanked.splitlines()):
        cols, new = before.split("\t"), after.split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            assert new[6:9] == ["_", "_", "_"]
            assert new[:6] + new[9:] == cols[:6] + cols[9:]
        else:  # comments, the multiword-token range, blank lines
            assert after == before


def test_parse_args_defaults_and_errors(tmp_path, sample_train, sample_dev):
    base = ["--train", str(sample_train), "--dev", str(sample_dev), "--work-dir", str(tmp_path)]
    args = bench_peers.parse_args(base + ["--quick"])
    assert args.system_names == list(bench_peers.DEFAULT_SYSTEMS)
    assert "mst-tagged-c0" not in args.system_names  # an ablation, asked for by name
    assert (args.epochs, args.train_sents) == (1, bench_peers.QUICK_TRAIN_SENTS)
    assert "iterations=1" in args.udpipe_options
    assert args.output.parent == tmp_path.resolve()
    assert args.markdown.suffix == ".md" and args.plot.suffix == ".png"
    args = bench_peers.parse_args(base + ["--systems", "mst-o1,udpipe1"])
    assert args.system_names == ["mst-o1", "udpipe1"]
    assert args.epochs == bench_peers.DEFAULT_EPOCHS
    assert args.udpipe_options == bench_peers.DEFAULT_UDPIPE_OPTIONS
    with pytest.raises(SystemExit):
        bench_peers.parse_args(base + ["--systems", "mst-o1,nope"])
    assert bench_peers.parse_args(base + ["--systems", "mst-tagged-c0"]).system_names == [
        "mst-tagged-c0"]
    with pytest.raises(SystemExit):
        bench_peers.parse_args(["--dev", str(tmp_path / "missing.conllu")])


def test_spacy_parse_runner_matches_evaluate(tmp_path, trained_pipeline, sample_dev):
    """The runner's CoNLL-U output scored by score_conllu gives the figures
    of ``spacy_mstparse evaluate`` (another code path over the same parser),
    and it times the parser component alone."""
    from spacy_mstparse.evaluation import evaluate

    out, timing = tmp_path / "dev.conllu", tmp_path / "timing.json"
    peer_runner.main(["parse", "spacy", str(trained_pipeline), str(sample_dev), str(out),
                      "--gold-tags", "--timing", str(timing)])
    result = json.loads(timing.read_text())
    expected = evaluate(trained_pipeline, sample_dev, gold_tags=True)
    assert result["parser_components"] == ["mst_parser"]
    assert result["listened_tok2vec"] == []
    assert result["tokens"] == expected["tokens"]
    assert result["parser_seconds"] == result["component_seconds"]["mst_parser"] > 0
    assert result["parser_tokens_per_second"] == pytest.approx(
        result["tokens"] / result["parser_seconds"])
    scores = bench_peers.score_conllu(out, sample_dev)
    for key in ("uas", "las", "uas_all", "las_all", "spacy_dep_uas", "spacy_dep_las"):
        assert scores[key] == pytest.approx(expected[key]), key


def test_udpipe_train_and_parse_runner(tmp_path, sample_train, sample_dev):
    pytest.importorskip("ufal.udpipe", reason="ufal.udpipe (benchmarks/requirements-peers.txt) not installed")
    train = tmp_path / "train.conllu"
    dev = tmp_path / "dev.conllu"
    take_sentences(sample_train, train, 40)
    take_sentences(sample_dev, dev, 15)
    model = tmp_path / "model.udpipe"
    peer_runner.main(["udpipe-train", str(train), str(model),
                      "--options", "iterations=1;structured_interval=0;hidden_layer=20"])
    assert model.stat().st_size > 0
    out, timing = tmp_path / "out.conllu", tmp_path / "timing.json"
    peer_runner.main(["parse", "udpipe", str(model), str(dev), str(out), "--timing", str(timing)])
    result = json.loads(timing.read_text())
    assert result["sentences"] == 15
    def words(path):  # word lines only (no comments, multiword ranges, empty nodes)
        rows = [line.split("\t") for line in path.read_text().splitlines() if "\t" in line]
        return [cols for cols in rows if cols[0].isdigit()]

    word_lines, gold_lines = words(out), words(dev)
    assert result["tokens"] == len(word_lines) == len(gold_lines)
    assert all(cols[6] != "_" and cols[7] != "_" for cols in word_lines)  # every word parsed
    assert [c[1] for c in word_lines] == [c[1] for c in gold_lines]
    scores = bench_peers.score_conllu(out, dev)
    assert 0.0 <= scores["las"] <= scores["uas"] <= 100.0


def test_project_benchmark_workflow_installs_peers_and_runs_the_script():
    import srsly

    project = srsly.read_yaml(REPO / "project.yml")
    commands = {cmd["name"]: cmd for cmd in project["commands"]}
    steps = project["workflows"]["benchmark"]
    scripts = [line for step in steps for line in commands[step]["script"]]
    assert any("pip install -r benchmarks/requirements-peers.txt" in s for s in scripts)
    assert any(s.startswith("python -m benchmarks.bench_peers") for s in scripts)
    assert scripts.index(next(s for s in scripts if "requirements-peers" in s)) < scripts.index(
        next(s for s in scripts if "benchmarks.bench_peers" in s))
    requirements = (REPO / "benchmarks" / "requirements-peers.txt").read_text()
    assert "ufal.udpipe" in requirements and "matplotlib" in requirements
    # the package itself must not depend on the peers
    pyproject = (REPO / "pyproject.toml").read_text()
    dependencies = pyproject.split("dependencies = [", 1)[1].split("]", 1)[0]
    assert "udpipe" not in dependencies and "matplotlib" not in dependencies


def test_ablation_system_config_sets_its_keys(tmp_path):
    import spacy

    info = bench_peers.prepare_config("mst-tagged-c0", bench_peers.SYSTEMS["mst-tagged-c0"],
                                      tmp_path, 3)
    config = spacy.util.load_config(tmp_path / "configs" / "mst-tagged-c0.cfg")
    shipped = spacy.util.load_config(REPO / "configs" / "mst_parser_tagged.cfg")
    assert shipped["components"]["mst_parser"]["features"]["cluster_bits"] > 0
    assert config["components"]["mst_parser"]["features"]["cluster_bits"] == 0
    assert "senter" not in config["nlp"]["pipeline"] and config["training"]["max_epochs"] == 3
    assert "components.mst_parser.features.cluster_bits = 0" in info["changes"]


def test_merge_combines_runs_and_names_each_command():
    run = {"command": "python -m benchmarks.bench_peers --systems a", "date": "d1",
           "settings": {"epochs": 3, "train_cap_minutes": 15, "train_sentences": 10,
                        "train_used": "t", "dev_sentences": 5, "dev": "d", "udpipe_options": "u",
                        "speed_runs": 1},
           "machine": {"nproc": 2, "cpu_model": "x"}, "code": {"commit": "abc", "snapshot": False},
           "systems": {"mst-tagged": {"skipped": "not run"}}}
    other = dict(run, command="python -m benchmarks.bench_peers --systems b", date="d2",
                 settings=dict(run["settings"], epochs=30, train_cap_minutes=70),
                 systems={"spacy-tagger-parser": {"skipped": "not run"}})
    merged = bench_peers.merge_results([run, other])
    assert list(merged["systems"]) == ["mst-tagged", "spacy-tagger-parser"]
    assert merged["systems"]["spacy-tagger-parser"]["run"]["settings"]["epochs"] == 30
    assert merged["merged_from"] == [run["command"], other["command"]]
    table = bench_peers.markdown_table(merged)
    assert "--systems b" in table and "30 epoch(s), capped at 70 min" in table
    assert "separate runs" in table


def test_supertag_ablation_drops_the_supertagger_and_its_score(tmp_path):
    import spacy

    info = bench_peers.prepare_config("mst-tagged-st0", bench_peers.SYSTEMS["mst-tagged-st0"],
                                      tmp_path, 3)
    config = spacy.util.load_config(tmp_path / "configs" / "mst-tagged-st0.cfg")
    assert "mst_supertagger" not in config["nlp"]["pipeline"]
    assert "mst_supertagger" not in config["components"]
    assert "mst_supertagger" not in config["training"]["annotating_components"]
    assert "supertag_acc" not in config["training"]["score_weights"]
    features = config["components"]["mst_parser"]["features"]
    assert features["supertags"] is False and features["tag_columns"] == "both"
    assert "removed component mst_supertagger" in info["changes"]
    shipped = bench_peers.prepare_config("mst-tagged", bench_peers.SYSTEMS["mst-tagged"],
                                         tmp_path, 3)
    config = spacy.util.load_config(tmp_path / "configs" / "mst-tagged.cfg")
    assert "mst_supertagger" in config["training"]["annotating_components"]
    assert "supertag_acc" in config["training"]["score_weights"] and shipped


@pytest.mark.parametrize("name,config_file", [("mst-o2-m", "mst_parser_o2.cfg"),
                                              ("mst-tagged-m", "mst_parser_tagged.cfg")])
def test_feats_ablations_switch_on_use_morph(tmp_path, name, config_file):
    import spacy

    bench_peers.prepare_config(name, bench_peers.SYSTEMS[name], tmp_path, 3)
    config = spacy.util.load_config(tmp_path / "configs" / f"{name}.cfg")
    shipped = spacy.util.load_config(REPO / "configs" / config_file)
    assert shipped["components"]["mst_parser"]["features"]["use_morph"] == "auto"  # chosen from data
    assert config["components"]["mst_parser"]["features"]["use_morph"] is True
    assert config["training"]["max_epochs"] == 3
