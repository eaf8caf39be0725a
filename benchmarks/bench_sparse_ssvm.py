"""Benchmark of the sparseptron and the 1-slack structural SVM.

(a) The shape of Smith & Martins (2013) Table 1: on UD treebanks, the
    sparseptron with debiasing (``spacy_mstparse.Sparseptron.v1``) against the
    dense model (MIRA, k = 1) trained for the same number of epochs: UAS, %
    non-zero arc coefficients, size of the arc-weight file and of the whole
    component on disk, parse speed of the component.
(b) Lee et al. (2010)'s comparison system: the 1-slack structural SVM
    (``OneSlackSSVM``, Joachims et al. 2009) against Pegasos-DP with the same
    lambda on (a prefix of) EWT train, first order: dev UAS after every
    pass / epoch against training time (a curve, as Lee et al. Figure 2).

Training runs in-process through the component API (``nlp.initialize`` and
``parser.update`` over shuffled examples, one sentence per Example:
``benchmarks.common.train_epochs``, the pipe's ``GraphTrainer`` doing the
work), with gold tags and sentences (``GoldAnnotationsCorpus``'s copying).
The primal objective is ``spacy_mstparse.graph.primal_objective`` of the
prediction weights. Writes JSON to ``benchmarks/results/`` and a PNG of the
curve when matplotlib is installed.

    .venv/bin/python -m benchmarks.bench_sparse_ssvm table --output benchmarks/results/sparse_table.json
    .venv/bin/python -m benchmarks.bench_sparse_ssvm ssvm --output benchmarks/results/ssvm_vs_pegasos.json
    .venv/bin/python -m benchmarks.bench_sparse_ssvm sizes --runs default=training/default,sparse=training/sparse --output benchmarks/results/sparse_sizes.json
    .venv/bin/python -m benchmarks.bench_sparse_ssvm compact --model training/default/model-best --dev corpus/dev.spacy --grid "0.25,0.01,11;0.2,0.01,15" --output benchmarks/results/sparse_compaction_default.json

    .venv/bin/python -m benchmarks.bench_sparse_ssvm settings --n-train 2000 --lam 0.0627 --max-iter 13 --settings 'shipped={};n_best3={"n_best": 3}' --output benchmarks/results/ssvm_settings.json

The ssvm run trains the 1-slack SSVM with its cache of loss-augmented trees
(``--cache-size``, ``--max-cache-rounds``, ``--warm-start``) and plots dev
UAS, the objectives and the relative duality gap against training time.
"""
import argparse
import json
import os
import platform
import re
import sys
import time
from pathlib import Path

import numpy as np
import spacy

from benchmarks import common
from spacy_mstparse.components import mst_parser  # noqa: F401  (factory)

WORK = common.WORK / "sparse_ssvm"
TREEBANKS = {
    "en_ewt": ("en", "en_ewt-ud-train.conllu", "en_ewt-ud-dev.conllu"),
    "tr_imst": ("tr", "tr_imst-ud-train.conllu", "tr_imst-ud-test.conllu"),
    "hu_szeged": ("hu", "hu_szeged-ud-train.conllu", "hu_szeged-ud-test.conllu"),
}


def parse_speed(nlp, dev):
    """Words per second of the mst_parser component alone (best of 2)."""
    parser = nlp.get_pipe("mst_parser")
    docs = [eg.predicted for eg in dev]
    n_words = sum(len(d) for d in docs)
    return max(n_words / common.timed_pipe(parser, docs, batch_size=256)[1] for _ in range(2))


def train(lang, learner, train_egs, epochs, decoder, seed=0, on_epoch=None, n_buckets=None,
          features="v1"):
    """Train an ``mst_parser`` (``features``: v1 or v2) for ``epochs`` passes in
    batches of 16, shuffled by ``random.Random(seed)``; ``on_epoch(epoch,
    nlp, train_seconds)`` (0-based epoch, untimed) may stop it by returning
    True. Returns (nlp, training seconds including initialization)."""
    nlp = spacy.blank(lang)
    config = {"learner": learner, "decoder": decoder}
    # v1 features (no direction back-off) in the tables measured before the
    # shipped config moved to v2
    config["features"] = {"@mst_features": f"spacy_mstparse.FirstOrderFeatures.{features}",
                          "n_buckets": n_buckets or 2**22}
    parser = nlp.add_pipe("mst_parser", config=config)
    start = time.perf_counter()
    nlp.initialize(lambda: train_egs)
    init_seconds = time.perf_counter() - start

    def callback(epoch, losses, seconds):
        return on_epoch is not None and on_epoch(epoch - 1, nlp, init_seconds + seconds)

    seconds = common.train_epochs(parser, train_egs, epochs, 16, common.python_orders(seed),
                                  callback)
    return nlp, init_seconds + seconds


def run_table(args):
    rows = []
    for name in args.treebanks.split(","):
        lang, train_file, dev_file = TREEBANKS[name]
        vocab = spacy.blank(lang).vocab
        train_egs = common.gold_examples(args.data_dir / train_file, vocab)
        dev = common.gold_examples(args.data_dir / dev_file, vocab)
        # Dense: --epochs. Sparse: --sparse-epochs (default half) of the
        # sparse stage, then --debias-epochs (default the rest) of debiasing.
        sparse_epochs = args.sparse_epochs or args.epochs // 2
        debias_epochs = args.debias_epochs or args.epochs - sparse_epochs
        learners = {}
        if not args.no_dense:
            learners[f"dense (MIRA k={args.dense_k})"] = {"@mst_learners": "spacy_mstparse.MIRA.v1",
                                                          "k": args.dense_k}
        for B in (int(b) for b in str(args.B).split(",")):
            learner = {"@mst_learners": "spacy_mstparse.Sparseptron.v1", "B": B,
                       "shrink_every": args.shrink_every, "sparse_epochs": sparse_epochs}
            settings = []
            for key in ("overlap", "support"):
                if getattr(args, key) is not None:
                    learner[key] = getattr(args, key)
                    settings.append(f"{key}={getattr(args, key)}")
            label = f"sparseptron B={B} + MIRA" + (f" ({', '.join(settings)})" if settings else "")
            learners[label] = learner
        dense = None
        for label, learner in learners.items():
            epochs = sparse_epochs + debias_epochs if "B" in learner else args.epochs
            nlp, seconds = train(lang, learner, train_egs, epochs, "auto",
                                 seed=args.seed, n_buckets=args.n_buckets, features=args.features)
            parser = nlp.get_pipe("mst_parser")
            arc = parser.prediction_weights()[0]
            out = WORK / (f"{name}-sparse-B{learner['B']}" if "B" in learner else f"{name}-dense")
            if args.features != "v1":
                out = out.with_name(f"{out.name}-{args.features}")
            if args.n_buckets:
                out = out.with_name(f"{out.name}-nb{args.n_buckets}")
            if args.seed:
                out = out.with_name(f"{out.name}-seed{args.seed}")
            nlp.to_disk(out)
            arc_file = common.arc_weight_stats(out / "mst_parser")
            scores = nlp.evaluate(dev)
            row = {
                "treebank": name, "learner": label, "config": learner, "epochs": epochs, "seed": args.seed,
                "features": args.features,
                "decoder": parser.decoder, "train_seconds": seconds,
                "uas": 100 * scores["dep_uas"], "las": 100 * scores["dep_las"],
                "nonzero": int(np.count_nonzero(arc)), "n_buckets": int(arc.size),
                "arc_file": arc_file["arc_file"], "arc_file_bytes": arc_file["arc_file_bytes"],
                "component_bytes": common.dir_bytes(out / "mst_parser"),
                "parse_words_per_s": parse_speed(nlp, dev),
            }
            if hasattr(parser.learner, "groups"):
                groups = parser.learner.groups()
                row["groups_total"] = len(groups)
                row["groups_kept"] = [g["name"] for g in groups if g["kept"]]
                row["group_collisions"] = int(parser.learner.collisions)
                row["overlap"] = parser.learner.overlap
                row["support"] = parser.learner.support
                row["groups"] = groups
            if "B" not in learner:
                dense = row
            elif dense is not None:
                row["uas_vs_dense"] = row["uas"] - dense["uas"]
                row["nonzero_vs_dense_pct"] = 100 * row["nonzero"] / max(1, dense["nonzero"])
                row["arc_file_ratio"] = dense["arc_file_bytes"] / row["arc_file_bytes"]
            rows.append(row)
            print(json.dumps({k: v for k, v in row.items() if k not in ("groups_kept", "groups")}),
                  flush=True)
            # Partial results survive an interrupted run.
            Path(args.output).parent.mkdir(parents=True, exist_ok=True)
            Path(args.output).write_text(json.dumps({"table": rows, "partial": True}, indent=1))
            del nlp, parser
    return {"table": rows}


def run_groups(args):
    """How the feature groups share the hashed table on the gold trees of a
    training set: (bucket, group) pairs, distinct buckets, buckets per
    group, and for every sparseptron row of the ``--kept-from`` JSON files
    the number of buckets its kept groups use (any of them)."""
    from spacy_mstparse.features import feature_groups as fg

    name = args.treebanks.split(",")[0]
    lang, train_file, _ = TREEBANKS[name]
    nlp = spacy.blank(lang)
    config = {}
    if args.n_buckets:
        config["features"] = {"@mst_features": "spacy_mstparse.FirstOrderFeatures.v1",
                              "n_buckets": args.n_buckets}
    nlp.add_pipe("mst_parser", config=config)
    train_egs = common.gold_examples(args.data_dir / train_file, nlp.vocab)
    parser = nlp.get_pipe("mst_parser")
    parser.initialize(lambda: train_egs[:10], nlp=nlp)
    features = parser.model_features.first_order
    keys = []
    for sentence, heads in common.encoded_gold(parser, train_egs):
        ids, groups = fg.tree_features_grouped(features, sentence, heads)
        keys.append(np.unique(ids.astype(np.int64) * 256 + groups))
    pairs = np.unique(np.concatenate(keys))
    buckets, gids = pairs // 256, pairs % 256
    sizes = {fg.group_name(int(g)): int((gids == g).sum()) for g in np.unique(gids)}
    ids_of = {fg.group_name(int(g)): int(g) for g in np.unique(gids)}
    out = {"treebank": name, "n_buckets": int(features.n_buckets), "pairs": int(len(pairs)),
           "distinct_buckets": int(len(np.unique(buckets))),
           "group_buckets": dict(sorted(sizes.items(), key=lambda kv: -kv[1])), "rows": []}
    for path in filter(None, (args.kept_from or "").split(",")):
        for row in json.loads(Path(path).read_text())["table"]:
            if "groups_kept" not in row or row.get("n_buckets") != features.n_buckets:
                continue
            kept = [ids_of[g] for g in row["groups_kept"] if g in ids_of]
            used = int(len(np.unique(buckets[np.isin(gids, kept)])))
            out["rows"].append({"file": path, "learner": row["learner"], "nonzero": row["nonzero"],
                                "kept_groups_gold_buckets": used,
                                "nonzero_share_of_those": row["nonzero"] / used})
    print(json.dumps({k: v for k, v in out.items() if k != "group_buckets"}, indent=1))
    return out


def run_ssvm(args):
    from spacy_mstparse.graph import primal_objective

    lang, train_file, dev_file = TREEBANKS["en_ewt"]
    vocab = spacy.blank(lang).vocab
    train_egs = common.gold_examples(args.data_dir / train_file, vocab, args.n_train)
    dev = common.gold_examples(args.data_dir / dev_file, vocab)
    curves = {}
    # L(0): the mean number of words, an upper bound on the mean structured
    # hinge loss at w = 0 (for the ball Pegasos-DP's radius).
    loss0 = float(np.mean([len(eg.reference) for eg in train_egs]))
    radius = (2.0 * loss0 / args.lam) ** 0.5
    pegasos = {"@mst_learners": "spacy_mstparse.Pegasos.v1", "lam": args.lam, "k": 10,
               "averaged": True}
    runs = [("one_slack", {"@mst_learners": "spacy_mstparse.OneSlackSSVM.v1", "lam": args.lam,
                           "eps": args.eps, "cache_size": args.cache_size,
                           "max_cache_rounds": args.max_cache_rounds,
                           "warm_start": args.warm_start, "verbose": True,
                           "exact_every": args.exact_every, "relative_eps": args.relative_eps},
             args.max_iter, args.eval_every),
            ("pegasos", pegasos, args.pegasos_epochs, args.pegasos_eval_every)]
    if args.ball_pegasos:
        for averaged in (True, False):
            runs.append((f"pegasos_ball_{'avg' if averaged else 'last'}",
                         {**pegasos, "averaged": averaged, "radius": radius},
                         args.pegasos_epochs, args.pegasos_eval_every))
    for label, learner, epochs, every in runs:
        points = []
        passes = []
        gold = []

        def objective(nlp):
            """Primal objective (lam/2 ||w||^2 + mean structured hinge) of the
            prediction weights (averaged ones for Pegasos) on the training set."""
            parser = nlp.get_pipe("mst_parser")
            if not gold:
                gold.extend(common.encoded_gold(parser, train_egs))
            return primal_objective(parser.graph, gold, parser.prediction_weights()[0], args.lam)

        def on_epoch(epoch, nlp, elapsed, every=every, epochs=epochs):
            learner_obj = nlp.get_pipe("mst_parser").learner
            converged = bool(getattr(learner_obj, "converged", False))
            if getattr(learner_obj, "history", None):
                passes.append(dict(learner_obj.history[-1], train_seconds=elapsed))
            if (epoch + 1) % every and not converged and epoch + 1 != epochs:
                return False
            uas = 100 * nlp.evaluate(dev)["dep_uas"]
            point = {"epoch": epoch + 1, "train_seconds": elapsed, "uas": uas,
                     "objective": objective(nlp)}
            if getattr(learner_obj, "history", None):
                point.update({k: learner_obj.history[-1][k] for k in ("primal", "dual", "gap")})
            points.append(point)
            print(label, json.dumps(point), flush=True)
            return converged

        nlp, seconds = train(lang, learner, train_egs, epochs, "eisner", on_epoch=on_epoch,
                             n_buckets=args.n_buckets)
        learner_obj = nlp.get_pipe("mst_parser").learner
        curve = {"config": learner, "points": points, "train_seconds": seconds}
        if passes:
            curve["history"] = passes
            curve["converged"] = bool(learner_obj.converged)
        curves[label] = curve
    summary = {"radius_lee": 1 / args.lam ** 0.5, "radius_ball": radius, "loss0": loss0}
    summary.update({k: {"final_uas": v["points"][-1]["uas"],
                   "final_objective": v["points"][-1]["objective"],
                   "train_seconds": v["points"][-1]["train_seconds"],
                   "epochs": v["points"][-1]["epoch"]} for k, v in curves.items()})
    ssvm = curves["one_slack"]
    if "history" in ssvm:
        last = ssvm["history"][-1]
        summary["one_slack"].update({"converged": ssvm["converged"], "final_gap": last["gap"],
                                     "final_dual": last["dual"], "eps": args.eps,
                                     "final_relative_gap": last.get("relative_gap"),
                                     "eps_relative_to_primal": args.eps / last["primal"]})
    target = summary["one_slack"]["final_uas"]
    for label in curves:
        if label.startswith("pegasos"):
            within = [p for p in curves[label]["points"] if abs(p["uas"] - target) <= 0.3]
            summary[label]["first_within_0.3_of_ssvm_final"] = within[0] if within else None
            summary[label]["uas_minus_ssvm"] = summary[label]["final_uas"] - target
            summary[label]["objective_minus_ssvm"] = (summary[label]["final_objective"]
                                                      - summary["one_slack"]["final_objective"])
    print(json.dumps(summary, indent=1), flush=True)
    if args.png:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("matplotlib not installed: no PNG", file=sys.stderr)
        else:
            names = {"pegasos": "Pegasos-DP (k=10, averaged, radius 1/sqrt(lam))",
                     "one_slack": "1-slack S-SVM",
                     "pegasos_ball_avg": "Pegasos-DP, radius sqrt(2L(0)/lam), averaged",
                     "pegasos_ball_last": "Pegasos-DP, radius sqrt(2L(0)/lam), last iterate"}
            fig, (ax, bx, cx) = plt.subplots(1, 3, figsize=(16, 4))
            for label, curve in curves.items():
                xs = [p["train_seconds"] for p in curve["points"]]
                ax.plot(xs, [p["uas"] for p in curve["points"]], marker="o", ms=3,
                        label=names[label])
                bx.plot(xs, [p["objective"] for p in curve["points"]], marker="o", ms=3,
                        label=f"{names[label]}: primal")
            if "history" in ssvm:
                bx.plot([h["train_seconds"] for h in ssvm["history"]],
                        [h["dual"] for h in ssvm["history"]], ls="--",
                        label="1-slack S-SVM: dual bound")
            if "history" in ssvm:
                exact = [h for h in ssvm["history"] if h.get("exact", True)]
                cx.semilogy([h["train_seconds"] for h in exact],
                            [h["gap"] / h["primal"] for h in exact], marker="o", ms=3,
                            label="1-slack S-SVM: duality gap / primal")
                for h in exact:
                    cx.annotate(str(h.get("pass", "")), (h["train_seconds"], h["gap"] / h["primal"]),
                                fontsize=6)
                cx.axhline(0.01, color="grey", ls=":", label="1% of the primal")
                cx.set_xlabel("training time (s, excluding evaluation); labels: pass")
                cx.set_ylabel("relative duality gap")
                cx.legend()
            ax.axhspan(target - 0.3, target + 0.3, color="grey", alpha=0.2,
                       label="S-SVM final UAS +- 0.3")
            ax.set_xlabel("training time (s, excluding evaluation)")
            ax.set_ylabel("EWT dev UAS")
            ax.legend()
            finals = [c["points"][-1]["objective"] for c in curves.values()]
            bx.set_ylim(0.9 * min(finals), 1.5 * max(finals))
            bx.set_xlabel("training time (s, excluding evaluation)")
            bx.set_ylabel("objective")
            bx.legend()
            fig.suptitle(f"lambda = {args.lam:g}, first {len(train_egs)} EWT training sentences")
            fig.tight_layout()
            fig.savefig(args.png, dpi=120)
    return {"n_train": len(train_egs), "lam": args.lam, "summary": summary, "curves": curves}


def run_settings(args):
    """The 1-slack SSVM's gap per decoding pass under learner settings
    (``--settings name=JSON;...``, each over the shipped config's learner):
    ``GraphTrainer`` over the first ``--n-train`` EWT sentences, encoded
    once, reshuffled every pass (``random.Random(0)``), no dev evaluation;
    the learner's history (gap, dual, sweep seconds) per pass."""
    import random

    from spacy_mstparse.graph.training import GraphTrainer
    from spacy_mstparse.learners.one_slack import OneSlackSSVM

    config = spacy.util.load_config(Path(__file__).resolve().parents[1] / "configs"
                                    / "mst_parser_ssvm.cfg")
    component = dict(config["components"]["mst_parser"])
    component.pop("factory")
    shipped = {k: v for k, v in component["learner"].items() if not k.startswith("@")}
    component["learner"] = {"@mst_learners": "spacy_mstparse.MIRA.v1"}   # replaced below
    nlp = spacy.blank("en")
    parser = nlp.add_pipe("mst_parser", config=component)
    lang, train_file, _ = TREEBANKS["en_ewt"]
    egs = common.gold_examples(args.data_dir / train_file, nlp.vocab, args.n_train)
    nlp.initialize(lambda: egs)
    data = common.encoded_gold(parser, egs)
    runs = {}
    for item in filter(None, args.settings.split(";")):
        name, extra = item.split("=", 1)
        settings = {**shipped, "lam": args.lam, "verbose": False, **json.loads(extra)}
        learner = OneSlackSSVM(**settings)
        trainer = GraphTrainer(parser.graph, learner)
        trainer.begin(list(data))
        rng = random.Random(0)
        order = list(data)
        cpu = time.process_time()
        for _ in range(args.max_iter):
            rng.shuffle(order)
            trainer.train((s, h, None) for s, h in order)
            trainer.flush()
            if learner.converged:
                break
        runs[name] = {"settings": settings, "cpu_seconds": time.process_time() - cpu,
                      "history": learner.history}
        exact = [(h["pass"], round(100 * h["relative_gap"], 2)) for h in learner.history
                 if h["exact"]]
        print(name, json.dumps({"cpu_seconds": runs[name]["cpu_seconds"], "gap_pct": exact}),
              flush=True)
    return {"n_train": len(data), "lam": args.lam, "runs": runs}


def disk_kb(path: Path) -> int:
    """``du -sk``: the blocks the files under ``path`` take, in KB."""
    return sum(f.stat().st_blocks * 512 for f in path.rglob("*") if f.is_file()) // 1024 + sum(
        4 for d in [path, *path.rglob("*")] if d.is_dir())


def run_sizes(args):
    """Sizes and dev scores of trained pipelines: ``--runs name=OUTPUT_DIR,...``
    (``spacy train --output`` directories; with ``OUTPUT_DIR.log`` holding
    ``/usr/bin/time -v``'s report, the training time and peak RSS too)."""
    rows = {}
    for item in args.runs.split(","):
        name, out = item.split("=")
        best = Path(out) / "model-best"
        meta = json.loads((best / "meta.json").read_text())
        row = {"output": out, "model_best_kb": disk_kb(best),
               "files_kb": {str(f.relative_to(best)): f.stat().st_blocks // 2
                            for f in sorted(best.rglob("*")) if f.is_file()},
               "dev_uas": 100 * meta["performance"]["dep_uas"],
               "dev_las": 100 * meta["performance"]["dep_las"]}
        log = Path(out + ".log")
        if log.exists():
            text = log.read_text()
            for key, label in (("wall", "Elapsed (wall clock) time"),
                               ("user_seconds", "User time (seconds)"),
                               ("system_seconds", "System time (seconds)"),
                               ("peak_rss_kb", "Maximum resident set size (kbytes)")):
                lines = [line for line in text.splitlines() if label in line]
                if lines:
                    row[key] = lines[-1].rsplit(": ", 1)[-1].strip()
            # the 1-slack SSVM's progress lines and spaCy's dev evaluations
            # (epoch, step, dev UAS)
            row["progress"] = [line for line in text.splitlines()
                               if line.startswith("[one-slack]")]
            evals = [line.split() for line in text.splitlines()]
            row["dev_evals"] = [[int(f[0]), int(f[1]), float(f[3])] for f in evals
                                if len(f) > 4 and f[0].isdigit() and f[1].isdigit()]
        if args.primal_train:
            row["primal"] = primal_of_pipeline(best, args.primal_train, args.lam)
            row["primal_lam"] = args.lam
        rows[name] = row
        print(name, json.dumps({k: v for k, v in row.items() if k not in ("files_kb", "progress")}),
              flush=True)
    if args.png and any(row.get("progress") for row in rows.values()):
        plot_gap_curves(rows, args.png)
    if args.reference and args.reference in rows:
        ref = rows[args.reference]
        for name, row in rows.items():
            row["size_ratio_reference_over_this"] = ref["model_best_kb"] / row["model_best_kb"]
            row["dev_uas_minus_reference"] = row["dev_uas"] - ref["dev_uas"]
    return {"runs": rows, "reference": args.reference}


def exact_passes(progress):
    """(pass, relative gap, seconds) of each exact pass in [one-slack] progress lines."""
    points = []
    for line in progress:
        m = re.match(r"\[one-slack\] pass (\d+): primal \S+  dual \S+  gap \S+ \((\S+)%\)"
                     r".* (\S+) s$", line)
        if m:
            points.append((int(m.group(1)), float(m.group(2)) / 100, float(m.group(3))))
    return points


def plot_gap_curves(rows, png):
    """The certified relative duality gap of each 1-slack run against training
    minutes (labels: the pass), with the 1% line."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot", file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, row in rows.items():
        points = exact_passes(row.get("progress", []))
        if not points:
            continue
        xs = [seconds / 60 for _, _, seconds in points]
        ax.semilogy(xs, [gap for _, gap, _ in points], marker="o", ms=3, label=name)
        for (n, gap, _), x in zip(points, xs):
            if n % 6 == 1 or (n, gap) == points[-1][:2]:
                ax.annotate(str(n), (x, gap), fontsize=7)
    ax.axhline(0.01, color="grey", ls=":", label="1% of the primal")
    ax.set_xlabel("training minutes (labels: pass)")
    ax.set_ylabel("certified duality gap / primal")
    ax.legend()
    fig.tight_layout()
    fig.savefig(png, dpi=120)


def primal_of_pipeline(path: Path, train: str, lam: float) -> float:
    """The 1-slack primal objective (lam / 2 ||w||^2 + mean structured hinge,
    ``spacy_mstparse.graph.primal_objective``) of a trained pipeline's arc
    weights over the training corpus ``train`` (.spacy, gold tags)."""
    from spacy.util import resolve_dot_names

    from spacy_mstparse.graph import primal_objective

    nlp = spacy.load(path, config={"paths": {"dev": train, "train": train}})
    parser = nlp.get_pipe("mst_parser")
    corpus, = resolve_dot_names(nlp.config.interpolate(), ["corpora.train"])
    gold = common.encoded_gold(parser, corpus(nlp))
    start = time.perf_counter()
    value = primal_objective(parser.graph, gold, parser.graph.arc_weights, lam)
    print(f"primal of {path} at lam {lam}: {value:.5f} ({len(gold)} sentences, "
          f"{time.perf_counter() - start:.0f} s)", flush=True)
    return value


def run_compact(args):
    """Dev scores and weight-archive sizes of a trained pipeline (``--model``,
    a model-best directory) with its prediction weights compacted after the
    fact (``--grid "arc_density,label_density,levels;..."``: what the
    component's settings of those names would predict with and save,
    ``learners.sparse_weights.compact``), on ``--dev`` (a .spacy file, read
    by the pipeline's own dev corpus reader, gold tags)."""
    from spacy.util import resolve_dot_names

    from spacy_mstparse.components import serialization as ser
    from spacy_mstparse.learners.sparse_weights import compact

    nlp = spacy.load(args.model, config={"paths": {"dev": args.dev, "train": args.dev}})
    parser = nlp.get_pipe("mst_parser")
    corpus, = resolve_dot_names(nlp.config.interpolate(), ["corpora.dev"])
    dev = list(corpus(nlp))
    arc0, label0 = parser.graph.arc_weights.copy(), parser.graph.label_weights.copy()
    rows = []
    for item in args.grid.split(";"):
        arc_density, label_density, levels = item.split(",")
        arc = compact(arc0, float(arc_density), int(levels))
        label = compact(label0, float(label_density), int(levels))
        parser.graph.set_weights(arc, label)
        scores = nlp.evaluate(dev)
        rows.append({"arc_density": float(arc_density), "label_density": float(label_density),
                     "levels": int(levels), "nnz_arc": int(np.count_nonzero(arc)),
                     "nnz_label": int(np.count_nonzero(label)),
                     "arc_weights_kb": len(ser.dump_weight_vector(arc, True)) / 1024,
                     "label_weights_kb": len(ser.dump_weight_vector(label, True)) / 1024,
                     "dev_uas": 100 * scores["dep_uas"], "dev_las": 100 * scores["dep_las"]})
        print(json.dumps(rows[-1]), flush=True)
    return {"model": args.model, "n_arc_weights": int(arc0.shape[0]),
            "n_label_weights": int(label0.shape[0]), "rows": rows}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=["table", "ssvm", "groups", "sizes", "compact", "settings"])
    ap.add_argument("--model", default=None, help="compact: a trained pipeline (model-best)")
    ap.add_argument("--dev", default=None, help="compact: the dev corpus (.spacy)")
    ap.add_argument("--grid", default="1,1,127",
                    help="compact: arc_density,label_density,levels;... (one row each)")
    ap.add_argument("--settings", default="",
                    help="settings: name=JSON learner settings over the shipped config's;...")
    ap.add_argument("--runs", default="",
                    help="sizes: name=spacy-train-output-dir,... (model-best measured)")
    ap.add_argument("--reference", default="default", help="sizes: the run compared with")
    ap.add_argument("--primal-train", default=None,
                    help="sizes: the training corpus (.spacy) on which to compute each model's "
                         "1-slack primal objective at --lam")
    ap.add_argument("--output", required=True)
    ap.add_argument("--treebanks", default="en_ewt,tr_imst,hu_szeged")
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--B", default="40", help="group budget(s), comma-separated")
    ap.add_argument("--no-dense", action="store_true", help="table: sparse rows only")
    ap.add_argument("--features", choices=("v1", "v2"), default="v1",
                    help="table: first-order feature set (v1: the earlier tables; v2: the shipped)")
    ap.add_argument("--dense-k", type=int, default=1,
                    help="table: k of the dense reference (k-best MIRA; 5 is the default learner)")
    ap.add_argument("--n-buckets", type=int, default=None,
                    help="table: size of the hashed arc-weight table (default: the factory's)")
    ap.add_argument("--overlap", default=None,
                    help="table: the sparseptron's overlap setting (default: the learner's)")
    ap.add_argument("--support", default=None, choices=["all", "gold"],
                    help="table: the sparseptron's support setting (default: the learner's)")
    ap.add_argument("--seed", type=int, default=0, help="table: training-order shuffle seed")
    ap.add_argument("--sparse-epochs", type=int, default=0,
                    help="table: epochs of the sparse stage (default: half of --epochs)")
    ap.add_argument("--debias-epochs", type=int, default=0,
                    help="table: epochs of debiasing (default: --epochs minus the sparse ones)")
    ap.add_argument("--shrink-every", type=int, default=32)
    ap.add_argument("--n-train", type=int, default=2000, help="EWT training prefix for ssvm")
    ap.add_argument("--lam", type=float, default=1e-3)
    ap.add_argument("--eps", type=float, default=0.01)
    ap.add_argument("--max-iter", type=int, default=60)
    ap.add_argument("--cache-size", type=int, default=10,
                    help="ssvm: trees cached per sentence (0: the plain cutting-plane solver)")
    ap.add_argument("--max-cache-rounds", type=int, default=10,
                    help="ssvm: cache sweeps between decoding passes")
    ap.add_argument("--warm-start", type=int, default=1, help="ssvm: online warm-start passes")
    ap.add_argument("--exact-every", type=int, default=1,
                    help="ssvm: after the warm start, every k-th pass exact (the others online)")
    ap.add_argument("--relative-eps", action="store_true", help="ssvm: stop at gap <= eps * primal")
    ap.add_argument("--pegasos-epochs", type=int, default=20)
    ap.add_argument("--eval-every", type=int, default=1,
                    help="ssvm: evaluate the 1-slack model every N passes (and at the end)")
    ap.add_argument("--pegasos-eval-every", type=int, default=1)
    ap.add_argument("--ball-pegasos", action="store_true",
                    help="ssvm: also run Pegasos-DP with radius sqrt(2 L(0)/lam) (the registered Pegasos.v1 with radius set)")
    ap.add_argument("--png", default=None,
                    help="ssvm: the curves; sizes: the runs' certified gap against time")
    ap.add_argument("--data-dir", type=Path, default=common.DATA,
                    help="where the UD .conllu files are (default ../shared/data/ud)")
    ap.add_argument("--kept-from", default=None,
                    help="groups: comma-separated table JSONs whose kept groups to measure")
    args = ap.parse_args()
    if not args.data_dir.exists():
        sys.exit(f"treebanks not found at {args.data_dir} (../shared/data/ud relative to the repo)")
    WORK.mkdir(parents=True, exist_ok=True)
    started = time.time()
    result = {"table": run_table, "ssvm": run_ssvm, "groups": run_groups,
              "sizes": run_sizes, "compact": run_compact, "settings": run_settings}[args.what](args)
    result["meta"] = {
        "command": common.invocation("bench_sparse_ssvm"),
        "commit": common.git("rev-parse", "--short", "HEAD"),
        "python": platform.python_version(), "spacy": spacy.__version__,
        "load_average": os.getloadavg(), "wall_seconds": time.time() - started,
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
