"""bench_tagger: the per-word medians and ratios of interleaved runs, its
table, and its option checks (no training)."""
import pytest

from benchmarks import bench_tagger


def _side(train, tag, pos=0.9):
    return {"train_cpu": train, "tag_cpu": tag, "pos_acc": pos, "tag_acc": None, "morph_acc": 0.8}


def _run(current, baseline):
    return {"current": _side(*current), "baseline": _side(*baseline)}


def test_the_summary_is_the_median_per_1k_words_and_the_median_ratio():
    runs = [_run((3.0, 1.0), (6.0, 1.0)), _run((1.0, 2.0), (4.0, 1.0)), _run((5.0, 3.0), (5.0, 2.0))]
    s = bench_tagger.summarise(runs, {"train": 2000, "dev": 500})
    assert s["current"]["train_s_per_1k_words"] == pytest.approx(3.0 / 2)
    assert s["baseline"]["tag_s_per_1k_words"] == pytest.approx(1.0 / 0.5)
    # medians of the per-round ratios: train (0.5, 0.25, 1.0), tag (1.0, 2.0, 1.5)
    assert s["train_ratio_median"] == pytest.approx(0.5)
    assert s["tag_ratio_median"] == pytest.approx(1.5)
    assert s["current"]["pos_acc"] == 0.9 and s["current"]["tag_acc"] is None


def test_the_table_has_a_row_per_treebank():
    words = {"train": 1000, "dev": 1000}
    results = {"rounds": 1, "treebanks": {
        "xx_a": {"summary": bench_tagger.summarise([_run((1.0, 0.5), (4.0, 1.0))], words)}}}
    rows = [line for line in bench_tagger.markdown(results).splitlines() if line.startswith("| xx_")]
    assert rows == ["| xx_a | 1.000 / 4.000 | 0.25 | 0.500 / 1.000 | 0.50 | 90.00 / 90.00 | - / - "
                    "| 80.00 / 80.00 |"]


def test_a_baseline_without_the_package_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        bench_tagger.main(["--baseline", str(tmp_path)])
    assert "no spacy_mstparse package" in capsys.readouterr().err
