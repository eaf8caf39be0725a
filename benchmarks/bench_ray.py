"""Ray scale-out on EWT: ``ray-train`` with 1 and 2 workers against
single-process ``spacy train`` (first order, the config's default learner),
and ``ray-parse`` with 1 and 2 workers against ``parse`` and
``nlp.pipe(n_process=2)``.

    python -m benchmarks.bench_ray [--epochs 3] [--rounds 2] [--train FILE --dev FILE]

Training: configs/mst_parser.cfg on EWT train (gold tags, one sentence per
Doc), ``--epochs`` epochs each: ``spacy train`` (measured subprocess),
then ``ray_train`` in process with 1 and with 2 workers (per-epoch wall
time of the parallel phase + mixing, dev scoring apart); every model-last is
scored with ``python -m spacy_mstparse evaluate --gold-tags`` on dev.
Parsing: the 2-worker model parses EWT train (``--parse-input``) with
``parse``, ``ray-parse --workers 1/2`` and ``nlp.pipe(n_process=2)``, each a
measured subprocess (whole command wall time: loading and Ray start-up
included), interleaved over ``--rounds`` rounds; the ray-parse outputs are
checked byte-identical to parse's. The load average is recorded next to
every timing (the machine may be shared). Results:
benchmarks/results/ray.json.

The quick rerun of the parse target (``ray-parse --workers 2`` against
``parse``, nothing else):

    python -m benchmarks.bench_ray --parse-only [--model MODEL] [--copies 1 5] [--rounds 3]

parses EWT train and EWT train five times over (a file in the work folder)
with both commands, interleaved (the order alternates per round), with
``--gold-tags`` (and without it too with ``--both-tag-modes``, for
pipelines with taggers); it records each command's wall time, the load
average before it and the machine's CPU use during it (all processes, from
/proc/stat), and checks the outputs byte-identical. Without ``--model`` it
parses with the 2-worker model of an earlier full run, else with a model of
one ``spacy train`` epoch of configs/mst_parser.cfg (trained once, ~1 min).
Results: benchmarks/results/ray_parse.json.
"""
import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path
from typing import List

from .common import (DEFAULT_DEV, DEFAULT_TRAIN, RESULTS, WORK, convert_once, evaluate_model,
                     finish_results, invocation, log, machine_info, rel, run_measured,
                     save_results, working_tree_code)

CONFIG = Path("configs") / "mst_parser.cfg"


def pipe_worker(model: str, input_path: str, n_process: int) -> None:
    """``nlp.pipe(n_process=N)`` over the file's gold-tagged input docs."""
    import spacy

    from spacy_mstparse.pipeline_input import read_gold, make_input_docs

    nlp = spacy.load(model)
    gold = read_gold(input_path, nlp.vocab, "conllu")
    docs = make_input_docs(gold, nlp.vocab, copy_attrs=["POS", "TAG", "MORPH", "LEMMA"])
    start = time.perf_counter()
    n = sum(len(doc) for doc in nlp.pipe(docs, n_process=n_process, batch_size=64))
    print(json.dumps({"pipe_seconds": time.perf_counter() - start, "tokens": n}))


def train_ray(workers: int, train: Path, dev: Path, epochs: int, out: Path) -> dict:
    from spacy_mstparse.distributed.train import ray_train

    overrides = {"paths.train": str(train), "paths.dev": str(dev), "training.max_epochs": epochs}
    load = os.getloadavg()
    start = time.perf_counter()
    with open(out.with_suffix(".log"), "w") as logfile:
        summary = ray_train(CONFIG, out, workers, overrides=overrides, stdout=logfile, stderr=logfile)
    summary["wall_seconds"] = time.perf_counter() - start
    summary["loadavg_before"] = list(load)
    summary["command"] = (f"python -m spacy_mstparse ray-train {CONFIG} --output {rel(out)} "
                          f"--workers {workers} --paths.train {rel(train)} --paths.dev {rel(dev)} "
                          f"--training.max_epochs {epochs}")
    for record in summary["epochs"]:
        record["epoch_seconds"] = record["train_seconds"] + record["mix_seconds"]
    return summary


def speed_rounds(args, results, train_db: Path, dev_db: Path, work: Path, out_json: Path) -> None:
    """1-epoch runs on a subset, 1 and 2 workers alternately: epoch wall time
    (parallel phase + mixing) and the shards' CPU seconds."""
    from spacy_mstparse.distributed.train import ray_train

    runs = {1: [], 2: []}
    overrides = {"paths.train": str(train_db), "paths.dev": str(dev_db), "training.max_epochs": 1,
                 "corpora.train.limit": args.speed_limit}
    for r in range(args.speed_rounds):
        for workers in (1, 2) if r % 2 == 0 else (2, 1):
            log(f"speed round {r + 1}: {workers} worker(s)")
            load = os.getloadavg()
            with open(work / f"speed-{workers}.log", "w") as logfile:
                summary = ray_train(CONFIG, None, workers, overrides=overrides, stdout=logfile,
                                    stderr=logfile)
            epoch = summary["epochs"][0]
            runs[workers].append({"epoch_seconds": epoch["train_seconds"] + epoch["mix_seconds"],
                                  "shard_seconds": epoch["shard_seconds"],
                                  "shard_cpu_seconds": epoch["shard_cpu_seconds"],
                                  "loadavg_before": list(load)})
    ratios = [a["epoch_seconds"] / b["epoch_seconds"] for a, b in zip(runs[1], runs[2])]
    results["speed"] = {"limit": args.speed_limit, "runs": runs, "epoch_speedup_2_vs_1": ratios,
                        "median_epoch_speedup_2_vs_1": statistics.median(ratios)}
    save_results(results, out_json)


def cpu_times() -> List[int]:
    """The machine's (busy, total) CPU ticks since boot (/proc/stat)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return [sum(fields) - idle, sum(fields)]


def measured(cmd: List[str], log_path: Path) -> dict:
    """``run_measured`` plus the share of the machine's CPUs busy meanwhile
    (every process: ours and any other job)."""
    before = cpu_times()
    run = run_measured(cmd, log_path)
    after = cpu_times()
    run["machine_cpu_busy"] = (after[0] - before[0]) / max(1, after[1] - before[1])
    return run


def parse_model(args, work: Path) -> Path:
    """--model, else an earlier run's 2-worker model, else one trained once."""
    if args.model:
        return args.model
    for model in (work / "ray-train-2" / "model-last", work / "parse-model" / "model-last"):
        if (model / "config.cfg").exists():
            return model
    train_db, dev_db = work / "train.spacy", work / "dev.spacy"
    convert_once(args.train, train_db, 1)
    convert_once(args.dev, dev_db, 1)
    log("training the parse model: spacy train, 1 epoch")
    cmd = [sys.executable, "-m", "spacy", "train", str(CONFIG), "--output",
           rel(work / "parse-model"), "--paths.train", rel(train_db), "--paths.dev", rel(dev_db),
           "--training.max_epochs", "1"]
    run = run_measured(cmd, work / "parse-model.log")
    if run["returncode"] != 0:
        sys.exit(f"training failed: see {rel(work / 'parse-model.log')}")
    return work / "parse-model" / "model-last"


def ray_parse_figures(log_path: Path) -> dict:
    """Ray start-up and the driver's share, from ray-parse's last line."""
    match = re.search(r"in ([0-9.]+) s \(([0-9.]+) s starting Ray and loading the pipeline, "
                      r"meanwhile the driver parsed ([0-9]+) of the ([0-9]+) chunks\)",
                      log_path.read_text())
    if match is None:
        return {}
    return {"startup_seconds": float(match.group(2)), "driver_chunks": int(match.group(3)),
            "chunks": int(match.group(4))}


def parse_only(args, results: dict, work: Path) -> None:
    """parse vs ray-parse --workers 2, whole commands, interleaved."""
    model = parse_model(args, work)
    source = args.parse_input or args.train
    results["model"] = rel(model)
    results["parse_only"] = {}
    modes = [True, False] if args.both_tag_modes else [True]
    for copies in args.copies:
        inp = source
        if copies > 1:
            inp = work / f"{source.stem}_x{copies}.conllu"
            text = source.read_bytes()
            if not inp.exists() or inp.stat().st_size != copies * len(text):
                inp.write_bytes(text * copies)
        for gold_tags in modes:
            key = f"x{copies}" + ("" if gold_tags else "_predicted_tags")
            runs = {"parse": [], "ray_parse_2": []}
            reference, out = work / "parse_only_parse.conllu", work / "parse_only_ray.conllu"
            tags = ["--gold-tags"] if gold_tags else []
            for r in range(args.rounds):
                for name in ("parse", "ray_parse_2") if r % 2 == 0 else ("ray_parse_2", "parse"):
                    if name == "parse":
                        cmd = [sys.executable, "-m", "spacy_mstparse", "parse", rel(model), rel(inp),
                               rel(reference), *tags]
                    else:
                        cmd = [sys.executable, "-m", "spacy_mstparse", "ray-parse", rel(model),
                               rel(inp), rel(out), "--workers", "2", *tags]
                    log(f"{key} round {r + 1}: {name}")
                    run = measured(cmd, work / f"parse_only_{name}.log")
                    if run["returncode"] != 0:
                        sys.exit(f"{name} failed: see {rel(work / f'parse_only_{name}.log')}")
                    if name == "ray_parse_2":
                        run.update(ray_parse_figures(work / f"parse_only_{name}.log"))
                    runs[name].append(run)
                    log(f"  {run['wall_seconds']:.1f} s, load {run['loadavg_before'][0]:.1f}, "
                        f"machine CPU {100 * run['machine_cpu_busy']:.0f} %")
                identical = out.read_bytes() == reference.read_bytes()
                runs["ray_parse_2"][-1]["identical_to_parse"] = identical
                if not identical:
                    sys.exit(f"ray-parse wrote another output than parse for {rel(inp)}")
            walls = {name: [run["wall_seconds"] for run in rs] for name, rs in runs.items()}
            results["parse_only"][key] = {
                "input": rel(inp), "gold_tags": gold_tags, "runs": runs,
                "median_wall_seconds": {n: statistics.median(w) for n, w in walls.items()},
                "round_speedups": [a / b for a, b in zip(walls["parse"], walls["ray_parse_2"])],
                "median_speedup": statistics.median(
                    a / b for a, b in zip(walls["parse"], walls["ray_parse_2"])),
            }
            save_results(results, args.out)
    table = ["| input | tags | parse (s) | ray-parse --workers 2 (s) | speed-up per round | median |",
             "| --- | --- | ---: | ---: | --- | ---: |"]
    for key, rec in results["parse_only"].items():
        med = rec["median_wall_seconds"]
        table.append(f"| {rec['input']} | {'gold' if rec['gold_tags'] else 'pipeline'} | "
                     f"{med['parse']:.1f} | {med['ray_parse_2']:.1f} | "
                     f"{' / '.join(f'{x:.2f}' for x in rec['round_speedups'])} | "
                     f"{rec['median_speedup']:.2f}x |")
    finish_results(results, args.out, "\n".join(table), None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", type=Path, default=DEFAULT_TRAIN, help="training CoNLL-U")
    parser.add_argument("--dev", type=Path, default=DEFAULT_DEV, help="dev CoNLL-U (scores)")
    parser.add_argument("--parse-input", type=Path, default=None,
                        help="CoNLL-U parsed for the throughput figures (default: --train)")
    parser.add_argument("--epochs", type=int, default=3, help="training epochs of every run")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved parse rounds")
    parser.add_argument("--skip-spacy-train", action="store_true",
                        help="no single-process spacy train baseline")
    parser.add_argument("--skip-training", action="store_true",
                        help="no training runs (parse with an earlier run's 2-worker model)")
    parser.add_argument("--skip-parse", action="store_true", help="no parse throughput runs")
    parser.add_argument("--speed-rounds", type=int, default=0,
                        help="interleaved 1-epoch ray-train runs, 1 vs 2 workers, on the "
                             "first --speed-limit training sentences (per-epoch wall and CPU)")
    parser.add_argument("--speed-limit", type=int, default=4000)
    parser.add_argument("--parse-only", action="store_true",
                        help="only parse vs ray-parse --workers 2 (the quick rerun, see above)")
    parser.add_argument("--model", type=Path, default=None, help="(--parse-only) the pipeline")
    parser.add_argument("--copies", type=int, nargs="+", default=[1, 5],
                        help="(--parse-only) parse --parse-input this many times over")
    parser.add_argument("--both-tag-modes", action="store_true",
                        help="(--parse-only) also without --gold-tags (pipelines with taggers)")
    parser.add_argument("--out", type=Path, default=None,
                        help="results JSON (default: ray.json, ray_parse.json with --parse-only)")
    parser.add_argument("--pipe-worker", nargs=3, metavar=("MODEL", "INPUT", "N"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.pipe_worker:
        pipe_worker(args.pipe_worker[0], args.pipe_worker[1], int(args.pipe_worker[2]))
        return
    parse_input = args.parse_input or args.train
    work = WORK / "ray"
    work.mkdir(parents=True, exist_ok=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    args.out = args.out or RESULTS / ("ray_parse.json" if args.parse_only else "ray.json")
    if args.parse_only:
        parse_only(args, {"command": invocation("bench_ray"), "code": working_tree_code(),
                          "machine": machine_info()}, work)
        return
    results = {"command": invocation("bench_ray"), "code": working_tree_code(),
               "machine": machine_info(), "epochs": args.epochs, "train": {}, "parse": {}}
    out_json = args.out
    train_db, dev_db = work / "train.spacy", work / "dev.spacy"
    convert_once(args.train, train_db, 1)
    convert_once(args.dev, dev_db, 1)

    if args.speed_rounds:
        speed_rounds(args, results, train_db, dev_db, work, out_json)
    if not args.skip_spacy_train and not args.skip_training:
        log("spacy train (single process)")
        cmd = [sys.executable, "-m", "spacy", "train", str(CONFIG), "--output",
               rel(work / "spacy-train"), "--paths.train", rel(train_db), "--paths.dev",
               rel(dev_db), "--training.max_epochs", str(args.epochs),
               "--training.eval_frequency", "100000"]
        run = run_measured(cmd, work / "spacy-train.log")
        run["dev"] = evaluate_model(work / "spacy-train" / "model-last", args.dev,
                                    work / "spacy-train-dev.json")
        results["train"]["spacy_train"] = run
        log(f"  {run['wall_seconds']:.0f} s, dev UAS {run['dev']['uas']:.2f}")
    for workers in (() if args.skip_training else (1, 2)):
        log(f"ray-train, {workers} worker(s)")
        summary = train_ray(workers, train_db, dev_db, args.epochs, work / f"ray-train-{workers}")
        summary["dev"] = evaluate_model(work / f"ray-train-{workers}" / "model-last", args.dev,
                                        work / f"ray-train-{workers}-dev.json")
        results["train"][f"ray_{workers}"] = summary
        log(f"  epochs {[round(r['epoch_seconds']) for r in summary['epochs']]} s, "
            f"dev UAS {summary['dev']['uas']:.2f}")
        save_results(results, out_json)

    if args.skip_parse:
        finish_results(results, out_json, json.dumps(results.get("speed", {}), indent=2), None)
        return
    model = work / "ray-train-2" / "model-last"
    runs = {"parse": [], "ray_parse_1": [], "ray_parse_2": [], "pipe_n_process_2": []}
    reference = work / "parse.conllu"
    for r in range(args.rounds):
        for name in runs:
            out = work / f"{name}.conllu"
            if name == "parse":
                cmd = [sys.executable, "-m", "spacy_mstparse", "parse", rel(model),
                       rel(parse_input), rel(reference), "--gold-tags"]
            elif name.startswith("ray_parse"):
                cmd = [sys.executable, "-m", "spacy_mstparse", "ray-parse", rel(model),
                       rel(parse_input), rel(out), "--workers", name[-1], "--gold-tags"]
            else:
                cmd = [sys.executable, "-m", "benchmarks.bench_ray", "--pipe-worker", rel(model),
                       rel(parse_input), "2"]
            log(f"round {r + 1}: {name}")
            run = run_measured(cmd, work / f"{name}.log")
            if run["returncode"] != 0:
                sys.exit(f"{name} failed: see {rel(work / f'{name}.log')}")
            if name.startswith("ray_parse"):
                run["identical_to_parse"] = out.read_bytes() == reference.read_bytes()
            if name == "pipe_n_process_2":
                lines = (work / f"{name}.log").read_text().strip().splitlines()
                run.update(json.loads(lines[-1]))
            runs[name].append(run)
    base = statistics.median(run["wall_seconds"] for run in runs["parse"])
    for name, name_runs in runs.items():
        wall = statistics.median(run["wall_seconds"] for run in name_runs)
        results["parse"][name] = {"runs": name_runs, "median_wall_seconds": wall,
                                  "speedup_vs_parse": base / wall}
    if args.skip_training:
        finish_results(results, out_json, json.dumps(results["parse"], indent=2), None)
        return
    t1 = results["train"]["ray_1"]["epochs"]
    t2 = results["train"]["ray_2"]["epochs"]
    results["summary"] = {
        "epoch_speedup_2_vs_1": [a["epoch_seconds"] / b["epoch_seconds"] for a, b in zip(t1, t2)],
        "median_epoch_speedup_2_vs_1": statistics.median(
            a["epoch_seconds"] / b["epoch_seconds"] for a, b in zip(t1, t2)),
        "uas": {k: v["dev"]["uas"] for k, v in results["train"].items()},
        "las": {k: v["dev"]["las"] for k, v in results["train"].items()},
        "parse_speedup_vs_parse": {k: v["speedup_vs_parse"] for k, v in results["parse"].items()},
    }
    finish_results(results, out_json, json.dumps(results["summary"], indent=2), None)


if __name__ == "__main__":
    main()
