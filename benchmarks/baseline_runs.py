"""What the benchmarks comparing this checkout with a baseline checkout
share (``bench_train_time``, ``bench_tagger``): the treebanks they run on,
the record of the baseline in the results, and the interleaved rounds (every
round runs each treebank with both checkouts, the order alternating between
rounds, so that a shared machine's load falls on both alike)."""
import argparse
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence, Tuple

from . import common

SIDES = ("current", "baseline")


def _at_least_one(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def add_options(parser, rounds: int) -> None:
    """``--baseline``, ``--baseline-python``, ``--treebanks``, ``--rounds``
    (default ``rounds``) and ``--data-dir``."""
    parser.add_argument("--baseline", type=Path, required=True,
                        help="a checkout of the project at an earlier commit, built in place")
    parser.add_argument("--baseline-python", default=sys.executable,
                        help="the interpreter the baseline runs with")
    parser.add_argument("--treebanks", default="",
                        help="comma-separated names (default: all with a dev split)")
    parser.add_argument("--rounds", type=_at_least_one, default=rounds)
    parser.add_argument("--data-dir", type=Path, default=common.DATA)


def treebanks_with_dev(parser, data_dir: Path, treebanks: str,
                       why: str = "") -> Tuple[Dict[str, Dict[str, Any]], List[str]]:
    """The treebanks of ``data_dir`` by name and the names ``treebanks``
    chooses (comma-separated; empty: every treebank with a dev split), or
    ``parser.error`` when there are none or a chosen one has no dev split
    (``why``: the reason it needs one)."""
    from .bench_languages import find_treebanks

    found = {tb["name"]: tb for tb in find_treebanks(data_dir)}
    if not found:
        parser.error(f"--data-dir {data_dir}: no *-ud-train.conllu files")
    names = (common.choose_names(parser, treebanks, found, "treebank") if treebanks
             else sorted(n for n, tb in found.items() if tb["dev"] is not None))
    missing_dev = [n for n in names if found[n]["dev"] is None]
    if missing_dev:
        parser.error(f"no dev split{f' ({why})' if why else ''}: {', '.join(missing_dev)}")
    return found, names


def baseline_record(baseline: Path, python: str, **more: Any) -> Dict[str, Any]:
    """The results' record of the baseline checkout and its interpreter."""
    return {"dir": common.rel(baseline),
            "python": "the same interpreter" if python == sys.executable else python,
            "commit": common.git("-C", str(baseline), "rev-parse", "HEAD"), **more}


def interleaved_rounds(rounds: int, names: Sequence[str], run: Callable[[str, str], Any],
                       results: Dict[str, Any], output: Path) -> None:
    """``rounds`` rounds of ``run(side, name)`` for both sides on every
    name, baseline first in odd rounds. Each pair of runs ({"round",
    "order", "current", "baseline"}) goes to ``results["treebanks"][name]
    ["runs"]``, and the results to ``output`` after each pair."""
    for r in range(rounds):
        for name in names:
            order = list(SIDES[::-1]) if r % 2 == 0 else list(SIDES)
            record: Dict[str, Any] = {"round": r + 1, "order": order}
            for side in order:
                common.log(f"round {r + 1}: {side} on {name}")
                record[side] = run(side, name)
            results["treebanks"][name]["runs"].append(record)
            common.save_results(results, output)


def finish(results: Dict[str, Any], output: Path, summarise: Callable[[Dict[str, Any]], Dict[str, Any]],
           markdown: Callable[[Dict[str, Any]], str]) -> None:
    """Each treebank's ``summary`` (``summarise(its results)``), then the
    results and their Markdown table (``markdown``) written and printed."""
    for tb in results["treebanks"].values():
        tb["summary"] = summarise(tb)
    common.finish_results(results, output, markdown(results), output.with_suffix(".md"))
