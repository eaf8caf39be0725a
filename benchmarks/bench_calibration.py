"""Calibrated probabilities of trained ``mst_parser`` pipelines, as users get
them: pipelines saved by ``spacy train`` (which fits the head and label
temperatures on its dev corpus at the end of training), loaded as saved with
only ``probabilities = true`` set, parsing EWT dev (gold words and
sentences; gold tags unless the pipeline tags).

For each pipeline (``--model NAME=PATH``, e.g. the ``model-best`` of
``spacy train configs/mst_parser.cfg``):

- ECE (15 bins) of ``head_prob`` against head correctness and of
  ``dep_prob`` against label correctness over the words whose head is right,
  at T = 1, at the saved temperatures (fitted on this dev set: in-sample)
  and held out: temperatures fitted on one half of dev, measured on the
  other (both ways; what a test set would show);
- selective parsing: accuracy and coverage of the words whose head_prob
  (or head_prob x dep_prob, head and label right) reaches a threshold, the
  coverage at 97% accuracy, and the accuracy-coverage curve (a plot);
- the cost of probabilities: parse time with ``probabilities`` on / off
  (interleaved rounds, median).

    python -m spacy train configs/mst_parser.cfg --output training/o1 \\
        --paths.train corpus/en_ewt-train.spacy --paths.dev corpus/en_ewt-dev.spacy --nlp.lang en
    python -m benchmarks.bench_calibration --model o1=training/o1/model-best \\
        --model o2=training/o2/model-best --dev en_ewt-ud-dev.conllu

Writes benchmarks/results/calibration.json and calibration_coverage.png.
"""
import argparse
import statistics
import time
from pathlib import Path
from typing import Any, Dict, List

import numpy

from benchmarks.common import (DEFAULT_DEV, RESULTS, copy_docs, gold_examples, invocation, log,
                               machine_info, save_results)

THRESHOLDS = (0.5, 0.8, 0.9, 0.95, 0.99)
CURVE_POINTS = 200


def coverage_at_accuracy(probs: numpy.ndarray, correct: numpy.ndarray, accuracy: float) -> float:
    """The largest share of words that, taken by decreasing probability, is
    still ``accuracy`` right."""
    order = numpy.argsort(-probs, kind="stable")
    running = numpy.cumsum(correct[order]) / numpy.arange(1, len(order) + 1)
    ok = numpy.flatnonzero(running >= accuracy)
    return float((ok[-1] + 1) / len(order)) if len(ok) else 0.0


def selective(probs: numpy.ndarray, correct: numpy.ndarray) -> Dict[str, Any]:
    out: Dict[str, Any] = {"words": int(len(probs)), "accuracy": float(correct.mean()),
                           "coverage_at_97": coverage_at_accuracy(probs, correct, 0.97)}
    for t in THRESHOLDS:
        sel = probs >= t
        out[f">={t}"] = {"coverage": float(sel.mean()),
                         "accuracy": float(correct[sel].mean()) if sel.any() else None}
    order = numpy.argsort(-probs, kind="stable")
    running = numpy.cumsum(correct[order]) / numpy.arange(1, len(order) + 1)
    idx = numpy.unique(numpy.linspace(0, len(order) - 1, CURVE_POINTS).astype(int))
    out["curve"] = [[float((i + 1) / len(order)), float(running[i])] for i in idx]
    return out


def probabilities_of(pipe, items, head_t: float, label_t: float):
    """(head_prob, head right, dep_prob, label right, joint right) per word."""
    from spacy_mstparse.components.mst_calibration import UNKNOWN
    from spacy_mstparse.decoders.dispatch import DECODERS
    from spacy_mstparse.graph.marginals import arc_marginals

    projective = DECODERS[pipe.graph.decoder].projective
    hp, hc, dp, dc = [], [], [], []
    for it in items:
        words = numpy.flatnonzero(it.gold != UNKNOWN)
        words = words[words > 0]
        marg = arc_marginals(it.arc, head_t, projective, it.sib).probs
        lmarg = pipe.graph.label_marginals(it.sentence, it.predicted, label_t)
        hp.append(marg[it.predicted[words], words])
        hc.append(it.predicted[words] == it.gold[words])
        dp.append(lmarg[words, it.labels[words]])
        dc.append(it.labels[words] == it.gold_labels[words])
    hp, hc, dp, dc = (numpy.concatenate(x) for x in (hp, hc, dp, dc))
    return hp, hc, dp, dc


def held_out(pipe, items) -> Dict[str, Any]:
    """Temperatures fitted on one half of dev, errors measured on the other."""
    from spacy_mstparse.components.mst_calibration import fit_temperatures
    from spacy_mstparse.graph.calibration_metrics import expected_calibration_error as ece

    half = len(items) // 2
    halves = {"first": items[:half], "second": items[half:]}
    out = {}
    for fit_on, measure_on in (("first", "second"), ("second", "first")):
        fitted = fit_temperatures(pipe, halves[fit_on], max_words=None)
        ht, lt = fitted["head"]["temperature"], fitted["label"]["temperature"]
        hp, hc, dp, dc = probabilities_of(pipe, halves[measure_on], ht, lt)
        right = hc
        out[f"fit_{fit_on}_measure_{measure_on}"] = {
            "head_temperature": ht, "label_temperature": lt,
            "head_ece": ece(hp, hc), "dep_ece": ece(dp[right], dc[right]),
            "head_words": int(len(hp)), "label_words": int(right.sum())}
    return out


def parse_seconds(nlp, docs, rounds: int) -> Dict[str, Any]:
    """Median seconds of the mst_parser step with probabilities off / on."""
    pipe = nlp.get_pipe("mst_parser")
    times = {False: [], True: []}
    for _ in range(rounds):
        for on in (False, True):
            pipe.cfg["probabilities"] = on
            batch = copy_docs(docs)
            start = time.process_time()
            list(pipe.pipe(batch, batch_size=64))
            times[on].append(time.process_time() - start)
    pipe.cfg["probabilities"] = True
    off, on = statistics.median(times[False]), statistics.median(times[True])
    return {"cpu_seconds_off": off, "cpu_seconds_on": on, "ratio": on / off,
            "rounds": {str(k): v for k, v in times.items()}}


def measure(name: str, path: Path, dev: Path, rounds: int) -> Dict[str, Any]:
    import spacy
    from spacy.training import Example

    from spacy_mstparse.components.mst_calibration import scored_examples
    from spacy_mstparse.graph.calibration_metrics import expected_calibration_error as ece

    nlp = spacy.load(path, config={"components": {"mst_parser": {"probabilities": True}}})
    pipe = nlp.get_pipe("mst_parser")
    examples = gold_examples(dev, nlp.vocab)
    inputs = [eg.predicted for eg in examples]
    others = [p for p in nlp.pipe_names if p != "mst_parser"]
    before = list(nlp.pipe(copy_docs(inputs), disable=["mst_parser"])) if others else inputs
    parsed = list(pipe.pipe(copy_docs(before)))
    items = scored_examples(pipe, [Example(d, eg.reference) for d, eg in zip(parsed, examples)])
    ht, lt = pipe.cfg["temperature"], pipe.cfg["label_temperature"]
    log(f"{name}: {len(items)} sentences, T head {ht:.3f}, label {lt:.3f}")
    result: Dict[str, Any] = {"model": str(path), "temperature": ht, "label_temperature": lt,
                              "saved_calibration": pipe.cfg.get("calibration")}
    for key, (t_head, t_label) in (("t1", (1.0, 1.0)), ("saved", (ht, lt))):
        hp, hc, dp, dc = probabilities_of(pipe, items, t_head, t_label)
        result[key] = {"head_ece": ece(hp, hc), "dep_ece": ece(dp[hc], dc[hc]),
                       "mean_head_prob": float(hp.mean()), "head_accuracy": float(hc.mean()),
                       "mean_dep_prob": float(dp[hc].mean()), "label_accuracy": float(dc[hc].mean())}
        if key == "saved":
            result["selective_head"] = selective(hp, hc)
            result["selective_joint"] = selective(hp * dp, hc & dc)
    result["held_out"] = held_out(pipe, items)
    result["speed"] = parse_seconds(nlp, before, rounds)
    return result


def plot(results: Dict[str, Any], path: Path) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib not installed: no plot (pip install -r benchmarks/requirements.txt)")
        return False
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    for name, res in results.items():
        for kind, style in (("selective_head", "-"), ("selective_joint", "--")):
            curve = numpy.array(res[kind]["curve"])
            label = f"{name}: {'head' if kind.endswith('head') else 'head + label'}"
            line, = ax.plot(100 * curve[:, 0], 100 * curve[:, 1], style, label=label)
            point = res[kind][">=0.9"]
            if point["accuracy"] is not None:
                ax.plot(100 * point["coverage"], 100 * point["accuracy"], "o",
                        color=line.get_color())
    ax.axhline(97, color="grey", lw=0.8, ls=":")
    ax.set_xlabel("coverage: words kept, by decreasing probability (%)")
    ax.set_ylabel("accuracy of the words kept (%)")
    ax.set_ylim(80, 100.5)
    ax.set_title("Selective parsing on EWT dev (dots: probability >= 0.9)")
    ax.legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def main(argv: List[str] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", required=True,
                        help="NAME=PATH of a trained pipeline (repeatable)")
    parser.add_argument("--dev", type=Path, default=DEFAULT_DEV)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS / "calibration.json")
    parser.add_argument("--plot", type=Path, default=RESULTS / "calibration_coverage.png")
    args = parser.parse_args(argv)
    models = {}
    for spec in args.model:
        name, sep, path = spec.partition("=")
        if not sep or not Path(path).is_dir():
            parser.error(f"--model {spec}: expected NAME=PATH of a pipeline directory")
        models[name] = Path(path)
    if not args.dev.is_file():
        parser.error(f"--dev {args.dev}: no such file")
    results = {name: measure(name, path, args.dev, args.rounds) for name, path in models.items()}
    for name, res in results.items():
        s, h = res["saved"], res["held_out"]
        print(f"{name}: head ECE {100 * s['head_ece']:.2f}% (T = 1: {100 * res['t1']['head_ece']:.2f}%), "
              f"dep ECE {100 * s['dep_ece']:.2f}% (T = 1: {100 * res['t1']['dep_ece']:.2f}%)")
        for key, v in h.items():
            print(f"  held out {key}: head ECE {100 * v['head_ece']:.2f}%, "
                  f"dep ECE {100 * v['dep_ece']:.2f}%")
        for kind in ("selective_head", "selective_joint"):
            p = res[kind][">=0.9"]
            print(f"  {kind}: >= 0.9 coverage {100 * p['coverage']:.1f}% accuracy "
                  f"{100 * (p['accuracy'] or 0):.2f}%; coverage at 97% "
                  f"{100 * res[kind]['coverage_at_97']:.1f}%")
        print(f"  probabilities cost x{res['speed']['ratio']:.2f} parse time")
    out = {"command": invocation("bench_calibration", argv), "machine": machine_info(),
           "dev": str(args.dev), "results": results}
    save_results(out, args.out)
    if plot(results, args.plot):
        print(f"plot: {args.plot}")
    print(f"results: {args.out}")


if __name__ == "__main__":
    main()
