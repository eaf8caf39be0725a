"""Benchmark the mst_parser learners: accuracy, training time, memory, speed, size.

What it measures
----------------
For each learner (perceptron; MIRA, k=1, unclipped; PA-I with C=0.05;
Pegasos-DP averaged with k=10 and a given lambda) the script trains a
first-order ``mst_parser`` with ``configs/mst_parser.cfg`` (Eisner decoder,
gold UPOS/XPOS and gold sentence boundaries copied into the training docs)
on a treebank's train file and scores it on its dev file (by default UD
English EWT, ``../shared/data/ud/en_ewt-ud-{train,dev}.conllu`` relative to
the repository root), and records:

* training wall time of ``python -m spacy train`` (the whole subprocess:
  loading, initialization, the training epochs and the periodic dev
  evaluations spaCy runs every ``training.eval_frequency`` steps to pick
  model-best), its user and system CPU time, and its peak resident set size.
  Peak RSS and CPU times are exact per child process: the script starts the
  child with ``subprocess.Popen`` and reaps it with ``os.wait4(pid)``, whose
  ``rusage`` belongs to that child alone (``ru_maxrss`` in KiB on Linux);
  ``RUSAGE_CHILDREN`` differences are not used, since they keep the maximum
  over all children ever reaped;
* UAS / LAS without punctuation and with all words (``uas``, ``las``,
  ``uas_all``, ``las_all``) of model-last and model-best, from
  ``python -m spacy_mstparse evaluate MODEL DEV --gold-tags`` (gold words,
  sentences and tags; the parser predicts heads and labels);
* parser speed: ``tokens_per_second`` reported by that command, which times
  the parser component alone inside one process. model-last is evaluated
  ``--speed-runs`` times (default 3): once right after its training, the
  other runs round-robin over all the trained learners at the end (so that a
  busy stretch on a shared machine does not hit one learner only); the
  median is kept;
* model size: apparent size (sum of file sizes) of
  ``model-last/mst_parser/`` and of the whole ``model-last/`` directory.

Steps: the train and dev files are converted once to DocBins under
``benchmarks/work/`` (``python -m spacy_mstparse convert --n-sents N``, N = 1 by default,
reused while the source file and options are unchanged); for each learner a
config is derived from ``configs/mst_parser.cfg`` (only
``components.mst_parser.learner`` is replaced, and the features for
variants such as ``mira-k5-v1`` that pin them) and written to
``benchmarks/work/configs/``, the model is trained into
``benchmarks/work/<learner>/`` and evaluated. All figures, the exact commands,
the date, the machine (``nproc``, CPU model, memory, load averages), the
Python / spaCy versions and the git commit go to
``benchmarks/results/learners.json`` (rewritten after each learner, so a
partial run keeps what it finished); a Markdown table goes to stdout (and to
``--markdown PATH``); progress goes to stderr.

Usage (from the repository root; paths default relative to it)::

    .venv/bin/python -m benchmarks.bench_learners --quick      # ~ a few minutes, smoke test
    .venv/bin/python -m benchmarks.bench_learners              # full run, 10 epochs
    .venv/bin/python -m benchmarks.bench_learners --learners perceptron,pa1 --epochs 5

``--quick`` trains on the first 1,000 training sentences for 1 epoch and
writes its results under ``benchmarks/work/`` (not ``benchmarks/results/``)
unless ``--output`` is given. Nothing else heavy should run at the same
time: the times and speeds are wall-clock figures.
"""
import argparse
import datetime
import shutil
import statistics
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from benchmarks.common import (
    FEATURES_V1, REPO_ROOT, RESULTS, WORK, add_treebank_options, arc_weight_stats, choose_names,
    convert_once, count_sentences, dir_bytes, display_command, evaluate_model, finish_results,
    invocation, log, machine_info, make_snapshot, num, rel, resolve_treebanks, run_measured,
    save_results, tail, take_sentences, training_curve, working_tree_code,
)

BASE_CONFIG = REPO_ROOT / "configs" / "mst_parser.cfg"
DEFAULT_WORK = WORK
DEFAULT_OUTPUT = RESULTS / "learners.json"
# One sentence per Doc, as project.yml converts: spacy train shuffles Docs, and
# the online learners gain from sentence-level shuffling.
N_SENTS_PER_DOC = 1
QUICK_TRAIN_SENTS = 1000
QUICK_EPOCHS = 1

# Pegasos lambdas of Lee et al. (2010)'s grid; each is a selectable learner.
PEGASOS_GRID = ("1e-2", "3.3e-2", "1e-3", "3.3e-3", "1e-4")


def _learners() -> Dict[str, Dict[str, Any]]:
    learners: Dict[str, Dict[str, Any]] = {
        "perceptron": {
            "description": "averaged perceptron",
            "block": {"@mst_learners": "spacy_mstparse.Perceptron.v1"},
        },
        "mira": {
            "description": "averaged 1-best MIRA (k=1), unclipped (C=null)",
            "block": {"@mst_learners": "spacy_mstparse.MIRA.v1", "C": None, "k": 1},
        },
        "mira-k5": {
            "description": "averaged 5-best MIRA (k=5), unclipped (C=null)",
            "block": {"@mst_learners": "spacy_mstparse.MIRA.v1", "C": None, "k": 5},
        },
        "mira-k5-v1": {
            "description": "averaged 5-best MIRA (k=5), v1 features (no direction back-off)",
            "block": {"@mst_learners": "spacy_mstparse.MIRA.v1", "C": None, "k": 5},
            "features": FEATURES_V1,
        },
        "mira-v1": {
            "description": "averaged 1-best MIRA (k=1), v1 features: the dense model of "
                           "the sparseptron table",
            "block": {"@mst_learners": "spacy_mstparse.MIRA.v1", "C": None, "k": 1},
            "features": FEATURES_V1,
        },
        "sparseptron": {
            "description": "sparseptron as configs/mst_parser_sparse.cfg: B=22, 5 sparse + "
                           "5 MIRA epochs, gold-tree support, overlap refill, v1 features",
            "block": {"@mst_learners": "spacy_mstparse.Sparseptron.v1", "B": 22,
                      "shrink_every": 32, "sparse_epochs": 5, "debias": "MIRA", "C": None,
                      "overlap": "refill", "support": "gold"},
            "features": FEATURES_V1,
        },
        "pa1": {
            "description": "averaged PA-I, C=0.05",
            "block": {
                "@mst_learners": "spacy_mstparse.PassiveAggressive.v1",
                "variant": "PA-I",
                "C": 0.05,
            },
        },
    }
    for lam in PEGASOS_GRID:
        learners[f"pegasos-{lam}"] = {
            "description": f"Pegasos-DP, averaged, k=10, lambda={lam}",
            "block": {
                "@mst_learners": "spacy_mstparse.Pegasos.v1",
                "lam": float(lam),
                "k": 10,
                "averaged": True,
            },
        }
    return learners


LEARNERS = _learners()
DEFAULT_LEARNERS = ("perceptron", "mira", "pa1", "pegasos-1e-4", "pegasos-1e-3")


# ---------------------------------------------------------------------------
# Markdown
# ---------------------------------------------------------------------------


def markdown_table(results: Dict[str, Any]) -> str:
    lines = [
        "| Learner | Train (min) | Peak RSS (MB) | UAS | LAS | UAS all | LAS all "
        "| best: UAS | LAS | UAS all | LAS all | Parser tok/s | mst_parser/ (MB) | model (MB) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, res in results["learners"].items():
        if "error" in res:
            lines.append(f"| {name} | failed: {res['error'].splitlines()[0]} |" + " |" * 12)
            continue
        train, last, best = res["train"], res["model_last"], res["model_best"]
        lines.append(
            "| " + " | ".join([
                name,
                num(train["wall_seconds"] / 60, ".1f"),
                num(train["peak_rss_mb"], ".0f"),
                num(last["uas"], ".2f"), num(last["las"], ".2f"),
                num(last["uas_all"], ".2f"), num(last["las_all"], ".2f"),
                num(best["uas"], ".2f"), num(best["las"], ".2f"),
                num(best["uas_all"], ".2f"), num(best["las_all"], ".2f"),
                num(last["tokens_per_second_median"], ",.0f"),
                num(res["size"]["mst_parser_mb"], ".1f"),
                num(res["size"]["model_mb"], ".1f"),
            ]) + " |"
        )
    s = results["settings"]
    lines.append("")
    lines.append(
        f"{s['train_sentences']:,} train sentences ({s['train']}), {s['epochs']} epoch(s), "
        f"dev {s['dev']}; gold tags and sentence boundaries; Eisner decoder. "
        f"UAS/LAS exclude punctuation, \"all\" columns include it; the first four score "
        f"columns are model-last, the \"best:\" ones model-best (picked by spaCy on the same "
        f"dev set). Parser tok/s: median of {s['speed_runs']} evaluations of model-last. "
        f"Machine: {results['machine']['nproc']} CPU(s), {results['machine']['cpu_model']}. "
        f"Code: commit {(results['code']['commit'] or '?')[:12]}"
        f"{' (snapshot)' if results['code']['snapshot'] else ' (working tree)'}; "
        f"run {results['date']}."
    )
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Learners: " + ", ".join(f"{k} ({v['description']})" for k, v in LEARNERS.items()),
    )
    parser.add_argument("--learners", default=",".join(DEFAULT_LEARNERS),
                        help="comma-separated subset (default: %(default)s)")
    parser.add_argument("--epochs", type=int, default=None,
                        help="training.max_epochs (default 10; 1 with --quick)")
    add_treebank_options(parser)
    parser.add_argument("--n-sents", type=int, default=N_SENTS_PER_DOC,
                        help=f"sentences per Doc in the converted DocBins (default {N_SENTS_PER_DOC})")
    parser.add_argument("--train-sents", type=int, default=None,
                        help="use only the first N training sentences (default: all; "
                             f"{QUICK_TRAIN_SENTS} with --quick)")
    parser.add_argument("--quick", action="store_true",
                        help=f"smoke test: {QUICK_TRAIN_SENTS} train sentences, {QUICK_EPOCHS} "
                             "epoch, results under benchmarks/work/")
    parser.add_argument("--speed-runs", type=int, default=3,
                        help="evaluations of model-last; the median tokens/s is kept")
    parser.add_argument("--snapshot", action="store_true",
                        help="run the committed code (git archive HEAD, built under "
                             "WORK_DIR/src/) instead of the working tree")
    parser.add_argument("--work-dir", type=Path, default=DEFAULT_WORK)
    parser.add_argument("--output", type=Path, default=None,
                        help="results JSON (default benchmarks/results/learners.json; "
                             "benchmarks/work/learners-quick.json with --quick)")
    parser.add_argument("--markdown", type=Path, default=None,
                        help="also write the Markdown table to this file")
    args = parser.parse_args(argv)
    args.learner_names = choose_names(parser, args.learners, LEARNERS, "learner")
    if args.epochs is None:
        args.epochs = QUICK_EPOCHS if args.quick else 10
    if args.train_sents is None and args.quick:
        args.train_sents = QUICK_TRAIN_SENTS
    if args.output is None:
        args.output = args.work_dir / "learners-quick.json" if args.quick else DEFAULT_OUTPUT
    if args.epochs < 1 or args.speed_runs < 1:
        parser.error("--epochs and --speed-runs must be >= 1")
    resolve_treebanks(parser, args)
    return args


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    import spacy.util

    work = args.work_dir.resolve()
    corpus_dir = work / "corpus"
    corpus_dir.mkdir(parents=True, exist_ok=True)
    started = datetime.datetime.now().astimezone()

    code = make_snapshot(work) if args.snapshot else working_tree_code()

    train_src = args.train
    if args.train_sents:
        train_src = corpus_dir / f"{args.train.stem}-first{args.train_sents}.conllu"
        n = take_sentences(args.train, train_src, args.train_sents)
        log(f"using the first {n} sentences of {rel(args.train)}")
    train_spacy = corpus_dir / f"{train_src.stem}-n{args.n_sents}.spacy"
    dev_spacy = corpus_dir / f"{args.dev.stem}-n{args.n_sents}.spacy"
    conversions = {
        "train": convert_once(train_src, train_spacy, args.n_sents),
        "dev": convert_once(args.dev, dev_spacy, args.n_sents),
    }

    results: Dict[str, Any] = {
        "benchmark": "mst_parser learners (benchmarks/bench_learners.py)",
        "date": started.isoformat(timespec="seconds"),
        "command": invocation("bench_learners", argv),
        "machine": machine_info(),
        "code": code,
        "settings": {
            "base_config": rel(BASE_CONFIG),
            "train": rel(args.train),
            "train_used": rel(train_src),
            "train_sentences": count_sentences(train_src),
            "dev": rel(args.dev),
            "dev_sentences": count_sentences(args.dev),
            "epochs": args.epochs,
            "n_sents_per_doc": args.n_sents,
            "speed_runs": args.speed_runs,
            "peak_rss_method": "os.wait4(pid) rusage of each child process (ru_maxrss, KiB)",
            "model_size_method": "sum of file sizes (apparent size), 1 MB = 2**20 bytes",
        },
        "conversions": conversions,
        "learners": {},
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)

    def save() -> None:
        save_results(results, args.output)

    failed = False
    trained: List[str] = []
    for i, name in enumerate(args.learner_names, 1):
        spec = LEARNERS[name]
        log(f"[{i}/{len(args.learner_names)}] {name}: {spec['description']}")
        entry: Dict[str, Any] = {
            "description": spec["description"],
            "learner": spec["block"],
            "features": spec.get("features", "configs/mst_parser.cfg"),
            "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        }
        results["learners"][name] = entry
        try:
            config = spacy.util.load_config(BASE_CONFIG)
            config["components"]["mst_parser"]["learner"] = dict(spec["block"])
            if "features" in spec:
                config["components"]["mst_parser"]["features"] = dict(spec["features"])
            cfg_path = work / "configs" / f"{name}.cfg"
            cfg_path.parent.mkdir(parents=True, exist_ok=True)
            config.to_disk(cfg_path)
            out_dir = work / name
            if out_dir.exists():
                shutil.rmtree(out_dir)
            out_dir.mkdir(parents=True)
            cmd = [sys.executable, "-m", "spacy", "train", rel(cfg_path), "--output", rel(out_dir),
                   "--paths.train", rel(train_spacy), "--paths.dev", rel(dev_spacy),
                   "--nlp.lang", "en", "--training.max_epochs", str(args.epochs)]
            log(f"  training: {display_command(cmd)}")
            train = run_measured(cmd, out_dir / "train.log")
            entry["config"] = rel(cfg_path)
            entry["train"] = train
            entry["train"]["curve"] = training_curve(out_dir / "train.log")
            if train["returncode"] != 0:
                raise RuntimeError(f"spacy train exited with {train['returncode']}:\n"
                                   f"{tail(out_dir / 'train.log')}")
            log(f"  trained in {train['wall_seconds'] / 60:.1f} min, "
                f"peak RSS {train['peak_rss_mb']:.0f} MB")

            model_last, model_best = out_dir / "model-last", out_dir / "model-best"
            log(f"  evaluating model-last (speed run 1/{args.speed_runs})")
            last = evaluate_model(model_last, args.dev, out_dir / "eval-last-1.json")
            last["tokens_per_second_runs"] = [last.pop("tokens_per_second")]
            last["tokens_per_second_median"] = last["tokens_per_second_runs"][0]
            last["scores_identical_across_runs"] = True
            entry["model_last"] = last
            trained.append(name)
            log(f"  model-last: UAS {last['uas']:.2f} LAS {last['las']:.2f}, "
                f"{last['tokens_per_second_median']:,.0f} tok/s")
            if model_best.is_dir():
                log("  evaluating model-best")
                entry["model_best"] = evaluate_model(model_best, args.dev, out_dir / "eval-best.json")
                log(f"  model-best: UAS {entry['model_best']['uas']:.2f} "
                    f"LAS {entry['model_best']['las']:.2f}")
            else:
                entry["model_best"] = {k: None for k in ("uas", "las", "uas_all", "las_all")}
            entry["size"] = {
                "mst_parser_bytes": dir_bytes(model_last / "mst_parser"),
                "model_bytes": dir_bytes(model_last),
            }
            entry["size"]["mst_parser_mb"] = entry["size"]["mst_parser_bytes"] / 2**20
            entry["size"]["model_mb"] = entry["size"]["model_bytes"] / 2**20
            entry["size"].update(arc_weight_stats(model_last / "mst_parser"))
        except Exception as err:  # record it and go on with the next learner
            failed = True
            entry["error"] = str(err)
            log(f"  FAILED: {err}")
        save()

    # Speed runs 2..N: round-robin over the trained models, so that a noisy
    # stretch on the (shared) machine does not hit one learner only.
    for run in range(2, args.speed_runs + 1):
        for name in trained:
            entry = results["learners"][name]
            out_dir = work / name
            log(f"speed run {run}/{args.speed_runs}: {name} model-last")
            try:
                res = evaluate_model(out_dir / "model-last", args.dev, out_dir / f"eval-last-{run}.json")
            except Exception as err:
                failed = True
                entry.setdefault("speed_run_errors", []).append(str(err))
                log(f"  FAILED: {err}")
                continue
            last = entry["model_last"]
            last["tokens_per_second_runs"].append(res["tokens_per_second"])
            last["tokens_per_second_median"] = statistics.median(last["tokens_per_second_runs"])
            if (res["uas"], res["las"], res["uas_all"], res["las_all"]) != (
                last["uas"], last["las"], last["uas_all"], last["las_all"]
            ):
                last["scores_identical_across_runs"] = False
        save()

    finish_results(results, args.output, markdown_table(results), args.markdown)
    log(f"done: {rel(args.output)}" + (f", {rel(args.markdown)}" if args.markdown else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
