"""Parse speed of the shipped configs against spaCy's standard parser, as
users get them: the pipelines ``spacy train`` makes of
``configs/mst_parser.cfg`` (first order) and ``configs/mst_parser_o2.cfg``
(second order) on all of EWT train, and spaCy's standard efficiency
pipeline (``spacy init config --pipeline tagger,parser --optimize
efficiency``: tok2vec + tagger + parser) trained on the same treebank, all
trained once and cached outside the repository (``shipped_models``).

On EWT dev (gold words, sentences and tags for ``mst_parser``; one sentence
per Doc; ``pipe`` with batches of 128) it times the parser step alone:
spaCy's parser on docs its tok2vec and tagger already processed (untimed),
``mst_parser`` on gold-tagged docs. Every system parses once per round, in
turn (copies of the docs, copying untimed), ``--runs`` rounds; reported are
medians and spread (min, max) of CPU seconds (this process's, all threads)
and wall seconds, words/s, and per round each system's ratio to spaCy's
parser (median and spread of the ratios; ratios within a round are what a
shared machine can still compare). The load average is recorded at every
round.

Systems: ``o1`` / ``o2`` with the prediction settings of the config files
as they are now (``quantize_weights``, ``keep_heads``, ``filter_arcs``),
``-before`` with the settings the configs had before the speed changes
(first order float weights, second order 8-bit without pruning, neither
with the arc filter), ``-float`` / ``-q8`` forcing
the weights, ``-t2`` with ``n_threads = 2`` (``--threads``). Also: dev UAS /
LAS (punctuation excluded) of every variant, whether 1 and 2 threads give
identical parses, and a profile of each ``mst_parser`` system
(``parse_profile``: arc scoring, sibling and stop factors, decoding,
labeler, Python glue).

    python -m benchmarks.bench_shipped_speed          # trains what is not cached
    python -m benchmarks.bench_speed --shipped        # the same

Output: ``benchmarks/results/shipped_speed.json`` and a Markdown table.
"""
import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Dict, List

from benchmarks import common, parse_profile, shipped_models
from benchmarks.bench_speed import heads_of, uas_las

BEFORE = {"o1": {"quantize_weights": False, "keep_heads": 0, "filter_arcs": False},
          "o2": {"quantize_weights": True, "keep_heads": 0, "filter_arcs": False}}


def config_settings(path: Path) -> Dict[str, object]:
    """The prediction settings of a config file's mst_parser block."""
    import spacy.util

    block = spacy.util.load_config(path)["components"]["mst_parser"]
    from spacy_mstparse.components.mst_parser_settings import DEFAULT_CONFIG

    return {key: block.get(key, DEFAULT_CONFIG[key]) for key in BEFORE["o1"]}


def timed(run, docs, prepare=None):
    """(parsed docs, CPU seconds, wall seconds) of ``run`` on copies of docs."""
    copies = common.copy_docs(docs)
    if prepare is not None:
        copies = prepare(copies)
    cpu, wall = time.process_time(), time.perf_counter()
    out = run(copies)
    return out, time.process_time() - cpu, time.perf_counter() - wall


def spread(values: List[float]) -> Dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cache", type=Path, default=shipped_models.DEFAULT_CACHE,
                   help="where the trained pipelines are cached (outside the repository)")
    p.add_argument("--max-epochs", type=int, default=0,
                   help="cap the training epochs of the mst_parser configs (0: as they say)")
    p.add_argument("--o2-max-epochs", type=int, default=None,
                   help="cap for the second-order config alone (default: --max-epochs)")
    p.add_argument("--spacy-epochs", type=int, default=shipped_models.SPACY_EPOCHS)
    p.add_argument("--systems", default="spacy,o1,o2",
                   help="which of spacy, o1, o2 to time (without spacy: no x spaCy ratios, "
                        "e.g. --systems o1 for the thread ratio alone)")
    p.add_argument("--runs", type=int, default=5, help="interleaved timing rounds")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--o2-keeps", default="10,15,20",
                   help="keep_heads values to time and score with the second-order "
                        "config: o2-pK systems")
    p.add_argument("--repeats", type=int, default=3, help="profile: best of this many")
    p.add_argument("--model", action="append", default=[], metavar="NAME=PATH",
                   help="use the pipeline at PATH for NAME (o1, o2, spacy) instead of "
                        "training / the cache (recorded in the results)")
    p.add_argument("--output", type=Path, default=common.RESULTS / "shipped_speed.json")
    p.add_argument("--train", type=Path, default=common.DEFAULT_TRAIN)
    p.add_argument("--dev", type=Path, default=common.DEFAULT_DEV)
    args = p.parse_args(argv)
    try:
        args.o2_keeps = [int(k) for k in args.o2_keeps.split(",") if k.strip()]
    except ValueError:
        p.error(f"--o2-keeps: a comma-separated list of integers, got {args.o2_keeps!r}")

    import spacy

    from spacy_mstparse.components import mst_parser  # noqa: F401
    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.pipeline_input import make_input_docs

    result = {"command": common.invocation("bench_shipped_speed", argv),
              "commit": common.git("rev-parse", "HEAD"),
              "dirty": bool(common.git("status", "--porcelain", "--untracked-files=no")),
              "machine": common.machine_info(), "loadavg": {"start": list(os.getloadavg())}}
    epochs = {"o1": args.max_epochs, "spacy": 0,
              "o2": args.max_epochs if args.o2_max_epochs is None else args.o2_max_epochs}
    names = [n.strip() for n in args.systems.split(",") if n.strip()]
    mst_names = [n for n in ("o1", "o2") if n in names]
    if set(names) - set(shipped_models.SYSTEMS) or not mst_names:
        p.error(f"--systems: some of spacy, o1, o2 (at least one of o1, o2), got {args.systems!r}")
    given = dict(item.split("=", 1) for item in args.model)
    unknown = set(given) - set(shipped_models.SYSTEMS)
    if unknown:
        p.error(f"--model: unknown system(s) {sorted(unknown)}; use o1, o2 or spacy")
    records = {}
    for name in names:
        if name in given:
            records[name] = {"model": given[name], "given": Path(given[name]).name}
        else:
            records[name] = shipped_models.ensure_trained(
                name, args.cache, args.train, args.dev, args.spacy_epochs, epochs[name])
    result["training"] = {n: {k: v for k, v in r.items() if k != "model"}
                          for n, r in records.items()}
    pipelines = {name: spacy.load(records[name]["model"]) for name in records}
    shipped = {name: config_settings(shipped_models.SYSTEMS[name]["config"])
               for name in mst_names}
    result["prediction_settings"] = {"shipped": shipped, "before": BEFORE}

    vocab = pipelines[mst_names[0]].vocab
    gold = list(read_conllu(args.dev, vocab, n_sents=1))
    dev = make_input_docs(gold, vocab, gold_tags=True)
    n_words = result["dev_words"] = sum(len(d) for d in dev)
    systems = {}
    if "spacy" in pipelines:
        sp = pipelines["spacy"]
        sp_parser = sp.get_pipe("parser")
        upstream = [proc for name, proc in sp.pipeline if name != "parser"]

        def before_parser(docs):
            for proc in upstream:
                docs = list(proc.pipe(docs, batch_size=128))
            return docs

        raw = make_input_docs(gold, sp.vocab, gold_tags=False)
        systems["spacy-parser"] = (lambda docs: list(sp_parser.pipe(docs, batch_size=128)),
                                   before_parser, raw)

    def mst(name, settings, threads):
        parser = pipelines[name].get_pipe("mst_parser")

        def run(docs):
            parser.cfg.update(settings, n_threads=threads)
            return list(parser.pipe(docs, batch_size=128))
        return run

    one_thread = {}   # a -tN system -> the 1-thread system with its settings
    for name in mst_names:
        # the settings before, as shipped, and as shipped with the other weights
        # (a variant equal to an earlier one is not timed twice)
        other = dict(shipped[name], quantize_weights=not shipped[name]["quantize_weights"])
        suffix = "-float" if shipped[name]["quantize_weights"] else "-q8"
        variants = {}
        for label, settings in ((f"{name}-before", BEFORE[name]), (name, shipped[name]),
                                (name + suffix, other)):
            same = [k for k, v in variants.items() if v == settings]
            variants[label] = settings
            if not same:
                systems[label] = (mst(name, settings, 1), None, dev)
            if label != f"{name}-before":
                base = same[0] if same else label
                systems[f"{label}-t{args.threads}"] = (mst(name, settings, args.threads),
                                                       None, dev)
                one_thread[f"{label}-t{args.threads}"] = base
        for keep in (args.o2_keeps if name == "o2" else ()):
            systems[f"o2-p{keep}"] = (mst(name, dict(shipped[name], keep_heads=keep), 1),
                                      None, dev)
    result["one_thread_system"] = one_thread

    parsed = {}
    for label, (run, prepare, docs) in systems.items():  # warm-up, accuracy
        parsed[label] = timed(run, docs, prepare)[0]
        common.log(f"{label}: parsed")
    result["uas_las"] = {label: uas_las(parsed[label], gold) for label in systems}
    result["identical_parses_1_vs_n_threads"] = {
        many: heads_of(parsed[one]) == heads_of(parsed[many]) for many, one in one_thread.items()}
    del parsed

    cpu: Dict[str, List[float]] = {label: [] for label in systems}
    wall: Dict[str, List[float]] = {label: [] for label in systems}
    loads = []
    for r in range(args.runs):
        for label, (run, prepare, docs) in systems.items():
            _, c, w = timed(run, docs, prepare)
            cpu[label].append(c)
            wall[label].append(w)
        loads.append(list(os.getloadavg()))
        common.log(f"round {r + 1}: " + ", ".join(f"{n} {wall[n][-1]:.2f}s" for n in systems)
                   + f"; load {loads[-1][0]:.1f}")
    result["loadavg"]["rounds"] = loads
    result["cpu_seconds"], result["wall_seconds"] = cpu, wall

    def ratios(times, label, base="spacy-parser"):
        if base not in times:
            return None
        return spread([times[base][i] / times[label][i] for i in range(args.runs)])

    result["summary"] = {label: {
        "cpu_seconds": spread(cpu[label]), "wall_seconds": spread(wall[label]),
        "words_per_second_cpu": n_words / statistics.median(cpu[label]),
        "words_per_second_wall": n_words / statistics.median(wall[label]),
        "x_spacy_parser_cpu": ratios(cpu, label),
        "x_spacy_parser_wall": ratios(wall, label),
    } for label in systems}
    for many, one in one_thread.items():
        result["summary"][many]["x_one_thread_wall"] = ratios(wall, many, one)

    result["profile_seconds"] = {}
    for name in mst_names:
        for label, settings in ((f"{name}-before", BEFORE[name]), (name, shipped[name])):
            parser = pipelines[name].get_pipe("mst_parser")
            parser.cfg.update(settings)
            stages = parse_profile.profile(parser, dev, args.repeats)
            result["profile_seconds"][label] = stages
            result.setdefault("profile_share", {})[label] = parse_profile.shares(stages)
    result["loadavg"]["end"] = list(os.getloadavg())
    args.output.parent.mkdir(parents=True, exist_ok=True)
    common.save_results(result, args.output)
    print(markdown(result, args.runs))
    return 0


def markdown(result, runs) -> str:
    lines = [f"dev words: {result['dev_words']}; load average at start "
             f"{result['loadavg']['start'][0]:.1f}, during the rounds "
             f"{min(l[0] for l in result['loadavg']['rounds']):.1f}-"
             f"{max(l[0] for l in result['loadavg']['rounds']):.1f}",
             f"| system | words/s CPU (median of {runs}) | x spaCy's parser, CPU (min-max) "
             "| x spaCy's parser, wall | x 1 thread, wall | UAS | LAS |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for label, s in result["summary"].items():
        u, l = result["uas_las"][label]
        x, xw = s["x_spacy_parser_cpu"], s["x_spacy_parser_wall"]
        t = s.get("x_one_thread_wall")
        x_cpu = "-" if x is None else f"{x['median']:.2f} ({x['min']:.2f}-{x['max']:.2f})"
        lines.append(f"| {label} | {s['words_per_second_cpu']:,.0f} | {x_cpu} | "
                     f"{'-' if xw is None else format(xw['median'], '.2f')} | "
                     f"{'-' if t is None else format(t['median'], '.2f')} | {u:.2f} | {l:.2f} |")
    lines.append("")
    for label, shares in result["profile_share"].items():
        total = result["profile_seconds"][label]["pipe_total"]
        lines.append(f"profile {label} (pipe {total:.2f} s CPU): " + ", ".join(
            f"{k} {100 * v:.0f}%" for k, v in shares.items()))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
