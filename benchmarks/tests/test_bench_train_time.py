"""bench_train_time: the per-word medians and ratios of interleaved runs, its
table, and its option checks (no training)."""
import pytest

from benchmarks import bench_train_time


def _run(current, baseline):
    return {"current": {"cpu_seconds": current}, "baseline": {"cpu_seconds": baseline}}


def test_the_summary_is_the_median_per_1k_words_and_the_median_ratio():
    runs = [_run(30.0, 20.0), _run(10.0, 40.0), _run(50.0, 25.0)]
    s = bench_train_time.summarise(runs, words=5000)
    assert s["current"]["cpu_s_per_1k_words"] == pytest.approx(30.0 / 5)
    assert s["baseline"]["cpu_s_per_1k_words"] == pytest.approx(25.0 / 5)
    # the ratio is the median of the per-round ratios (1.5, 0.25, 2.0), not of the medians
    assert s["ratio_median"] == pytest.approx(1.5)


def test_the_table_has_a_row_per_treebank():
    results = {"config": "mst_parser.cfg", "rounds": 1, "treebanks": {
        "xx_a": {"train_words": 1000, "summary": bench_train_time.summarise([_run(3.0, 2.0)], 1000)},
        "xx_b": {"train_words": 2000, "summary": bench_train_time.summarise([_run(2.0, 4.0)], 2000)}}}
    rows = [line for line in bench_train_time.markdown(results).splitlines() if line.startswith("| xx_")]
    assert rows == ["| xx_a | 1000 | 3.00 | 2.00 | 1.50 |", "| xx_b | 2000 | 1.00 | 2.00 | 0.50 |"]


def test_a_baseline_without_the_config_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        bench_train_time.main(["--baseline", str(tmp_path)])
    assert "no configs/mst_parser.cfg" in capsys.readouterr().err
