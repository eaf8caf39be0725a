"""Benchmark ``arcstandard_svm`` on UD English EWT: the tables of Choo &
Shivaditya (the Cornell CS 5740 report, 2020, section 7-8) and a
side-by-side with ``mst_parser`` (first and second order).

Sections (``--sections``, default all, in this order):

* ``ablation``: feature groups added one by one (1w, +2w, +3w, +dep, +wd,
  +ic) on the first 1,000 training sentences, lambda = 1e-4 (the seed's
  ablation setting); then "1w 2w 3w" and all groups on 4,000 and 10,000;
* ``lambda``: lambda in {1e-4, 1e-5, 3e-6, 1e-6}, all groups, full train;
* ``curve``: the learning curve at 1K, 4K, 10K and the full train set with
  the component's default lambda (the full-train point is the lambda-sweep
  model when that lambda is in the sweep), plotted to
  ``benchmarks/results/arcstandard_curve.png``;
* ``errors``: error analysis of the full-train default model on dev: UAS by
  sentence length (<10, 10-30, 30-50, >50 words), by number of OOV words
  (words the model maps to UNK: not in its training vocabulary after the
  rare-word cut-off) and on the non-projective dev sentences;
* ``variants``: the departures from the seed switched back one at a time on
  full train (lambda 1e-5): word distance as a value, last iterate instead
  of the averaged SVMs, rare-word cut-off 50, non-projective trees dropped;
* ``mst`` / ``compare``: ``mst_parser`` first order (``configs/mst_parser.cfg``) and
  second order (``configs/mst_parser_o2.cfg``) trained with ``spacy train``
  on the same split, and the parse speed of all three measured in the same
  run: ``python -m spacy_mstparse evaluate MODEL DEV --gold-tags``
  (tokens/s of the parser component alone), ``--speed-runs`` times each,
  round-robin, median kept;
* ``speed``: the same three models in one process, ``--speed-runs``
  interleaved rounds of ``component.pipe`` over dev; per-round speed ratios
  to first-order ``mst_parser`` (less sensitive to other jobs on the
  machine than separate processes minutes apart);
* ``size``: the saved size of the full-train default model (the component's
  directory, per file) and the peak RSS of ``spacy.load`` of it in a fresh
  subprocess (``--worker load``: the child's peak RSS from ``wait4``, and its
  peak after the imports alone, before loading), ``--speed-runs`` times,
  median kept; ``--size-models DIR,...`` measures further pipelines the same
  way (e.g. one saved by an older release, for comparison).

Every arc-standard model is trained by a worker subprocess
(``--worker train``) with the component's own training loop (shuffled
batches of 16 docs, one sentence per doc, until the stopping rule fires or
``--max-epochs``), exactly the ``update()`` path ``spacy train`` uses but
without spaCy's periodic dev evaluations; it is then scored on dev with
``python -m spacy_mstparse evaluate`` (gold words, sentences and tags; UAS /
LAS exclude punctuation; "all" columns include it).

Results go to ``benchmarks/results/arcstandard.json`` (rewritten after each
run, so a partial run keeps what it finished) with the exact commands,
machine, load averages and commit; a Markdown summary to stdout and
``--markdown PATH``. Models and logs go to ``benchmarks/work/arcstandard/``.

Usage::

    .venv/bin/python -m benchmarks.bench_arcstandard --snapshot
    .venv/bin/python -m benchmarks.bench_arcstandard --sections ablation --quick
    .venv/bin/python -m benchmarks.bench_arcstandard --sections size \
        --output benchmarks/work/arcstandard/size.json --size-models OLD_PIPELINE_DIR
"""
import argparse
import datetime
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from benchmarks import common
from benchmarks.common import DEFAULT_DEV, DEFAULT_TRAIN, REPO_ROOT, RESULTS

WORK = common.WORK / "arcstandard"
DEFAULT_OUTPUT = RESULTS / "arcstandard.json"
ALL_GROUPS = ["1w", "2w", "3w", "dep", "wd", "ic"]
SECTIONS = ("ablation", "lambda", "curve", "errors", "mst", "variants", "compare", "speed",
            "size")
# departures from the seed, each switched back alone on full train (lambda 1e-5)
VARIANTS = ({"word_distance": "value"}, {"average": False}, {"rare_word_cutoff": 50},
            {"nonprojective": "drop"})
LAMBDAS = ("1e-4", "1e-5", "3e-6", "1e-6")
SEED = {
    # Choo & Shivaditya, section 7 (their data: 1B word benchmark, 200K dev)
    "ablation_1k": {"1w": 0.6218, "1w 2w": 0.6862, "1w 2w 3w": 0.7442,
                    "1w 2w 3w dep": 0.7689, "1w 2w 3w dep wd": 0.7782,
                    "1w 2w 3w dep wd ic": 0.7972},
    "ablation_4k": {"1w 2w 3w": 0.7852, "1w 2w 3w dep wd ic": 0.8346},
    "ablation_10k": {"1w 2w 3w": 0.7931, "1w 2w 3w dep wd ic": 0.8433},
    "lambda": {"1e-4": 0.8515, "1e-5": 0.8653, "3e-6": 0.8717, "1e-6": 0.8589},
    "curve": {"1000": 0.7972, "4000": 0.8346, "10000": 0.8433, "60000": 0.8619,
              "200000": 0.8717},
    "errors": {"nonprojective": 0.9352, "length <10": 0.8974, "length 10-30": 0.8930,
               "length 30-50": 0.8595, "length >50": 0.7848, "oov <10": 0.8858,
               "oov 10-20": 0.8322, "oov >20": 0.6628},
}
LENGTH_BINS = [("<10", 0, 9), ("10-30", 10, 30), ("30-50", 31, 50), (">50", 51, 10**9)]
OOV_BINS_SEED = [("<10", 0, 9), ("10-20", 10, 20), (">20", 21, 10**9)]
OOV_BINS_FINE = [("0", 0, 0), ("1", 1, 1), ("2", 2, 2), ("3-5", 3, 5), (">5", 6, 10**9)]


# ---------------------------------------------------------------------------
# Workers (run in subprocesses, so that --snapshot isolates the code)
# ---------------------------------------------------------------------------


def worker_train(args) -> None:
    """Train arcstandard_svm on the first N sentences, save the pipeline."""
    import numpy
    import spacy

    config = json.loads(args.config)
    nlp = spacy.blank("en")
    parser = nlp.add_pipe("arcstandard_svm", config=config)
    examples = common.gold_examples(Path(args.train), nlp.vocab, args.train_sents)
    start = time.perf_counter()
    nlp.initialize(lambda: examples)
    init_seconds = time.perf_counter() - start
    rng = numpy.random.RandomState(0)
    losses_per_epoch = []
    epochs = 0
    while epochs < args.max_epochs and not parser.converged:
        order = rng.permutation(len(examples))
        losses: Dict[str, float] = {}
        for i in range(0, len(order), 16):
            parser.update([examples[j] for j in order[i : i + 16]], losses=losses)
        losses_per_epoch.append(losses.get(parser.name, 0.0))
        epochs += 1
    train_seconds = time.perf_counter() - start
    parser.prediction_weights()
    nlp.to_disk(args.model_out)
    inventory = parser.inventory
    result = {
        "train_sents": len(examples),
        "config": config,
        "epochs": epochs,
        "converged": parser.converged,
        "error_history": parser.progress["error_history"],
        "wrong_transitions_per_epoch": losses_per_epoch,
        "init_seconds": init_seconds,
        "train_seconds": train_seconds,
        "n_classes": len(inventory["classes"]),
        "n_labels": len(inventory["labels"]),
        "vocab_size": inventory["vocab_size"],
        "n_word_pairs": int(parser.word_pairs.shape[0]),
        "epoch_configurations": inventory["epoch_configs"],
        "n_train_trees": inventory["n_train_trees"],
        "n_nonprojective_trees": inventory["n_nonprojective_trees"],
    }
    Path(args.result).write_text(json.dumps(result, indent=2))


def worker_speed(args) -> None:
    """Parse speed of several pipelines in one process, interleaved: each
    round times every parser component's ``pipe`` over the whole dev set
    (fresh copies of the gold-tagged input docs, copying not timed)."""
    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.pipeline_input import load_pipeline, make_input_docs, parser_components

    models = json.loads(args.config)
    pipes = {}
    for name, path in models.items():
        nlp = load_pipeline(path)
        (component,) = parser_components(nlp, path)
        pipes[name] = (nlp, nlp.get_pipe(component))
    first = next(iter(pipes.values()))[0]
    gold = list(read_conllu(Path(args.dev), first.vocab))
    n_tokens = sum(len(d) for d in gold)
    times: Dict[str, List[float]] = {name: [] for name in pipes}
    for _ in range(args.speed_runs):
        for name, (nlp, pipe) in pipes.items():
            docs = make_input_docs(gold, nlp.vocab, gold_tags=True)
            start = time.perf_counter()
            for _doc in pipe.pipe(docs, batch_size=64):
                pass
            times[name].append(time.perf_counter() - start)
    out = {name: {"seconds": t, "tokens_per_second": [n_tokens / x for x in t]}
           for name, t in times.items()}
    Path(args.result).write_text(json.dumps({"tokens": n_tokens, "models": models, "runs": out}))


def worker_load(args) -> None:
    """``spacy.load`` one pipeline; record the peak RSS after the imports
    (the baseline) and the load time. The driver reads the whole child's
    peak RSS from ``wait4``."""
    import resource

    import spacy

    import spacy_mstparse.evaluation  # noqa: F401  (registers the factories)

    imports_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    start = time.perf_counter()
    nlp = spacy.load(args.model)
    seconds = time.perf_counter() - start
    assert all(getattr(pipe, "is_initialized", True) for _, pipe in nlp.pipeline)
    Path(args.result).write_text(json.dumps({
        "imports_peak_rss_mb": imports_peak,
        "after_load_peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "load_seconds": seconds,
    }))


def worker_errors(args) -> None:
    """UAS (punctuation excluded) of a model on dev by sentence length, OOV
    count and projectivity."""
    import numpy

    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.decoders.trees import is_projective
    from spacy_mstparse.pipeline_input import load_pipeline, make_input_docs
    from spacy_mstparse.scoring import PUNCT_LABELS

    nlp = load_pipeline(args.model)
    parser = nlp.get_pipe("arcstandard_svm")
    gold_docs = list(read_conllu(Path(args.dev), nlp.vocab))
    predicted = list(nlp.pipe(make_input_docs(gold_docs, nlp.vocab, gold_tags=True)))
    vocab = set(parser.vocabulary.tolist())
    rows = []
    for gold, pred in zip(gold_docs, predicted):
        for sent in gold.sents:
            heads = [-1] + [0 if t.head.i == t.i else t.head.i - sent.start + 1 for t in sent]
            scored = [t for t in sent if t.dep_.lower() not in PUNCT_LABELS]
            right = sum(pred[t.i].head.i == t.head.i for t in scored)
            rows.append({
                "length": len(sent),
                "oov": sum(t.lower not in vocab for t in sent),
                "projective": bool(is_projective(numpy.array(heads))),
                "right": right,
                "n": len(scored),
            })

    def summary(selected):
        n = sum(r["n"] for r in selected)
        right = sum(r["right"] for r in selected)
        return {"sentences": len(selected), "words": n,
                "uas": 100.0 * right / n if n else None}

    out = {
        "by_length": {name: summary([r for r in rows if lo <= r["length"] <= hi])
                      for name, lo, hi in LENGTH_BINS},
        "by_oov_seed_bins": {name: summary([r for r in rows if lo <= r["oov"] <= hi])
                             for name, lo, hi in OOV_BINS_SEED},
        "by_oov": {name: summary([r for r in rows if lo <= r["oov"] <= hi])
                   for name, lo, hi in OOV_BINS_FINE},
        "nonprojective": summary([r for r in rows if not r["projective"]]),
        "projective": summary([r for r in rows if r["projective"]]),
        "all": summary(rows),
        "oov_share": sum(r["oov"] for r in rows) / sum(r["length"] for r in rows),
    }
    Path(args.result).write_text(json.dumps(out, indent=2))


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------


class Bench:
    def __init__(self, args):
        self.args = args
        self.output = Path(args.output)
        self.results: Dict[str, Any] = {}
        if self.output.exists() and args.resume:
            self.results = json.loads(self.output.read_text())
        self.results.setdefault("runs", {})
        self.results["benchmark"] = "arcstandard_svm on UD English EWT (bench_arcstandard.py)"
        self.results["date"] = datetime.date.today().isoformat()
        self.results["train"] = common.rel(Path(args.train))
        self.results["dev"] = common.rel(Path(args.dev))
        self.results["seed_figures"] = SEED

    def save(self) -> None:
        """Write the results, merged with runs another invocation (e.g. the
        ``mst`` section in a parallel process) saved to the same file."""
        self.output.parent.mkdir(parents=True, exist_ok=True)
        if self.output.exists():
            try:
                on_disk = json.loads(self.output.read_text())
            except ValueError:
                on_disk = {}
            for key, run in on_disk.get("runs", {}).items():
                self.results["runs"].setdefault(key, run)
            for key, info in on_disk.get("sections", {}).items():
                self.results.setdefault("sections", {}).setdefault(key, info)
            for key, value in on_disk.items():
                self.results.setdefault(key, value)
        tmp = self.output.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.results, indent=2))
        tmp.replace(self.output)

    def train_arcstandard(self, train_sents: int, config: Dict[str, Any]) -> Dict[str, Any]:
        """Train and evaluate one configuration; runs are keyed by their
        settings, so a configuration shared by two sections is trained once."""
        key = run_key(train_sents, config)
        run = self.results["runs"].get(key)
        model = WORK / key / "model"
        if run and run.get("eval") and model.exists():
            common.log(f"reusing {key}")
            return run
        (WORK / key).mkdir(parents=True, exist_ok=True)
        result_path = WORK / key / "train.json"
        cmd = common.module_command(
            "bench_arcstandard", "--worker", "train",
            "--train", common.rel(Path(self.args.train)), "--train-sents", str(train_sents),
            "--config", json.dumps(config, separators=(",", ":")),
            "--model-out", common.rel(model), "--result", common.rel(result_path),
            "--max-epochs", str(self.args.max_epochs))
        common.log(f"training {key}")
        measured = common.run_measured(cmd, WORK / key / "train.log")
        if measured["returncode"] != 0:
            raise RuntimeError(f"{key} failed:\n{common.tail(WORK / key / 'train.log')}")
        run = {"model": common.rel(model), "train": json.loads(result_path.read_text()),
               "train_run": measured}
        run["eval"] = common.evaluate_model(model, Path(self.args.dev), WORK / key / "eval.json")
        run["model_mb"] = common.dir_bytes(model / "arcstandard_svm") / 1e6
        common.log(f"{key}: UAS {run['eval']['uas']:.2f} LAS {run['eval']['las']:.2f} "
               f"({run['train']['epochs']} epochs, {run['train']['train_seconds']:.0f}s)")
        self.results["runs"][key] = run
        self.save()
        return run

    def ablation(self) -> None:
        sizes = [1000] if self.args.quick else [1000, 4000, 10000]
        for size in sizes:
            if size == 1000:
                rows = [ALL_GROUPS[: k + 1] for k in range(len(ALL_GROUPS))]
            else:
                rows = [ALL_GROUPS[:3], ALL_GROUPS]
            for groups in rows:
                self.train_arcstandard(size, {"lam": 1e-4, "feature_groups": groups})

    def lambda_sweep(self) -> None:
        for lam in LAMBDAS:
            self.train_arcstandard(0, {"lam": float(lam)})

    def best_lambda(self) -> float:
        """The lambda of the sweep with the best dev UAS (chosen on dev, as
        the seed chose on its dev set); the component default if the sweep
        has not run."""
        scores = {}
        for lam in LAMBDAS:
            run = self.results["runs"].get(run_key(0, {"lam": float(lam)}))
            if run:
                scores[float(lam)] = run["eval"]["uas"]
        if scores:
            return max(scores, key=scores.get)
        from spacy_mstparse.components.arcstandard_svm import DEFAULT_CONFIG

        return DEFAULT_CONFIG["lam"]

    def full_default(self) -> Dict[str, Any]:
        return self.train_arcstandard(0, {"lam": self.best_lambda()})

    def curve(self) -> None:
        lam = self.best_lambda()
        points = {}
        for size in (1000, 4000, 10000):
            run = self.train_arcstandard(size, {"lam": lam})
            points[str(size)] = run["eval"]["uas"]
        full = self.full_default()
        points[str(full["train"]["train_sents"])] = full["eval"]["uas"]
        self.results["curve"] = {"lambda": lam, "uas": points}
        self.save()
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            common.log("matplotlib is not installed (pip install -r benchmarks/requirements-peers.txt): no PNG")
            return
        sizes = sorted(int(s) for s in points)
        fig, ax = plt.subplots(figsize=(5.5, 3.6))
        ax.plot(sizes, [points[str(s)] for s in sizes], "o-", label="arcstandard_svm, EWT dev")
        seed = SEED["curve"]
        ax.plot([int(s) for s in seed], [100 * v for v in seed.values()], "s--", color="grey",
                label="seed (its own data and dev set)")
        ax.set_xscale("log")
        ax.set_xlabel("training sentences")
        ax.set_ylabel("UAS (%)")
        ax.set_title(f"Learning curve, lambda = {lam:g}")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        png = RESULTS / "arcstandard_curve.png"
        fig.savefig(png, dpi=120)
        self.results["curve"]["png"] = common.rel(png)
        self.save()

    def errors(self) -> None:
        full = self.full_default()
        model = REPO_ROOT / full["model"]
        out = WORK / "errors.json"
        cmd = common.module_command(
            "bench_arcstandard", "--worker", "errors", "--model", common.rel(model),
            "--dev", common.rel(Path(self.args.dev)), "--result", common.rel(out))
        measured = common.run_measured(cmd, WORK / "errors.log")
        if measured["returncode"] != 0:
            raise RuntimeError(common.tail(WORK / "errors.log"))
        self.results["errors"] = {"model": common.rel(model), "command": measured["command"],
                                  **json.loads(out.read_text())}
        self.save()

    def variants(self) -> None:
        for variant in VARIANTS:
            self.train_arcstandard(0, {"lam": 1e-5, **variant})

    def mst(self) -> None:
        """Train mst_parser first and second order with spacy train."""
        corpus = WORK / "corpus"
        train_db = corpus / "train.spacy"
        dev_db = corpus / "dev.spacy"
        self.results["convert"] = [
            common.convert_once(Path(self.args.train), train_db, 1),
            common.convert_once(Path(self.args.dev), dev_db, 1),
        ]
        for name, cfg in (("mst_parser-o1", "mst_parser.cfg"), ("mst_parser-o2", "mst_parser_o2.cfg")):
            if not (REPO_ROOT / "configs" / cfg).exists():
                common.log(f"configs/{cfg} missing: {name} skipped")
                continue
            out_dir = WORK / name
            run = self.results["runs"].get(name)
            if not (run and (out_dir / "model-last").exists()):
                cmd = [sys.executable, "-m", "spacy", "train", f"configs/{cfg}", "--output",
                       common.rel(out_dir), "--paths.train", common.rel(train_db), "--paths.dev",
                       common.rel(dev_db), "--nlp.lang", "en", "--training.eval_frequency", "200"]
                common.log(f"training {name}")
                measured = common.run_measured(cmd, out_dir.with_suffix(".train.log"))
                if measured["returncode"] != 0:
                    raise RuntimeError(common.tail(out_dir.with_suffix(".train.log")))
                run = {"train_run": measured,
                       "curve": common.training_curve(out_dir.with_suffix(".train.log"))}
                run["eval"] = common.evaluate_model(out_dir / "model-last", Path(self.args.dev),
                                                    WORK / f"{name}.eval.json")
                run["model_mb"] = common.dir_bytes(out_dir / "model-last" / "mst_parser") / 1e6
                self.results["runs"][name] = run
                self.save()

    def speed(self) -> None:
        """Interleaved in-process speed rounds (see worker_speed): per-round
        speed ratios to mst_parser first order, their median, and each
        parser's best round."""
        self.save()  # picks up the runs of earlier invocations
        models = {"arcstandard_svm": self.full_default()["model"]}
        for name in ("mst_parser-o1", "mst_parser-o2"):
            if name in self.results["runs"]:
                models[name] = common.rel(WORK / name / "model-last")
        out = WORK / "speed.json"
        cmd = common.module_command(
            "bench_arcstandard", "--worker", "speed", "--config", json.dumps(models),
            "--dev", common.rel(Path(self.args.dev)), "--result", common.rel(out),
            "--speed-runs", str(self.args.speed_runs))
        common.log("interleaved speed rounds")
        measured = common.run_measured(cmd, WORK / "speed.log")
        if measured["returncode"] != 0:
            raise RuntimeError(common.tail(WORK / "speed.log"))
        data = json.loads(out.read_text())
        runs = data["runs"]
        base = runs.get("mst_parser-o1")
        table = {}
        for name, r in runs.items():
            row = {"tokens_per_second_runs": r["tokens_per_second"],
                   "median_tokens_per_second": statistics.median(r["tokens_per_second"]),
                   "best_tokens_per_second": max(r["tokens_per_second"])}
            if base:
                ratios = [a / b for a, b in zip(r["tokens_per_second"], base["tokens_per_second"])]
                row["ratio_to_mst_o1_per_round"] = ratios
                row["median_ratio_to_mst_o1"] = statistics.median(ratios)
                row["best_ratio_to_mst_o1"] = row["best_tokens_per_second"] / max(base["tokens_per_second"])
            table[name] = row
        self.results["speed"] = {"command": measured["command"], "tokens": data["tokens"],
                                 "loadavg_before": measured["loadavg_before"], "table": table}
        self.save()

    def size(self) -> None:
        """Saved size and peak RSS of ``spacy.load`` (see the module docstring)."""
        models = {"arcstandard_svm (this code)": REPO_ROOT / self.full_default()["model"]}
        for extra in filter(None, (self.args.size_models or "").split(",")):
            models[extra] = Path(extra)
        table = {}
        for name, model in models.items():
            component = model / "arcstandard_svm"
            files = {p.name: p.stat().st_size / 1e6 for p in sorted(component.iterdir())}
            runs = []
            for k in range(self.args.speed_runs):
                out = WORK / f"load-{k}.json"
                cmd = common.module_command("bench_arcstandard", "--worker", "load", "--model",
                                            common.rel(model), "--result", common.rel(out))
                measured = common.run_measured(cmd, WORK / "load.log")
                if measured["returncode"] != 0:
                    raise RuntimeError(common.tail(WORK / "load.log"))
                runs.append({**json.loads(out.read_text()),
                             "peak_rss_mb": measured["peak_rss_mb"],
                             "command": measured["command"]})
            table[name] = {
                "model": common.rel(model),
                "component_mb": sum(files.values()),
                "files_mb": files,
                "peak_rss_mb": statistics.median(r["peak_rss_mb"] for r in runs),
                "imports_peak_rss_mb": statistics.median(r["imports_peak_rss_mb"] for r in runs),
                "load_seconds": statistics.median(r["load_seconds"] for r in runs),
                "runs": runs,
            }
            common.log(f"{name}: {table[name]['component_mb']:.1f} MB on disk, spacy.load peak RSS "
                   f"{table[name]['peak_rss_mb']:.0f} MB (imports alone "
                   f"{table[name]['imports_peak_rss_mb']:.0f} MB)")
        self.results["size"] = table
        self.save()

    def compare(self) -> None:
        """Parse speed of the three parsers, measured in this one run."""
        self.save()  # picks up runs saved by a parallel invocation
        models = {"arcstandard_svm": REPO_ROOT / self.full_default()["model"]}
        for name in ("mst_parser-o1", "mst_parser-o2"):
            if name in self.results["runs"]:
                models[name] = WORK / name / "model-last"
        speeds: Dict[str, List[float]] = {name: [] for name in models}
        for k in range(self.args.speed_runs):
            for name, model in models.items():
                ev = common.evaluate_model(model, Path(self.args.dev),
                                           WORK / f"speed-{name}-{k}.json")
                speeds[name].append(ev["tokens_per_second"])
                common.log(f"speed {name}: {ev['tokens_per_second']:.0f} tok/s")
        table = {}
        for name, model in models.items():
            run = self.full_default() if name == "arcstandard_svm" else self.results["runs"][name]
            table[name] = {
                "model": common.rel(model),
                "uas": run["eval"]["uas"], "las": run["eval"]["las"],
                "uas_all": run["eval"]["uas_all"], "las_all": run["eval"]["las_all"],
                "tokens_per_second_runs": speeds[name],
                "tokens_per_second": statistics.median(speeds[name]),
            }
        base = table.get("mst_parser-o1")
        if base:
            for row in table.values():
                row["speed_vs_mst_o1"] = row["tokens_per_second"] / base["tokens_per_second"]
                row["uas_vs_mst_o1"] = row["uas"] - base["uas"]
        self.results["compare"] = table
        self.save()


def run_key(train_sents: int, config: Dict[str, Any]) -> str:
    groups = config.get("feature_groups", ALL_GROUPS)
    lam = f"{config['lam']:.0e}".replace("e-0", "e-")
    extra = "".join(f"-{k}={v}" for k, v in sorted(config.items())
                    if k not in ("lam", "feature_groups"))
    return f"n{train_sents or 'all'}-lam{lam}-{'+'.join(groups)}{extra}"


def markdown(results: Dict[str, Any]) -> str:
    runs = results.get("runs", {})
    lines = []

    def row(key, label, seed=None):
        run = runs.get(key)
        if not run:
            return
        ev, tr = run["eval"], run["train"]
        seed_txt = f"{100 * seed:.2f}" if seed is not None else ""
        lines.append(f"| {label} | {ev['uas']:.2f} | {ev['las']:.2f} | {seed_txt} | "
                     f"{tr['epochs']} | {tr['train_seconds']:.0f} |")

    head = "| {} | UAS | LAS | seed UAS | epochs | train s |\n|---|---:|---:|---:|---:|---:|"
    lines.append("Feature ablation (lambda = 1e-4)\n")
    lines.append(head.format("sentences, groups"))
    for size in (1000, 4000, 10000):
        seed = SEED[f"ablation_{size // 1000}k"]
        groups_list = ([ALL_GROUPS[: k + 1] for k in range(6)] if size == 1000
                       else [ALL_GROUPS[:3], ALL_GROUPS])
        for groups in groups_list:
            name = " ".join(groups)
            row(run_key(size, {"lam": 1e-4, "feature_groups": groups}), f"{size}: {name}",
                seed.get(name))
    lines.append("\nLambda (full train, all groups)\n")
    lines.append(head.format("lambda"))
    for lam in LAMBDAS:
        row(run_key(0, {"lam": float(lam)}), lam, SEED["lambda"][lam])
    lines.append("\nSeed settings switched back one at a time (full train, lambda 1e-5)\n")
    lines.append(head.format("variant"))
    row(run_key(0, {"lam": 1e-5}), "defaults (binned wd, averaged, cut-off 2, lift)")
    for variant in VARIANTS:
        row(run_key(0, {"lam": 1e-5, **variant}),
            ", ".join(f"{k} = {v}" for k, v in variant.items()))
    if "curve" in results:
        lines.append(f"\nLearning curve (lambda = {results['curve']['lambda']:g}), UAS: "
                     + ", ".join(f"{k}: {v:.2f}" for k, v in results["curve"]["uas"].items()))
    if "errors" in results:
        e = results["errors"]
        lines.append("\nError analysis (UAS, punctuation excluded)\n")
        lines.append("| class | sentences | UAS |\n|---|---:|---:|")
        for group, title in (("by_length", "length"), ("by_oov_seed_bins", "OOV"),
                             ("by_oov", "OOV")):
            for name, s in e[group].items():
                uas = f"{s['uas']:.2f}" if s["uas"] is not None else "-"
                lines.append(f"| {title} {name} | {s['sentences']} | {uas} |")
        for name in ("nonprojective", "projective", "all"):
            s = e[name]
            lines.append(f"| {name} | {s['sentences']} | {s['uas']:.2f} |")
    if "compare" in results:
        lines.append("\nSide by side (EWT train -> dev, gold tags)\n")
        lines.append("| parser | UAS | LAS | UAS all | LAS all | tok/s (median) | x mst o1 speed |"
                     "\n|---|---:|---:|---:|---:|---:|---:|")
        for name, r in results["compare"].items():
            lines.append(f"| {name} | {r['uas']:.2f} | {r['las']:.2f} | {r['uas_all']:.2f} | "
                         f"{r['las_all']:.2f} | {r['tokens_per_second']:,.0f} | "
                         f"{r.get('speed_vs_mst_o1', float('nan')):.2f} |")
    if "size" in results:
        lines.append("\nSaved size and spacy.load peak RSS (median of runs)\n")
        lines.append("| model | component MB | peak RSS MB | imports alone MB | load s |"
                     "\n|---|---:|---:|---:|---:|")
        for name, r in results["size"].items():
            lines.append(f"| {name} | {r['component_mb']:.1f} | {r['peak_rss_mb']:.0f} | "
                         f"{r['imports_peak_rss_mb']:.0f} | {r['load_seconds']:.2f} |")
    return "\n".join(lines)


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sections", default=",".join(SECTIONS))
    p.add_argument("--train", default=str(DEFAULT_TRAIN))
    p.add_argument("--dev", default=str(DEFAULT_DEV))
    p.add_argument("--max-epochs", type=int, default=30)
    p.add_argument("--speed-runs", type=int, default=3)
    p.add_argument("--quick", action="store_true", help="1K ablation only, to work/")
    p.add_argument("--snapshot", action="store_true")
    p.add_argument("--snapshot-dir",
                   help="use a snapshot --snapshot already built (benchmarks/work/src/<commit>)")
    p.add_argument("--resume", action="store_true",
                   help="keep finished runs of the output JSON (and their models)")
    p.add_argument("--output", default=str(DEFAULT_OUTPUT))
    p.add_argument("--work", default=str(WORK), help="models and logs (default %(default)s)")
    p.add_argument("--markdown")
    # worker mode
    p.add_argument("--size-models",
                   help="size section: further pipeline directories to measure, comma-separated")
    p.add_argument("--worker", choices=("train", "errors", "speed", "load"))
    p.add_argument("--train-sents", type=int, default=0)
    p.add_argument("--config", default="{}")
    p.add_argument("--model-out")
    p.add_argument("--model")
    p.add_argument("--result")
    return p.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    global WORK
    WORK = Path(args.work).resolve()
    if args.worker == "train":
        worker_train(args)
        return 0
    if args.worker == "errors":
        worker_errors(args)
        return 0
    if args.worker == "speed":
        worker_speed(args)
        return 0
    if args.worker == "load":
        worker_load(args)
        return 0
    for path in (args.train, args.dev):
        if not Path(path).exists():
            sys.exit(f"{path} not found: the benchmark needs the UD treebanks in ../shared/data "
                     "(or pass --train / --dev)")
    if args.quick and args.output == str(DEFAULT_OUTPUT):
        args.output = str(WORK / "quick.json")
    bench = Bench(args)
    bench.results["machine"] = common.machine_info()
    WORK.mkdir(parents=True, exist_ok=True)
    if args.snapshot_dir:
        code = common.use_snapshot(Path(args.snapshot_dir))
    elif args.snapshot:
        code = common.make_snapshot(common.WORK)
    else:
        code = common.working_tree_code()
    bench.results["command"] = common.invocation("bench_arcstandard", argv)
    sections = [s.strip() for s in args.sections.split(",") if s.strip()]
    for section in sections:
        if section not in SECTIONS:
            sys.exit(f"unknown section {section!r}; expected some of {', '.join(SECTIONS)}")
    # which code and command produced each section (sections may run in
    # separate invocations)
    bench.results.setdefault("sections", {})
    for section in sections:
        bench.results["sections"][section] = {
            "code": code, "command": bench.results["command"],
            "machine": bench.results["machine"],
        }
    steps = {"ablation": bench.ablation, "lambda": bench.lambda_sweep, "curve": bench.curve,
             "errors": bench.errors, "mst": bench.mst, "variants": bench.variants,
             "compare": bench.compare, "speed": bench.speed, "size": bench.size}
    for section in sections:
        steps[section]()
        bench.save()
    text = markdown(bench.results)
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
