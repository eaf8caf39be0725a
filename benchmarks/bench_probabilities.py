"""Arc probabilities of ``mst_parser``: calibration, speed, constrained parsing.

Trains an ``mst_parser`` (default config: Eisner, MIRA k=5, direction
back-off features; first order, or second with ``--order 2``; word clusters
with ``--cluster-bits 6``) on the first
``--train-sents`` sentences of EWT train (0: all) for ``--epochs`` epochs,
in process with gold tags, then on EWT dev (gold words, sentences and tags):

- calibration: ECE (15 bins) of head_prob against head correctness, and
  coverage / accuracy at head_prob >= 0.9 and >= 0.99, at T = 1 and at the
  temperature fitted on dev (in-sample: the ``calibrate`` command, which
  maximises the gold heads' log-likelihood), fitted on the first half of dev
  and measured on the second (held out), and at the temperature that
  minimises the ECE instead (a grid over log T; for comparison);
- decoding: UAS (every word) of the best tree (what the parser outputs)
  against minimum-Bayes-risk / max-marginal decoding (Smith & Smith 2007:
  the tree with the largest sum of arc marginals, the decoder run on the
  marginals), at T = 1 and at the fitted T;
- speed: words/s of the pipe with ``probabilities`` off and on (rounds
  interleaved, median), and with ``n_best = 5``;
- constrained parsing: UAS with 10% / 30% of the gold heads fixed
  (``token._.fixed_head``; chosen at random, seed 0) against none, over all
  words and over the words whose head was not fixed. A sentence whose chosen
  gold arcs cannot all be in one projective tree is parsed without its
  constraints and counted.

Writes benchmarks/results/probabilities.json (``--out``) and, if
matplotlib is installed (``pip install -r benchmarks/requirements.txt``),
the reliability diagram benchmarks/results/reliability.png (``--plot``).

    python -m benchmarks.bench_probabilities [--train-sents 4000 --epochs 3 --order 1]
"""
import argparse
import statistics
import tempfile
from pathlib import Path

import numpy

from benchmarks.common import (
    RESULTS,
    add_treebank_options,
    copy_docs,
    gold_examples,
    invocation,
    log,
    machine_info,
    numpy_orders,
    resolve_treebanks,
    save_results,
    train_epochs,
)

THRESHOLDS = (0.9, 0.99)


def train_parser(train: Path, n_sents: int, epochs: int, order: int = 1, cluster_bits: int = 0):
    import spacy

    from spacy_mstparse.components import mst_parser  # noqa: F401  (factory)

    nlp = spacy.blank("en")
    features = {"@mst_features": "spacy_mstparse.FirstOrderFeatures.v2", "cluster_bits": cluster_bits}
    nlp.add_pipe("mst_parser", config={"order": order, "features": features})
    examples = gold_examples(train, nlp.vocab, limit=n_sents)
    nlp.initialize(lambda: examples)
    seconds = train_epochs(nlp.get_pipe("mst_parser"), examples, epochs, 16, numpy_orders(0))
    log(f"trained on {len(examples)} sentences, {epochs} epochs, {seconds:.0f} s")
    return nlp


def calibration(parser, gold, docs):
    from spacy_mstparse.components.mst_calibration import head_probabilities, scored_docs as scored_sentences
    from spacy_mstparse.graph.calibration_metrics import calibration_report, reliability_bins
    from spacy_mstparse.graph.temperature import fit_temperature

    items = scored_sentences(parser, gold, docs)
    fit = lambda part: fit_temperature([(it.arc, it.gold, it.sib) for it in part], True)[0]  # noqa: E731
    t_all = fit(items)
    half = len(items) // 2
    t_half = fit(items[:half])
    out = {"sentences": len(items), "temperature": t_all, "temperature_first_half": t_half}
    curves = {}
    for key, part, t in (("T=1", items, 1.0), ("fitted", items, t_all),
                         ("held_out_T=1", items[half:], 1.0),
                         ("held_out_fitted", items[half:], t_half)):
        probs, correct = head_probabilities(part, t, True)
        out[key] = calibration_report(probs, correct, THRESHOLDS)
        out[key]["coverage_at_97%_accuracy"] = coverage_at_accuracy(probs, correct, 0.97)
        if key in ("T=1", "fitted"):
            curves[key] = reliability_bins(probs, correct)
    out["reliability"] = curves
    out["tag_temperatures"] = tag_temperature_check(items, t_half, fit)
    t_ece = min(numpy.exp(numpy.linspace(numpy.log(0.02), numpy.log(2.0), 41)),
                key=lambda t: calibration_report(*head_probabilities(items, t, True))["ece"])
    out["temperature_min_ece"] = float(t_ece)
    out["min_ece"] = calibration_report(*head_probabilities(items, t_ece, True), THRESHOLDS)
    out["decoding"] = {"T=1": mbr_accuracy(items, 1.0), "fitted": mbr_accuracy(items, t_all)}
    return out


def tag_temperature_check(items, t_first_half, fit):
    """A temperature per coarse tag of the dependent (``fit_tag_temperatures``)
    against one temperature, both fitted on one half of dev and measured on
    the other, in both directions."""
    from benchmarks.tag_temperatures import fit_tag_temperatures, word_temperatures
    from spacy_mstparse.components.mst_calibration import head_probabilities
    from spacy_mstparse.graph.calibration_metrics import calibration_report

    half = len(items) // 2
    out = {}
    for key, train, test in (("first_to_second", items[:half], items[half:]),
                             ("second_to_first", items[half:], items[:half])):
        t = t_first_half if key == "first_to_second" else fit(train)
        table = fit_tag_temperatures([(it.arc, it.gold, it.sib) for it in train],
                                     [it.tags for it in train], True, t)
        res = {"temperature": t, "tag_temperatures": table}
        for name, tags in (("single_T", None), ("tag_T", table)):
            temperatures = [word_temperatures(it.tags, t, tags) for it in test]
            probs, correct = head_probabilities(test, temperatures, True)
            res[name] = calibration_report(probs, correct, THRESHOLDS)
            res[name]["coverage_at_97%_accuracy"] = coverage_at_accuracy(probs, correct, 0.97)
        out[key] = res
        log(f"tag temperatures {key}: " + ", ".join(
            f"{name} ECE {100 * res[name]['ece']:.2f}% cov>=0.9 "
            f"{100 * res[name]['coverage@0.9']:.1f}% acc "
            f"{100 * res[name]['accuracy@0.9']:.2f}% cov@97 "
            f"{100 * res[name]['coverage_at_97%_accuracy']:.1f}%"
            for name in ("single_T", "tag_T")))
    return out


def coverage_at_accuracy(probs, correct, accuracy: float) -> float:
    """The largest share of words, taken by decreasing head_prob, whose
    head accuracy is still >= ``accuracy`` (what any threshold can reach)."""
    order = numpy.argsort(-numpy.asarray(probs), kind="stable")
    right = numpy.cumsum(numpy.asarray(correct, dtype="float64")[order])
    ok = numpy.flatnonzero(right / numpy.arange(1, len(order) + 1) >= accuracy)
    return float((ok[-1] + 1) / len(order)) if len(ok) else 0.0


def mbr_accuracy(items, temperature: float):
    """UAS (every word, %) of the parser's trees and of the max-marginal
    (MBR) trees: Eisner over the arc marginals at ``temperature``."""
    from spacy_mstparse.decoders import eisner
    from spacy_mstparse.graph.marginals import arc_marginals

    right_best = right_mbr = total = 0
    for arc, gold, predicted, sib, _ in items:
        probs = arc_marginals(arc, temperature, True, sib).probs
        mbr = eisner(numpy.ascontiguousarray(probs, dtype="float32"))
        right_best += int((predicted[1:] == gold[1:]).sum())
        right_mbr += int((mbr[1:] == gold[1:]).sum())
        total += len(gold) - 1
    return {"uas_best_tree": 100 * right_best / total, "uas_mbr": 100 * right_mbr / total,
            "words": total}


def speed(parser, docs, rounds: int):
    n_words = sum(len(d) for d in docs)
    settings = {"off": (False, 1), "on": (True, 1), "n_best=5": (False, 5),
                "on+n_best=5": (True, 5)}
    times = {k: [] for k in settings}
    for _ in range(rounds):
        for key, (probs, k) in settings.items():
            parser.cfg["probabilities"], parser.cfg["n_best"] = probs, k
            copies = copy_docs(docs)
            import time

            start = time.perf_counter()
            for _doc in parser.pipe(copies, batch_size=128):
                pass
            times[key].append(time.perf_counter() - start)
    parser.cfg["probabilities"], parser.cfg["n_best"] = False, 1
    return {key: {"words_per_second": n_words / statistics.median(v), "seconds": v}
            for key, v in times.items()}


def print_speed(result) -> None:
    for key, v in result.items():
        print(f"speed {key:>12}: {v['words_per_second']:.0f} words/s  (rounds: "
              + " / ".join(f"{x:.2f}" for x in v["seconds"]) + " s)")
    print(f"probabilities on / off: "
          f"{result['off']['words_per_second'] / result['on']['words_per_second']:.2f}x")


def fixed_heads(parser, gold, docs, share: float, seed: int = 0):
    rs = numpy.random.RandomState(seed)
    right = total = right_free = total_free = dropped = 0
    for g, doc in zip(gold, copy_docs(docs)):
        chosen = set()
        if share > 0:
            chosen = {i for i in range(len(doc)) if rs.rand() < share}
        for i in chosen:
            doc[i]._.fixed_head = doc[g[i].head.i]
        try:
            doc = parser(doc)
        except ValueError:
            dropped += 1
            for i in chosen:
                doc[i]._.fixed_head = None
            chosen = set()
            doc = parser(doc)
        for i, token in enumerate(doc):
            ok = token.head.i == g[i].head.i
            right += ok
            total += 1
            if i not in chosen:
                right_free += ok
                total_free += 1
    return {"uas": 100 * right / total, "uas_unfixed_words": 100 * right_free / total_free,
            "fixed_share": share, "sentences_without_constraints": dropped}


def plot(curves, path: Path, title: str) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib is not installed: no reliability plot")
        return False
    fig, (ax, share) = plt.subplots(2, 1, figsize=(5, 6.5), sharex=True,
                                    gridspec_kw={"height_ratios": [3, 1]})
    ax.plot([0, 1], [0, 1], "k:", label="perfect calibration")
    width = 1.0 / len(next(iter(curves.values())))
    for i, (key, bins) in enumerate(curves.items()):
        pts = [(b["confidence"], b["accuracy"]) for b in bins if b["count"]]
        line, = ax.plot(*zip(*pts), "o-", label=f"head_prob, {key}")
        total = sum(b["count"] for b in bins)
        share.bar([b["low"] + width * (0.25 + 0.5 * i) for b in bins],
                  [100 * b["count"] / total for b in bins], width=width / 2,
                  color=line.get_color(), label=key)
    ax.set_ylabel("head accuracy")
    ax.set_title(title)
    ax.legend()
    share.set_xlabel("head_prob (15 bins; points at the bin's mean head_prob)")
    share.set_ylabel("% of words")
    fig.savefig(path, dpi=120, bbox_inches="tight")
    return True


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_treebank_options(parser)
    parser.add_argument("--train-sents", type=int, default=4000)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--order", type=int, default=1, choices=(1, 2))
    parser.add_argument("--cluster-bits", type=int, default=0,
                        help="word clusters (features.cluster_bits; spacy-lookups-data)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved speed rounds")
    parser.add_argument("--out", type=Path, default=RESULTS / "probabilities.json")
    parser.add_argument("--plot", type=Path, default=RESULTS / "reliability.png")
    parser.add_argument("--save-model", type=Path, default=None,
                        help="also save the trained pipeline here")
    parser.add_argument("--speed-only", action="store_true",
                        help="measure only the speed (with --model: the speed of a saved model)")
    parser.add_argument("--model", type=Path, default=None,
                        help="measure this saved pipeline instead of training one "
                             "(--train-sents/--epochs/--order are then only recorded)")
    args = parser.parse_args(argv)
    resolve_treebanks(parser, args)
    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.pipeline_input import make_input_docs

    results = {"command": invocation("bench_probabilities", argv),
               "machine": machine_info(),
               "model": {"train_sentences": args.train_sents or "all", "epochs": args.epochs,
                         "order": args.order, "cluster_bits": args.cluster_bits,
                         "config": "mst_parser defaults (eisner, MIRA k=5)",
                         "input": "gold words, sentences and UPOS/XPOS"}}
    import spacy

    if args.model is not None:
        nlp = spacy.load(args.model)
        results["model"]["loaded_from"] = str(args.model)
    else:
        nlp = train_parser(args.train, args.train_sents, args.epochs, args.order, args.cluster_bits)
        if args.save_model is not None:
            nlp.to_disk(args.save_model)
        with tempfile.TemporaryDirectory() as tmp:  # parse with the saved model, as users do
            nlp.to_disk(Path(tmp) / "model")
            nlp = spacy.load(Path(tmp) / "model")
    pipe = nlp.get_pipe("mst_parser")
    gold = list(read_conllu(args.dev, nlp.vocab))
    docs = make_input_docs(gold, nlp.vocab, gold_tags=True)
    log(f"dev: {len(docs)} sentences, {sum(len(d) for d in docs)} words")
    if args.speed_only:
        results["speed"] = speed(pipe, docs, args.rounds)
        save_results(results, args.out)
        print_speed(results["speed"])
        return
    results["calibration"] = calibration(pipe, gold, docs)
    log("calibration done")
    results["speed"] = speed(pipe, docs, args.rounds)
    log("speed done")
    results["fixed_heads"] = {f"{int(100 * s)}%": fixed_heads(pipe, gold, docs, s)
                              for s in (0.0, 0.1, 0.3)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    curves = results["calibration"]["reliability"]
    order = "first" if args.order == 1 else "second"
    if plot(curves, args.plot, f"EWT dev, {order}-order mst_parser "
            f"({args.train_sents or 'all'} sentences, {args.epochs} epochs)"):
        results["plot"] = str(args.plot.relative_to(args.out.parent.parent.parent)
                              if args.plot.is_relative_to(args.out.parent.parent.parent)
                              else args.plot.name)
    save_results(results, args.out)
    cal = results["calibration"]
    for key in ("T=1", "fitted", "held_out_T=1", "held_out_fitted"):
        r = cal[key]
        print(f"{key:>16}: ECE {100 * r['ece']:.2f}%  acc {100 * r['accuracy']:.2f}%  "
              + "  ".join(f">={t}: cov {100 * r[f'coverage@{t}']:.1f}% "
                          f"acc {100 * r[f'accuracy@{t}']:.2f}%" for t in THRESHOLDS)
              + f"  cov at 97% acc {100 * r['coverage_at_97%_accuracy']:.1f}%")
    print(f"T fitted = {cal['temperature']:.4g} (first half: {cal['temperature_first_half']:.4g})")
    r = cal["min_ece"]
    print(f"T min ECE = {cal['temperature_min_ece']:.4g}: ECE {100 * r['ece']:.2f}%  "
          + "  ".join(f">={t}: cov {100 * r[f'coverage@{t}']:.1f}% "
                      f"acc {100 * r[f'accuracy@{t}']:.2f}%" for t in THRESHOLDS))
    for key, v in cal["decoding"].items():
        print(f"decoding at T {key}: best tree UAS {v['uas_best_tree']:.2f}, "
              f"MBR UAS {v['uas_mbr']:.2f} (every word)")
    print_speed(results["speed"])
    for key, v in results["fixed_heads"].items():
        print(f"fixed {key:>4}: UAS {v['uas']:.2f}, unfixed words {v['uas_unfixed_words']:.2f}, "
              f"sentences without constraints {v['sentences_without_constraints']}")


if __name__ == "__main__":
    main()
