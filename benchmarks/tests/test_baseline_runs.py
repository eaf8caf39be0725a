"""baseline_runs: the order of interleaved rounds and the treebank choice."""
import argparse
import json
import os

import pytest

from benchmarks import baseline_runs, common


def test_rounds_alternate_which_side_runs_first(tmp_path):
    calls = []
    results = {"treebanks": {"xx_a": {"runs": []}, "xx_b": {"runs": []}}}
    out = tmp_path / "results.json"
    baseline_runs.interleaved_rounds(2, ["xx_a", "xx_b"], lambda side, name: calls.append((side, name)) or side,
                                     results, out)
    records = [(name, results["treebanks"][name]["runs"][k]) for k in range(2) for name in ("xx_a", "xx_b")]
    assert calls == [("baseline", "xx_a"), ("current", "xx_a"), ("baseline", "xx_b"), ("current", "xx_b"),
                     ("current", "xx_a"), ("baseline", "xx_a"), ("current", "xx_b"), ("baseline", "xx_b")]
    assert [(name, r["round"], r["order"][0]) for name, r in records] == [
        ("xx_a", 1, "baseline"), ("xx_b", 1, "baseline"), ("xx_a", 2, "current"), ("xx_b", 2, "current")]
    assert all(r["current"] == "current" and r["baseline"] == "baseline" for _, r in records)
    assert json.loads(out.read_text())["treebanks"] == results["treebanks"]   # saved as it goes


def _treebank_dir(tmp_path, with_dev):
    for name, dev in (("xx_a", True), ("yy_b", with_dev)):
        (tmp_path / f"{name}-ud-train.conllu").write_text("", encoding="utf8")
        if dev:
            (tmp_path / f"{name}-ud-dev.conllu").write_text("", encoding="utf8")
    return tmp_path


def test_the_default_is_every_treebank_with_a_dev_split(tmp_path):
    found, names = baseline_runs.treebanks_with_dev(argparse.ArgumentParser(),
                                                    _treebank_dir(tmp_path, False), "")
    assert names == ["xx_a"] and set(found) == {"xx_a", "yy_b"}


def test_a_chosen_treebank_without_dev_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        baseline_runs.treebanks_with_dev(argparse.ArgumentParser(), _treebank_dir(tmp_path, False),
                                         "yy_b", why="training needs one")
    assert "no dev split (training needs one): yy_b" in capsys.readouterr().err


def test_rounds_below_one_are_refused_and_the_checkout_goes_first_on_the_path(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    baseline_runs.add_options(parser, rounds=2)
    assert parser.parse_args(["--baseline", "b"]).rounds == 2
    with pytest.raises(SystemExit):
        parser.parse_args(["--baseline", "b", "--rounds", "0"])
    assert "must be at least 1" in capsys.readouterr().err
    assert common.checkout_env(tmp_path)["PYTHONPATH"].split(os.pathsep)[0] == str(tmp_path)
