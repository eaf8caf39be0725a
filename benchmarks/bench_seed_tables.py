"""Reproduce the seeds' comparisons on the UD treebanks in ../shared/data/ud.

Tables (see BENCHMARKS.md for the figures):

1. Lee et al. (2010) Table 1 analog: UAS of MIRA (averaged, k-best, k = 5),
   PA-I (averaged), Pegasos-DP (non-averaged and averaged, k = 10, lambda
   chosen on dev from the paper's grid) and second order, with gold tags.
2. Lee et al. (2010) Figure 2 analog: UAS against cumulative training time
   (one point per epoch) for Pegasos-DP, MIRA and PA-I on one treebank (PNG).
3. Nguyen et al. (2007) Table 5 analog: PA-I labeled and unlabeled accuracy
   with projective (Eisner) and non-projective (Chu-Liu-Edmonds) decoding
   side by side, and the share of the gold non-projective arcs each recovers.
4. First vs second order: accuracy gain against parsing speed.
5. Direction back-off ablation: systems ``mira_v1`` / ``o2_mira_v1`` are
   ``mira`` / ``o2_mira`` with ``FirstOrderFeatures.v1`` (no direction-only
   conjunction); ``--seed`` changes the shuffles, ``--run-suffix`` keeps
   runs with different seeds apart.

Protocol: English EWT train -> dev, Turkish IMST and Hungarian Szeged
train -> test (the dev files choose Pegasos' lambda); gold words, sentence
boundaries, UPOS and XPOS; one sentence per Doc, shuffled each epoch (seed
0), 10 epochs, batches of 20 sentences (a multiple of Pegasos' k = 10);
model after the last epoch. Every run is one subprocess (``--worker``)
training through the component's own ``initialize`` / ``update`` API (the
loop ``spacy train`` runs, without its periodic evaluations), so that
training time counts only the updates. After each epoch the averaged model
(and, for Pegasos, also the current, non-averaged one) is evaluated with
the project's scorer (``spacy_mstparse.scoring.attachment_scores``;
punctuation = gold label ``punct``, excluded from UAS/LAS). Parse speed is
words per second of ``parser.pipe`` alone on the evaluation file after the
last epoch (one process, one core).

With ``--snapshot`` (recommended on a shared checkout) the committed tree is
exported and built under ``benchmarks/work/src/<commit>`` and the workers
import that copy, so concurrent edits cannot change the code mid-run.

Usage::

    .venv/bin/python -m benchmarks.bench_seed_tables --snapshot            # everything
    .venv/bin/python -m benchmarks.bench_seed_tables --treebanks hu_szeged --quick

Results: ``benchmarks/results/seed_tables.json`` (every run with its
per-epoch curve), ``benchmarks/results/seed_tables.md`` (the tables) and
``benchmarks/results/seed_tables_curves.png``.
"""
import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

from benchmarks import common
from benchmarks.common import DATA, FEATURES_V1, MIRA_K5, PA_I, REPO_ROOT

TREEBANKS = {
    # name: (lang, train, eval split used for the tables, dev for selection)
    "en_ewt": ("en", "en_ewt-ud-train.conllu", "en_ewt-ud-dev.conllu", "en_ewt-ud-dev.conllu"),
    "tr_imst": ("tr", "tr_imst-ud-train.conllu", "tr_imst-ud-test.conllu", "tr_imst-ud-dev.conllu"),
    "hu_szeged": ("hu", "hu_szeged-ud-train.conllu", "hu_szeged-ud-test.conllu",
                  "hu_szeged-ud-dev.conllu"),
}
LAMBDAS = [1e-2, 3.3e-2, 1e-3, 3.3e-3, 1e-4]


def systems(lambdas: List[float]) -> Dict[str, Dict[str, Any]]:
    out = {
        "mira": {"order": 1, "decoder": "eisner", "learner": MIRA_K5},
        "pa": {"order": 1, "decoder": "eisner", "learner": PA_I},
        "pa_cle": {"order": 1, "decoder": "chu_liu_edmonds", "learner": PA_I},
        "o2_pa": {"order": 2, "decoder": "eisner", "learner": PA_I},
        "o2_pa_cle": {"order": 2, "decoder": "chu_liu_edmonds", "learner": PA_I},
        "o2_mira": {"order": 2, "decoder": "eisner", "learner": MIRA_K5},
        # Projective vs non-projective decoding with the default learner, and "auto".
        "mira_cle": {"order": 1, "decoder": "chu_liu_edmonds", "learner": MIRA_K5},
        "mira_auto": {"order": 1, "decoder": "auto", "learner": MIRA_K5},
        "o2_mira_cle": {"order": 2, "decoder": "chu_liu_edmonds", "learner": MIRA_K5},
        "o2_mira_auto": {"order": 2, "decoder": "auto", "learner": MIRA_K5},
        # One tree per update, as second-order CLE trained before its approximate k-best list.
        "o2_mira_cle_k1": {"order": 2, "decoder": "chu_liu_edmonds",
                           "learner": {**MIRA_K5, "k": 1}},
        "mira_v1": {"order": 1, "decoder": "eisner", "learner": MIRA_K5, "features": FEATURES_V1},
        "o2_mira_v1": {"order": 2, "decoder": "eisner", "learner": MIRA_K5,
                       "features": FEATURES_V1},
    }
    for lam in lambdas:
        out[f"pegasos_{lam:g}"] = {
            "order": 1, "decoder": "eisner",
            "learner": {"@mst_learners": "spacy_mstparse.Pegasos.v1", "lam": lam, "k": 10,
                        "averaged": True},
        }
    return out


# ---------------------------------------------------------------------------
# Worker: one (treebank, system) training run
# ---------------------------------------------------------------------------


def sentence_arrays(doc):
    """Per sentence: gold heads (1-based, 0 = root, index 0 unused) and labels."""
    from spacy_mstparse.corpus.conll import sentence_bounds

    out = []
    for start, end in sentence_bounds(doc):
        heads = [-1]
        labels = [""]
        for token in doc[start:end]:
            heads.append(0 if token.head.i == token.i else token.head.i - start + 1)
            labels.append(token.dep_)
        out.append((start, end, heads, labels))
    return out


def evaluate(parser, input_docs, gold_arrays) -> Dict[str, Any]:
    from spacy_mstparse.decoders.trees import nonprojective_arcs
    from spacy_mstparse.scoring import attachment_scores

    parsed, seconds = common.timed_pipe(parser, input_docs)
    gh, gl, ph, pl = [], [], [], []
    nonproj = nonproj_ok = 0
    for doc, sents in zip(parsed, gold_arrays):
        for s, e, heads, labels in sents:
            pred = [-1] + [0 if t.head.i == t.i else t.head.i - s + 1 for t in doc[s:e]]
            gh += heads[1:]
            gl += labels[1:]
            ph += pred[1:]
            pl += [t.dep_ for t in doc[s:e]]
            for c in nonprojective_arcs(heads):
                nonproj += 1
                nonproj_ok += pred[c] == heads[c]
    scores = attachment_scores(gh, gl, ph, pl)
    scores["nonprojective_arcs"] = nonproj
    scores["nonprojective_recall"] = 100.0 * nonproj_ok / nonproj if nonproj else None
    scores["parse_seconds"] = seconds
    scores["words_per_second"] = len(gh) / seconds if seconds else None
    return scores


def worker(args) -> int:
    import spacy

    from spacy_mstparse.components import mst_parser  # noqa: F401 (factory)
    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.pipeline_input import make_input_docs
    from spacy_mstparse.graph import DECODERS

    lang, train_file, eval_file, dev_file = TREEBANKS[args.treebank]
    if args.eval_split == "dev":
        eval_file = dev_file
    data = Path(args.data_dir)
    config = json.loads(args.system_config)
    nlp = spacy.blank(lang)
    parser = nlp.add_pipe("mst_parser", config=config)
    t0 = time.perf_counter()
    examples = common.gold_examples(data / train_file, nlp.vocab, args.train_limit)
    splits = {"eval": eval_file}
    if dev_file != eval_file:
        splits["dev"] = dev_file
    inputs, golds = {}, {}
    for split, name in splits.items():
        gold = list(read_conllu(data / name, nlp.vocab, n_sents=1))
        inputs[split] = make_input_docs(gold, nlp.vocab, gold_tags=True)
        golds[split] = [sentence_arrays(d) for d in gold]
    load_seconds = time.perf_counter() - t0
    t0 = time.perf_counter()
    nlp.initialize(lambda: examples)
    init_seconds = time.perf_counter() - t0
    pegasos = "Pegasos" in config.get("learner", {}).get("@mst_learners", "")
    curve = []

    def on_epoch(epoch: int, losses: Dict[str, float], seconds: float) -> bool:
        point: Dict[str, Any] = {"epoch": epoch, "train_seconds": init_seconds + seconds,
                                 "loss": losses.get(parser.name, 0.0)}
        for split in splits:
            point[split] = evaluate(parser, inputs[split], golds[split])
        if pegasos:  # the current (last) iterate too, then back to the average
            parser.learner.averaged = False
            parser.trainer.install_weights()
            for split in splits:
                point[f"{split}_nonaveraged"] = evaluate(parser, inputs[split], golds[split])
            parser.learner.averaged = True
            parser.trainer.install_weights()
        history = getattr(parser.learner, "history", None)
        if history:  # the 1-slack SSVM: its objective and duality gap after this pass
            point["one_slack"] = {key: history[-1][key]
                                  for key in ("iteration", "primal", "dual", "gap")}
        curve.append(point)
        print(f"[{args.treebank} {args.system}] epoch {epoch}: {point['train_seconds']:.0f}s "
              f"train, eval UAS {point['eval']['uas']:.2f} LAS {point['eval']['las']:.2f}",
              file=sys.stderr, flush=True)
        return False

    train_seconds = init_seconds + common.train_epochs(
        parser, examples, args.epochs, args.batch_size, common.numpy_orders(args.seed), on_epoch)
    # The trained weights decoded with the other decoder too (trained with
    # one, parsed with the other: which of the two matters).
    trained_with = parser.graph.decoder
    for other in DECODERS:
        if other != trained_with:
            parser.graph.decoder = other
            curve[-1][f"eval_decoded_{other}"] = evaluate(parser, inputs["eval"], golds["eval"])
    parser.graph.decoder = trained_with
    result = {
        "treebank": args.treebank,
        "system": args.system,
        "config": config,
        "train_sentences": len(examples),
        "train_words": sum(len(eg.reference) for eg in examples),
        "epochs": args.epochs,
        "batch_size": args.batch_size,
        "shuffle_seed": args.seed,
        "eval_file": eval_file,
        "decoder": parser.decoder,  # what "auto" chose
        "decoder_choice": parser.cfg.get("decoder_choice"),
        "init_seconds": init_seconds,
        "load_seconds": load_seconds,
        "train_seconds": train_seconds,
        "final": curve[-1],
        "curve": curve,
    }
    Path(args.worker_output).write_text(json.dumps(result, indent=1))
    return 0


# ---------------------------------------------------------------------------
# Orchestrator
# ---------------------------------------------------------------------------


def pick_lambda(runs: Dict[str, Any], treebank: str, averaged: bool) -> Optional[str]:
    """The Pegasos run with the best dev UAS (eval split when no dev split)."""
    key = "dev" if averaged else "dev_nonaveraged"
    best, best_uas = None, -1.0
    for name, run in runs.items():
        if run["treebank"] != treebank or not run["system"].startswith("pegasos_") or "@" in name:
            continue  # (runs with a suffix are extra runs, not the protocol's)
        final = run["final"]
        uas = (final.get(key) or final["eval" if averaged else "eval_nonaveraged"])["uas"]
        if uas > best_uas:
            best, best_uas = name, uas
    return best


def f2(x) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def markdown(results: Dict[str, Any]) -> str:
    runs = results["runs"]
    treebanks = [t for t in TREEBANKS if any(r["treebank"] == t for r in runs.values())]
    lines = []

    def get(tb, system):
        return runs.get(f"{tb}/{system}")

    split_note = {t: ("dev" if t == "en_ewt" else "test") for t in treebanks}
    lines.append("Table 1 (Lee et al. 2010, Table 1 analog): UAS without punctuation, "
                 "gold tags, 10 epochs")
    lines.append("")
    lines.append("| system | " + " | ".join(f"{t} ({split_note[t]})" for t in treebanks) + " |")
    lines.append("|---|" + "---|" * len(treebanks))
    rows = [("MIRA (averaged, k = 5)", lambda t: get(t, "mira"), "eval"),
            ("PA-I (averaged, C = 0.05)", lambda t: get(t, "pa"), "eval")]
    for label, key in (("Pegasos-DP (k = 10)", "eval_nonaveraged"),
                       ("Pegasos-DP (averaged, k = 10)", "eval")):
        averaged = key == "eval"
        rows.append((label, (lambda avg: lambda t: runs.get(pick_lambda(runs, t, avg) or ""))(averaged), key))
    rows.append(("second order (PA-I, Eisner)", lambda t: get(t, "o2_pa"), "eval"))
    rows.append(("second order (MIRA k = 5, Eisner)", lambda t: get(t, "o2_mira"), "eval"))
    for label, fn, key in rows:
        cells = []
        for t in treebanks:
            run = fn(t)
            if run is None:
                cells.append("—")
                continue
            cell = f2(run["final"][key]["uas"])
            lam = run["config"].get("learner", {}).get("lam")
            if run["system"].startswith("pegasos_") and lam is not None:
                cell += f" (λ={lam:g})"
            cells.append(cell)
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Pegasos-DP λ grid (UAS on the selection split, averaged / non-averaged):")
    lines.append("")
    lines.append("| treebank | " + " | ".join(f"λ={lam:g}" for lam in LAMBDAS) + " |")
    lines.append("|---|" + "---|" * len(LAMBDAS))
    for t in treebanks:
        cells = []
        for lam in LAMBDAS:
            run = get(t, f"pegasos_{lam:g}")
            if run is None:
                cells.append("—")
                continue
            fin = run["final"]
            sel = "dev" if "dev" in fin else "eval"
            cells.append(f"{f2(fin[sel]['uas'])} / {f2(fin[sel + '_nonaveraged']['uas'])}")
        lines.append(f"| {t} | " + " | ".join(cells) + " |")
    extra = {k: r for k, r in runs.items() if "@" in k}
    if extra:
        lines.append("")
        lines.append("Extra runs (longer training), UAS on the table's split after each "
                     "given epoch (averaged / non-averaged for Pegasos):")
        lines.append("")
        lines.append("| run | epochs | UAS at epoch 10 | UAS at the last epoch | train min |")
        lines.append("|---|---|---|---|---|")
        for key, run in sorted(extra.items()):
            def at(point):
                cell = f2(point["eval"]["uas"])
                if "eval_nonaveraged" in point:
                    cell += f" / {f2(point['eval_nonaveraged']['uas'])}"
                return cell
            ten = run["curve"][9] if len(run["curve"]) >= 10 else None
            lines.append(f"| {key} | {run['epochs']} | {at(ten) if ten else '—'} "
                         f"| {at(run['final'])} | {run['train_seconds'] / 60:.1f} |")
    lines.append("")
    lines.append("Table 3 (Nguyen et al. 2007, Table 5 analog): PA-I, first order, "
                 "projective vs non-projective decoding")
    lines.append("")
    lines.append("| treebank | Eisner LAS | Eisner UAS | CLE LAS | CLE UAS | gold non-proj. arcs "
                 "| recovered: Eisner | recovered: CLE |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for t in treebanks:
        e, c = get(t, "pa"), get(t, "pa_cle")
        if e is None or c is None:
            continue
        ef, cf = e["final"]["eval"], c["final"]["eval"]
        lines.append(f"| {t} ({split_note[t]}) | {f2(ef['las'])} | {f2(ef['uas'])} | {f2(cf['las'])} "
                     f"| {f2(cf['uas'])} | {ef['nonprojective_arcs']} "
                     f"| {f2(ef['nonprojective_recall'])}% | {f2(cf['nonprojective_recall'])}% |")
    lines.append("")
    lines.append("Table 4: first vs second order (PA-I); speed = words/s of the parser alone")
    lines.append("")
    lines.append("| treebank | decoder | UAS o1 | UAS o2 | gain | LAS o1 | LAS o2 | words/s o1 "
                 "| words/s o2 | slowdown | train min o1 | train min o2 |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for t in treebanks:
        for dec, a, b in (("Eisner", "pa", "o2_pa"), ("CLE / approx.", "pa_cle", "o2_pa_cle")):
            r1, r2 = get(t, a), get(t, b)
            if r1 is None or r2 is None:
                continue
            f1, f2_ = r1["final"]["eval"], r2["final"]["eval"]
            lines.append(
                f"| {t} | {dec} | {f2(f1['uas'])} | {f2(f2_['uas'])} | {f2_['uas'] - f1['uas']:+.2f} "
                f"| {f2(f1['las'])} | {f2(f2_['las'])} | {f1['words_per_second']:.0f} "
                f"| {f2_['words_per_second']:.0f} | {f1['words_per_second'] / f2_['words_per_second']:.1f}x "
                f"| {r1['train_seconds'] / 60:.1f} | {r2['train_seconds'] / 60:.1f} |")
    return "\n".join(lines) + "\n"


DECODER_SYSTEMS = {1: ("mira", "mira_cle", "mira_auto"), 2: ("o2_mira", "o2_mira_cle", "o2_mira_auto")}


def decoder_table(results: Dict[str, Any]) -> str:
    """Projective vs non-projective decoding with k-best MIRA, and what
    ``auto`` picks: one row per (treebank, order, run suffix), then the mean
    over the suffixes (training orders) of each (treebank, order)."""
    runs = results["runs"]
    rows: Dict[tuple, Dict[str, Any]] = {}
    for key, run in runs.items():
        for order, names in DECODER_SYSTEMS.items():
            if run["system"] in names:
                suffix = key.split("/", 1)[1][len(run["system"]):]
                rows.setdefault((run["treebank"], order, suffix), {})[names.index(run["system"])] = run
    if not rows:
        return ""
    lines = ["Projective vs non-projective decoding (k-best MIRA, k = 5): UAS / LAS without "
             "punctuation on the evaluation file", "",
             "| treebank | order | run | Eisner | Chu-Liu-Edmonds | CLE - Eisner UAS "
             "| auto picks | auto | initialize s: auto / the same decoder fixed "
             "| trained with CLE, decoded with Eisner |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    means: Dict[tuple, List[float]] = {}

    def cell(run, key="eval"):
        if run is None or key not in run["final"]:
            return "—"
        return f"{f2(run['final'][key]['uas'])} / {f2(run['final'][key]['las'])}"

    for (tb, order, suffix), got in sorted(rows.items()):
        e, c, a = got.get(0), got.get(1), got.get(2)
        diff = c["final"]["eval"]["uas"] - e["final"]["eval"]["uas"] if e and c else None
        if diff is not None:
            means.setdefault((tb, order), []).append(diff)
        pick = a.get("decoder", "?") if a else "—"
        same = {"eisner": e, "chu_liu_edmonds": c}.get(a.get("decoder")) if a else None
        ratio = (f"{a['init_seconds']:.1f} / {same['init_seconds']:.1f}"
                 if same and "init_seconds" in same else "—")
        lines.append(f"| {tb} ({Path(next(iter(got.values())).get('eval_file', '?')).stem.split('-')[-1]}) "
                     f"| {order} | {suffix or '-'} | {cell(e)} | {cell(c)} "
                     f"| {'—' if diff is None else f'{diff:+.2f}'} | {pick} | {cell(a)} | {ratio} "
                     f"| {cell(c, 'eval_decoded_eisner')} |")
    lines += ["", "| treebank | order | runs | mean CLE - Eisner UAS | min | max |", "|---|---|---|---|---|---|"]
    for (tb, order), diffs in sorted(means.items()):
        lines.append(f"| {tb} | {order} | {len(diffs)} | {sum(diffs) / len(diffs):+.2f} "
                     f"| {min(diffs):+.2f} | {max(diffs):+.2f} |")
    return "\n".join(lines) + "\n"


def plot(results: Dict[str, Any], treebank: str, path: Path) -> bool:
    """UAS against training time on ``treebank``; False (and a message)
    when matplotlib is not installed."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        common.log("matplotlib is not installed (pip install -r benchmarks/requirements-peers.txt): "
                   "no PNG")
        return False

    runs = results["runs"]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    series = [("MIRA (k = 5)", runs.get(f"{treebank}/mira"), "eval"),
              ("PA-I", runs.get(f"{treebank}/pa"), "eval")]
    best = pick_lambda(runs, treebank, True)
    if best:
        lam = runs[best]["config"]["learner"]["lam"]
        series.append((f"Pegasos-DP averaged (λ={lam:g})", runs[best], "eval"))
        series.append((f"Pegasos-DP (λ={lam:g})", runs[best], "eval_nonaveraged"))
    for label, run, key in series:
        if run is None:
            continue
        xs = [p["train_seconds"] for p in run["curve"]]
        ys = [p[key]["uas"] for p in run["curve"]]
        ax.plot(xs, ys, marker="o", label=label)
    ax.set_xlabel("training time (s, cumulative; one point per epoch)")
    ax.set_ylabel("UAS (%, without punctuation)")
    ax.set_title(f"{treebank}: UAS vs training time (first order, gold tags)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--treebanks", default=",".join(TREEBANKS))
    p.add_argument("--systems", default=None,
                   help="comma-separated subset of: " + ", ".join(systems(LAMBDAS)))
    p.add_argument("--lambdas", default=",".join(f"{x:g}" for x in LAMBDAS),
                   help="Pegasos grid (default: Lee et al.'s)")
    p.add_argument("--extra-systems", type=Path, default=None,
                   help="JSON file of more systems: {name: mst_parser config}")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=20)
    p.add_argument("--seed", type=int, default=0, help="seed of the per-epoch shuffles")
    p.add_argument("--eval-split", choices=("table", "dev"), default="table",
                   help="table: the tables' split (EWT dev, IMST / Szeged test); dev: every "
                        "treebank's dev file")
    p.add_argument("--train-limit", type=int, default=0, help="first N training sentences only")
    p.add_argument("--quick", action="store_true", help="2 epochs, 500 training sentences")
    p.add_argument("--snapshot", action="store_true")
    p.add_argument("--output", type=Path, default=common.RESULTS / "seed_tables.json")
    p.add_argument("--plot-treebank", default="en_ewt")
    p.add_argument("--force", action="store_true", help="rerun runs already in --output")
    p.add_argument("--run-suffix", default="",
                   help="appended to the result keys (e.g. '@50ep' for a longer extra run)")
    # worker mode (internal)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--treebank", help=argparse.SUPPRESS)
    p.add_argument("--system", help=argparse.SUPPRESS)
    p.add_argument("--system-config", help=argparse.SUPPRESS)
    p.add_argument("--worker-output", help=argparse.SUPPRESS)
    p.add_argument("--data-dir", default=str(DATA), help="where the UD .conllu files are")
    args = p.parse_args(argv)
    if args.quick:
        args.epochs, args.train_limit = 2, 500
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.worker:
        return worker(args)
    data = Path(args.data_dir).resolve()
    if not data.exists():
        sys.exit(f"treebanks not found at {data} (expected ../shared/data/ud beside the repo)")
    lambdas = [float(x) for x in args.lambdas.split(",") if x]
    all_systems = systems(lambdas)
    if args.extra_systems is not None:
        all_systems.update(json.loads(args.extra_systems.read_text()))
    chosen = args.systems.split(",") if args.systems else list(all_systems)
    unknown = [s for s in chosen if s not in all_systems]
    if unknown:
        sys.exit(f"unknown systems: {unknown}; known: {list(all_systems)}")
    work = common.WORK / "seed_tables"
    work.mkdir(parents=True, exist_ok=True)
    # Under --snapshot the workers run the snapshot's own copy of this module.
    code = common.make_snapshot(common.WORK) if args.snapshot else common.working_tree_code()
    results: Dict[str, Any] = {"runs": {}}
    if args.output.exists():
        results = json.loads(args.output.read_text())
        results.setdefault("runs", {})
    command = common.invocation("bench_seed_tables", argv)
    results["description"] = ("seed tables: Lee et al. 2010 Table 1 / Figure 2, Nguyen et al. "
                              "2007 Table 5, first vs second order")
    results.setdefault("invocations", []).append(
        {"command": command, "machine": common.machine_info(), "code": code,
         "protocol": {"epochs": args.epochs, "batch_size": args.batch_size,
                      "train_limit": args.train_limit or None, "shuffle_seed": args.seed}})
    for tb in args.treebanks.split(","):
        for name in chosen:
            key = f"{tb}/{name}{args.run_suffix}"
            if key in results["runs"] and not args.force:
                common.log(f"{key}: already in {args.output.name}, skipped (--force reruns)")
                continue
            out = work / f"{tb}-{name}{args.run_suffix}.json"
            cmd = common.module_command(
                "bench_seed_tables", "--worker", "--treebank", tb, "--system", name,
                "--system-config", json.dumps(all_systems[name]), "--epochs", str(args.epochs),
                "--batch-size", str(args.batch_size), "--train-limit", str(args.train_limit),
                "--seed", str(args.seed), "--worker-output", str(out), "--data-dir", str(data),
                "--eval-split", args.eval_split)
            common.log(f"{key}: training")
            start = time.time()
            proc = subprocess.run(cmd, cwd=REPO_ROOT, env=common.CHILD_ENV)
            if proc.returncode != 0:
                common.log(f"{key}: FAILED (exit {proc.returncode})")
                continue
            run = json.loads(out.read_text())
            run["wall_seconds"] = time.time() - start
            run["command"] = command
            run["code_commit"] = code.get("commit")
            results["runs"][key] = run
            args.output.parent.mkdir(parents=True, exist_ok=True)
            args.output.write_text(json.dumps(results, indent=1))
    table = markdown(results)
    decoders = decoder_table(results)
    if decoders:
        table += "\n" + decoders
    print(table)
    args.output.with_suffix(".md").write_text(table)
    if any(k.startswith(args.plot_treebank + "/") for k in results["runs"]):
        png = args.output.parent / (args.output.stem + "_curves.png")
        if plot(results, args.plot_treebank, png):
            common.log(f"wrote {common.rel(png)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
