"""benchmarks/bench_languages.py and its helpers: finding the treebanks, the
training overrides, eval.py's table, the raw text and multiword-token
counts of a CoNLL-U file, and the results table."""
import pytest

from benchmarks import bench_languages as bl
from benchmarks.conllu_text import raw_text_lines, treebank_stats
from benchmarks.ud_eval import parse_eval_output

EVAL_OUTPUT = """\
Metric     | Precision |    Recall |  F1 Score | AligndAcc
-----------+-----------+-----------+-----------+-----------
Tokens     |    100.00 |    100.00 |    100.00 |
Sentences  |     95.00 |     90.00 |     92.41 |
Words      |     98.50 |     97.50 |     98.00 |
UPOS       |     90.00 |     89.00 |     89.50 |     91.33
UAS        |     70.12 |     69.40 |     69.76 |     71.18
LAS        |     64.00 |     63.00 |     63.50 |     64.80
"""

CONLLU = """\
# newdoc id = d1
# sent_id = 1
# text = Evde mi?
1-2\tEvde\t_\t_\t_\t_\t_\t_\t_\t_
1\tEv\tev\tNOUN\tNoun\t_\t0\troot\t_\t_
2\tde\tde\tADP\t_\t_\t1\tcase\t_\tSpaceAfter=No
3\tmi\tmi\tAUX\t_\t_\t1\taux\t_\tSpaceAfter=No
4\t?\t?\tPUNCT\t_\t_\t1\tpunct\t_\t_

# sent_id = 2
# text = Evet.
1\tEvet\tevet\tINTJ\t_\t_\t0\troot\t_\tSpaceAfter=No
2\t.\t.\tPUNCT\t_\t_\t1\tpunct\t_\t_

# newdoc id = d2
# sent_id = 3
# text = Tamam.
1\tTamam\ttamam\tINTJ\t_\t_\t0\troot\t_\tSpaceAfter=No
2\t.\t.\tPUNCT\t_\t_\t1\tpunct\t_\t_

"""


def test_eval_output_rows_and_f1():
    rows = parse_eval_output(EVAL_OUTPUT)
    assert rows["UAS"]["f1"] == 69.76 and rows["LAS"]["f1"] == 63.5
    assert rows["Tokens"]["aligned_accuracy"] is None
    assert rows["UPOS"]["aligned_accuracy"] == 91.33
    assert "Metric" not in rows and "-----------+-----------" not in str(rows)


def test_treebank_stats_count_multiword_tokens(tmp_path):
    path = tmp_path / "tr_x-ud-test.conllu"
    path.write_text(CONLLU, encoding="utf-8")
    stats = treebank_stats(path)
    assert stats["sentences"] == 3 and stats["words"] == 8
    assert stats["multiword_tokens"] == 1 and stats["words_in_multiword_tokens"] == 2
    assert stats["multiword_share"] == pytest.approx(2 / 8)
    assert stats["words_with_xpos"] == 1


def test_raw_text_keeps_documents(tmp_path):
    path = tmp_path / "t.conllu"
    path.write_text(CONLLU, encoding="utf-8")
    assert raw_text_lines(path) == ["Evde mi? Evet.", "Tamam."]
    unmarked = tmp_path / "u.conllu"
    unmarked.write_text(CONLLU.replace("# newdoc id = d1\n", "").replace("# newdoc id = d2\n", ""),
                        encoding="utf-8")
    assert raw_text_lines(unmarked, sentences_per_line=2) == ["Evde mi? Evet.", "Tamam."]
    missing = tmp_path / "m.conllu"
    missing.write_text(CONLLU.replace("# text = Evet.\n", ""), encoding="utf-8")
    with pytest.raises(ValueError, match="text"):
        raw_text_lines(missing)


def test_find_treebanks_by_glob(tmp_path):
    for name in ("hu_szeged-ud-train", "hu_szeged-ud-dev", "hu_szeged-ud-test",
                 "en_ewt-ud-train", "en_ewt-ud-dev", "da_ddt-ud-dev",
                 "kk_ktb-ud-train", "kk_ktb-ud-test"):
        (tmp_path / f"{name}.conllu").write_text("")
    release = tmp_path / "UD_Wolof-WTB"     # a UD release's layout: a folder per treebank
    release.mkdir()
    for split in ("train", "dev", "test"):
        (release / f"wo_wtb-ud-{split}.conllu").write_text("")
    found = {tb["name"]: tb for tb in bl.find_treebanks(tmp_path)}
    # every treebank with a train file, with a dev file or not
    assert set(found) == {"en_ewt", "hu_szeged", "kk_ktb", "wo_wtb"}
    assert found["wo_wtb"]["dev"] == release / "wo_wtb-ud-dev.conllu"
    assert found["hu_szeged"]["lang"] == "hu" and found["hu_szeged"]["test"] is not None
    assert found["en_ewt"]["test"] is None
    assert found["kk_ktb"]["dev"] is None and found["kk_ktb"]["test"] is not None
    # spaCy has Hungarian, not Kazakh: that one trains as "xx"
    assert found["hu_szeged"]["spacy_lang"] == "hu"
    assert (found["kk_ktb"]["lang"], found["kk_ktb"]["spacy_lang"]) == ("kk", "xx")


def test_the_configs_run_as_shipped_but_for_the_epochs_and_ablations():
    assert bl.train_overrides(None) == []
    assert bl.train_overrides(2) == ["--training.max_epochs", "2"]
    assert bl.train_overrides(None, bl.SYSTEMS["mst-o2-noclusters"]["ablation"]) == [
        "--components.mst_parser.features.cluster_bits", "0"]
    assert bl.SYSTEMS["mst-o1-nomorph"]["config"] == bl.SYSTEMS["mst-o1"]["config"]


def test_last_dev_scores_from_the_training_table():
    curve = {"header": ["E", "#", "LOSS MST_P...", "DEP_UAS", "DEP_LAS", "SCORE"],
             "rows": [[0, 0, 1.0, 10.0, 5.0, 0.1], [1, 200, 2.0, 70.5, 60.25, 0.65]]}
    assert bl.last_dev_scores(curve) == {"uas": 70.5, "las": 60.25, "epoch": 1, "step": 200}
    assert bl.last_dev_scores({"header": None, "rows": []}) == {
        "uas": None, "las": None, "epoch": None, "step": None}


def test_table_compares_test_scores_with_udpipe_in_the_same_mode():
    published = {"source": "the UDPipe 1 docs", "treebanks": {
        "hu_szeged": {"gold_tok": {"uas": 73.3, "las": 67.6}, "raw_text": {"uas": 72.8, "las": 67.2}},
        "en_ewt": {"gold_tok_morph": {"uas": 88.1, "las": 86.2}}}}
    results = {"settings": {"epochs": 1}, "treebanks": {
        "hu_szeged": {"stats": {"test": {"multiword_share": 0.0}}, "systems": {
            "mst-tagged": {"train": {"seconds_per_1k_words": 3.25},
                           "test": {"uas": 75.0, "las": 66.0, "words_per_second": 1234.0},
                           "dev": {"uas": 1.0, "las": 1.0}},
            "mst-tagged-raw": {"error": "parse failed: x"}}},
        "en_ewt": {"stats": {}, "systems": {
            "mst-o1": {"train": {"seconds_per_1k_words": 1.0}, "dev": {"uas": 90.0, "las": 88.0}}}},
        "zz_bad": {"error": "convert failed: line 1", "stats": {}, "systems": {}}}}
    rows = {(r["treebank"], r["system"]): r for r in bl.table_rows(results, published)}
    tagged = rows[("hu_szeged", "mst-tagged")]
    assert tagged["split"] == "test" and tagged["mode"] == "gold tok"
    assert tagged["difference"] == (pytest.approx(1.7), pytest.approx(-1.6))
    ewt = rows[("en_ewt", "mst-o1")]
    assert ewt["split"] == "dev" and ewt["difference"] == (None, None)
    assert ewt["udpipe"] == (88.1, 86.2)
    table = bl.markdown_table(results, published)
    assert ("| hu_szeged | mst-tagged | gold tok | test | 75.00 / 66.00 | 73.30 / 67.60 "
            "| +1.70 / -1.60 | 3.2 | 1,234 |") in table
    assert "| en_ewt | mst-o1 | gold tok + morph | dev | 90.00 / 88.00 | 88.10 / 86.20 | - |" in table
    assert "failed: parse failed: x" in table
    # a treebank that failed before any system ran keeps a row with its error
    assert "| zz_bad | - | - | - | failed: convert failed: line 1 |" in table
    assert "the UDPipe 1 docs" in table and "hu_szeged 0.00%" in table


def test_gains_of_ablated_features():
    # the FEATS ablation is of the projective first-order run (ABLATIONS)
    results = {"treebanks": {"cs_cltt": {"systems": {
        "mst-o1-eisner": {"dev": {"uas": 84.0, "las": 81.0}, "test": {"uas": 83.0, "las": 80.0}},
        "mst-o1-nomorph": {"dev": {"uas": 83.5, "las": 79.0}, "test": {"uas": 83.25, "las": 80.5}},
        "mst-o2-noclusters": {"dev": {"uas": 80.0, "las": 70.0}}}}}}
    lines = bl.gain_table(results)
    assert "| FEATS | cs_cltt | +0.50 / +2.00 | -0.25 / -0.50 |" in lines
    assert not any("clusters" in line for line in lines)   # no mst-o2 run to compare with
    assert bl.gain_table({"treebanks": {}}) == []
    # merged from two results files: not compared
    systems = results["treebanks"]["cs_cltt"]["systems"]
    systems["mst-o1-eisner"]["results_file"] = "a.json"
    systems["mst-o1-nomorph"]["results_file"] = "b.json"
    assert bl.gain_table(results) == []
    systems["mst-o1-nomorph"]["results_file"] = "a.json"
    assert "| FEATS | cs_cltt | +0.50 / +2.00 | -0.25 / -0.50 |" in bl.gain_table(results)


def test_published_figures_name_their_source_and_modes():
    import json

    data = json.loads(bl.PUBLISHED.read_text())
    assert "udpipe-ud-2.5-191206" in data["system"] and "Model Performance" in data["source"]
    assert data["treebanks"]["tr_imst"]["gold_tok"] == {"uas": 64.5, "las": 57.1}
    for figures in data["treebanks"].values():
        assert set(figures) - {"name"} == {"gold_tok_morph", "gold_tok", "raw_text"}
    # every treebank of UDPipe's table, keyed by its UD file-name prefix
    assert len(data["treebanks"]) == 94
    for key, figures in data["treebanks"].items():
        assert key.split("_", 1)[1] == figures["name"].rsplit("-", 1)[1].lower(), key
        assert all(0 < figures[m]["las"] <= figures[m]["uas"] < 100 for m in data["modes"]), key
    assert data["treebanks"]["wo_wtb"]["name"] == "Wolof-WTB"
    assert data["treebanks"]["no_nynorsklia"]["gold_tok_morph"] == {"uas": 81.1, "las": 76.8}
