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

Usage (from anywhere; paths default relative to the repository root)::

    .venv/bin/python benchmarks/bench_learners.py --quick      # ~ a few minutes, smoke test
    .venv/bin/python benchmarks/bench_learners.py              # full run, 10 epochs
    .venv/bin/python benchmarks/bench_learners.py --learners perceptron,pa1 --epochs 5

``--quick`` trains on the first 1,000 training sentences for 1 epoch and
writes its results under ``benchmarks/work/`` (not ``benchmarks/results/``)
unless ``--output`` is given. Nothing else heavy should run at the same
time: the times and speeds are wall-clock figures.
"""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

REPO_ROOT = Path(__file__).resolve().parent.parent
BASE_CONFIG = REPO_ROOT / "configs" / "mst_parser.cfg"
DEFAULT_TRAIN = REPO_ROOT / ".." / "shared" / "data" / "ud" / "en_ewt-ud-train.conllu"
DEFAULT_DEV = REPO_ROOT / ".." / "shared" / "data" / "ud" / "en_ewt-ud-dev.conllu"
DEFAULT_WORK = REPO_ROOT / "benchmarks" / "work"
DEFAULT_OUTPUT = REPO_ROOT / "benchmarks" / "results" / "learners.json"
# One sentence per Doc, as project.yml converts: spacy train shuffles Docs, and
# the online learners gain from sentence-level shuffling.
N_SENTS_PER_DOC = 1
QUICK_TRAIN_SENTS = 1000
QUICK_EPOCHS = 1

# Pegasos lambdas of Lee et al. (2010)'s grid; each is a selectable learner.
PEGASOS_GRID = ("1e-2", "3.3e-2", "1e-3", "3.3e-3", "1e-4")


V1_FEATURES = {"@mst_features": "spacy_mstparse.FirstOrderFeatures.v1",
               "tag_columns": "both", "use_morph": False, "n_buckets": 2**22}


def arc_weight_stats(component_dir: Path) -> Dict[str, Any]:
    """Arc-weight file (``arc_weights.npy``, or ``.npz`` for sparse learners),
    its size and the number of non-zero arc weights."""
    import numpy

    from spacy_mstparse.learners import sparse_weights

    path = next(component_dir.glob("arc_weights.np*"))
    if path.suffix == ".npz":
        with numpy.load(path) as data:
            arc = sparse_weights.unpack(dict(data), str(path))
    else:
        arc = numpy.load(path)
    return {"arc_file": path.name, "arc_file_bytes": path.stat().st_size,
            "arc_nonzero": int(numpy.count_nonzero(arc)), "arc_buckets": int(arc.size)}


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
            "features": V1_FEATURES,
        },
        "mira-v1": {
            "description": "averaged 1-best MIRA (k=1), v1 features: the dense model of "
                           "the sparseptron table",
            "block": {"@mst_learners": "spacy_mstparse.MIRA.v1", "C": None, "k": 1},
            "features": V1_FEATURES,
        },
        "sparseptron": {
            "description": "sparseptron as configs/mst_parser_sparse.cfg: B=22, 5 sparse + "
                           "5 MIRA epochs, gold-tree support, overlap refill, v1 features",
            "block": {"@mst_learners": "spacy_mstparse.Sparseptron.v1", "B": 22,
                      "shrink_every": 32, "sparse_epochs": 5, "debias": "MIRA", "C": None,
                      "overlap": "refill", "support": "gold"},
            "features": V1_FEATURES,
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
# Small helpers
# ---------------------------------------------------------------------------

_T0 = time.perf_counter()
# Environment of every subprocess; --snapshot points it at an exported,
# separately built copy of the committed code.
CHILD_ENV: Optional[Dict[str, str]] = None


def log(message: str) -> None:
    elapsed = time.perf_counter() - _T0
    print(f"[{elapsed / 60:6.1f} min] {message}", file=sys.stderr, flush=True)


def rel(path: Path) -> str:
    """``path`` relative to the repository root when possible (for the
    recorded commands: no absolute machine paths)."""
    return os.path.relpath(Path(path).resolve(), REPO_ROOT)


def display_command(cmd: Sequence[str]) -> str:
    shown = ["python" if arg == sys.executable else arg for arg in cmd]
    return " ".join(shown)


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())


def run_measured(cmd: Sequence[str], log_path: Path, cwd: Path = REPO_ROOT,
                 cap_seconds: Optional[float] = None) -> Dict[str, Any]:
    """Run ``cmd`` (cwd = repo root, stdout+stderr to ``log_path``), reap it
    with ``os.wait4`` and return its exit code, wall time, CPU times and peak
    RSS (that child's own rusage). With ``cap_seconds`` the child gets
    SIGTERM once it has run that long (``capped`` in the result says so)."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()
    capped = False
    with open(log_path, "wb") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(list(cmd), cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                env=CHILD_ENV)
        try:
            if cap_seconds is None:
                _, status, usage = os.wait4(proc.pid, 0)
            else:
                while True:
                    pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
                    if pid:
                        break
                    if not capped and time.perf_counter() - start > cap_seconds:
                        capped = True
                        proc.send_signal(signal.SIGTERM)
                    time.sleep(0.5)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {
        "command": display_command(cmd),
        "returncode": proc.returncode,
        "capped": capped,
        "cap_seconds": cap_seconds,
        "wall_seconds": wall,
        "user_seconds": usage.ru_utime,
        "system_seconds": usage.ru_stime,
        "peak_rss_mb": usage.ru_maxrss / 1024.0,  # ru_maxrss is in KiB on Linux
        "loadavg_before": list(load_before),
        "log": rel(log_path),
    }


def tail(path: Path, n: int = 25) -> str:
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return ""


def take_sentences(src: Path, dest: Path, n: int) -> int:
    """Copy the first ``n`` sentences (blank-line separated blocks) of a
    CoNLL-U file."""
    blocks: List[str] = []
    current: List[str] = []
    with open(src, encoding="utf-8") as file_:
        for line in file_:
            if line.strip():
                current.append(line)
            elif current:
                blocks.append("".join(current))
                current = []
                if len(blocks) == n:
                    break
    if current and len(blocks) < n:
        blocks.append("".join(current))
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text("\n".join(blocks) + "\n", encoding="utf-8")
    return len(blocks)


def count_sentences(path: Path) -> int:
    n = 0
    in_sent = False
    with open(path, encoding="utf-8") as file_:
        for line in file_:
            if line.strip():
                in_sent = True
            elif in_sent:
                n += 1
                in_sent = False
    return n + int(in_sent)


def convert_once(src: Path, dest: Path, n_sents: int) -> Dict[str, Any]:
    """``python -m spacy_mstparse convert``, skipped when ``dest`` was made
    from the same source file (size, mtime) with the same options."""
    stat = src.stat()
    stamp = {"source": str(src.resolve()), "size": stat.st_size,
             "mtime_ns": stat.st_mtime_ns, "n_sents": n_sents}
    stamp_path = dest.with_suffix(".stamp.json")
    cmd = [sys.executable, "-m", "spacy_mstparse", "convert", rel(src), rel(dest),
           "--format", "conllu", "--n-sents", str(n_sents), "--lang", "en"]
    if dest.exists() and stamp_path.exists():
        try:
            if json.loads(stamp_path.read_text()) == stamp:
                log(f"reusing {rel(dest)}")
                return {"command": display_command(cmd), "reused": True}
        except ValueError:
            pass
    log(f"converting {rel(src)} -> {rel(dest)}")
    result = run_measured(cmd, dest.with_suffix(".convert.log"))
    if result["returncode"] != 0:
        sys.exit(f"conversion failed:\n{tail(dest.with_suffix('.convert.log'))}")
    stamp_path.write_text(json.dumps(stamp))
    result["reused"] = False
    return result


# spaCy's console logger: "  E    #  LOSS MST_PARSER  DEP_UAS  DEP_LAS  SCORE"
_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+((?:[-\d.]+\s+)*[-\d.]+)\s*$")


def training_curve(log_path: Path) -> Dict[str, Any]:
    """The rows of spaCy's training table (epoch, step, loss, scores) and
    its header, from the training log."""
    header: Optional[List[str]] = None
    rows = []
    try:
        lines = Path(log_path).read_text(errors="replace").splitlines()
    except OSError:
        return {"header": None, "rows": []}
    for line in lines:
        stripped = line.strip()
        if header is None and stripped.startswith("E ") and "#" in stripped:
            header = re.split(r"\s{2,}", stripped)
            continue
        match = _ROW.match(line)
        if match:
            rows.append([float(x) for x in line.split()])
    return {"header": header, "rows": rows}


def evaluate(model: Path, dev: Path, out_json: Path) -> Dict[str, Any]:
    cmd = [sys.executable, "-m", "spacy_mstparse", "evaluate", rel(model), rel(dev),
           "--gold-tags", "--output", rel(out_json)]
    run = run_measured(cmd, out_json.with_suffix(".log"))
    if run["returncode"] != 0:
        raise RuntimeError(f"evaluation failed ({display_command(cmd)}):\n"
                           f"{tail(out_json.with_suffix('.log'))}")
    metrics = json.loads(out_json.read_text())
    keys = ("uas", "las", "uas_all", "las_all", "spacy_dep_uas", "spacy_dep_las",
            "sentences", "tokens", "tokens_per_second", "parser_seconds", "pipeline_seconds")
    result = {key: metrics.get(key) for key in keys}
    result.update({"command": run["command"], "wall_seconds": run["wall_seconds"],
                   "peak_rss_mb": run["peak_rss_mb"], "loadavg_before": run["loadavg_before"]})
    return result


# ---------------------------------------------------------------------------
# Environment
# ---------------------------------------------------------------------------


def _git(*args: str) -> Optional[str]:
    try:
        out = subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True,
                             check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def write_dist_info(dest: Path) -> Path:
    """Give the snapshot its own ``spacy_mstparse-*.dist-info`` with the entry
    points of its own pyproject.toml. It comes first on ``sys.path``, and
    importlib.metadata keeps the first distribution of a name, so spaCy's
    entry-point look-ups see the snapshot's factories and registered
    functions, not those of the development install (which may name modules
    the snapshot does not have yet)."""
    import tomllib

    project = tomllib.loads((dest / "pyproject.toml").read_text())["project"]
    info = dest / f"spacy_mstparse-{project['version']}.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
    )
    lines = []
    for group, entries in project.get("entry-points", {}).items():
        lines.append(f"[{group}]")
        lines += [f"{name} = {target}" for name, target in entries.items()]
        lines.append("")
    (info / "entry_points.txt").write_text("\n".join(lines))
    return info


def make_snapshot(work: Path) -> Dict[str, Any]:
    """Export the committed tree (``git archive HEAD``) to
    ``work/src/<commit>/``, build its Cython extensions in place and point
    the subprocesses at it (``PYTHONPATH`` + ``PYTHONSAFEPATH=1``, so neither
    the repository in the working directory nor the editable install is
    imported). Other people's uncommitted edits and rebuilds of the shared
    checkout then cannot change the code in the middle of a run."""
    global CHILD_ENV
    import tarfile

    commit = _git("rev-parse", "HEAD")
    if not commit:
        sys.exit("--snapshot needs a git checkout (git rev-parse HEAD failed)")
    dest = work / "src" / commit[:12]
    built = dest / ".built"
    if not built.exists():
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        tar_path = dest.parent / f"{commit[:12]}.tar"
        log(f"exporting {commit[:12]} to {rel(dest)}")
        subprocess.run(["git", "archive", "--format=tar", "-o", str(tar_path), commit],
                       cwd=REPO_ROOT, check=True)
        with tarfile.open(tar_path) as tar:
            tar.extractall(dest)
        tar_path.unlink()
        log("building the Cython extensions of the snapshot")
        build = run_measured([sys.executable, "setup.py", "build_ext", "--inplace", "-j", "2"],
                             work / "src" / f"{commit[:12]}.build.log", cwd=dest)
        if build["returncode"] != 0:
            sys.exit(f"building the snapshot failed:\n{tail(work / 'src' / f'{commit[:12]}.build.log')}")
        write_dist_info(dest)
        built.write_text(commit + "\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = str(dest) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONSAFEPATH"] = "1"
    CHILD_ENV = env
    check = subprocess.run(
        [sys.executable, "-c", "import spacy_mstparse; print(spacy_mstparse.__file__)"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True,
    )
    imported = Path(check.stdout.strip()).resolve() if check.returncode == 0 else None
    if imported is None or dest.resolve() not in imported.parents:
        sys.exit(f"the snapshot is not the imported spacy_mstparse ({check.stdout}{check.stderr})")
    log(f"subprocesses use the snapshot of {commit[:12]} ({rel(dest)})")
    return {"snapshot": True, "commit": commit, "path": rel(dest),
            "imported_from": rel(imported)}


def working_tree_code() -> Dict[str, Any]:
    check = subprocess.run(
        [sys.executable, "-c", "import spacy_mstparse; print(spacy_mstparse.__file__)"],
        cwd=REPO_ROOT, capture_output=True, text=True,
    )
    return {
        "snapshot": False,
        "commit": _git("rev-parse", "HEAD"),
        "tracked_files_modified_at_start": _git("status", "--porcelain", "--untracked-files=no"),
        "imported_from": rel(Path(check.stdout.strip())) if check.returncode == 0 else None,
    }


def machine_info() -> Dict[str, Any]:
    cpu_model = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_total_mb = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_total_mb = int(line.split()[1]) / 1024.0
    except OSError:
        pass
    try:
        nproc = int(subprocess.run(["nproc"], capture_output=True, text=True).stdout)
    except (OSError, ValueError):
        nproc = len(os.sched_getaffinity(0))
    import numpy
    import spacy
    import spacy_mstparse

    return {
        "nproc": nproc,
        "cpu_model": cpu_model,
        "mem_total_mb": mem_total_mb,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "spacy": spacy.__version__,
        "numpy": numpy.__version__,
        "spacy_mstparse": spacy_mstparse.__version__,
        "loadavg_at_start": list(os.getloadavg()),
    }


# ---------------------------------------------------------------------------
# Markdown
# ---------------------------------------------------------------------------


def _num(value: Any, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


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
                _num(train["wall_seconds"] / 60, ".1f"),
                _num(train["peak_rss_mb"], ".0f"),
                _num(last["uas"], ".2f"), _num(last["las"], ".2f"),
                _num(last["uas_all"], ".2f"), _num(last["las_all"], ".2f"),
                _num(best["uas"], ".2f"), _num(best["las"], ".2f"),
                _num(best["uas_all"], ".2f"), _num(best["las_all"], ".2f"),
                _num(last["tokens_per_second_median"], ",.0f"),
                _num(res["size"]["mst_parser_mb"], ".1f"),
                _num(res["size"]["model_mb"], ".1f"),
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
    parser.add_argument("--train", type=Path, default=None,
                        help="train CoNLL-U (default ../shared/data/ud/en_ewt-ud-train.conllu "
                             "relative to the repository root)")
    parser.add_argument("--dev", type=Path, default=None,
                        help="dev CoNLL-U (default ../shared/data/ud/en_ewt-ud-dev.conllu "
                             "relative to the repository root)")
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
    names = [name.strip() for name in args.learners.split(",") if name.strip()]
    unknown = [name for name in names if name not in LEARNERS]
    if unknown or not names:
        parser.error(f"unknown learner(s) {unknown}; choose from {', '.join(LEARNERS)}")
    args.learner_names = names
    if args.epochs is None:
        args.epochs = QUICK_EPOCHS if args.quick else 10
    if args.train_sents is None and args.quick:
        args.train_sents = QUICK_TRAIN_SENTS
    if args.output is None:
        args.output = args.work_dir / "learners-quick.json" if args.quick else DEFAULT_OUTPUT
    if args.epochs < 1 or args.speed_runs < 1:
        parser.error("--epochs and --speed-runs must be >= 1")
    for attr, default, what in (("train", DEFAULT_TRAIN, "train"), ("dev", DEFAULT_DEV, "dev")):
        path = getattr(args, attr) or default
        if not path.is_file():
            parser.error(
                f"{what} treebank not found: {path.resolve()} "
                f"(pass --{attr} PATH; the default is {rel(default)} relative to the "
                f"repository root {REPO_ROOT.name}/)"
            )
        setattr(args, attr, path.resolve())
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
        "command": display_command([sys.executable, rel(Path(__file__))]
                                   + list(argv if argv is not None else sys.argv[1:])),
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
        results["total_seconds"] = time.perf_counter() - _T0
        args.output.write_text(json.dumps(results, indent=2) + "\n")

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
            last = evaluate(model_last, args.dev, out_dir / "eval-last-1.json")
            last["tokens_per_second_runs"] = [last.pop("tokens_per_second")]
            last["tokens_per_second_median"] = last["tokens_per_second_runs"][0]
            last["scores_identical_across_runs"] = True
            entry["model_last"] = last
            trained.append(name)
            log(f"  model-last: UAS {last['uas']:.2f} LAS {last['las']:.2f}, "
                f"{last['tokens_per_second_median']:,.0f} tok/s")
            if model_best.is_dir():
                log("  evaluating model-best")
                entry["model_best"] = evaluate(model_best, args.dev, out_dir / "eval-best.json")
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
                res = evaluate(out_dir / "model-last", args.dev, out_dir / f"eval-last-{run}.json")
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

    results["finished"] = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    results["machine"]["loadavg_at_end"] = list(os.getloadavg())
    save()
    table = markdown_table(results)
    print(table)
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(table)
    log(f"done: {rel(args.output)}" + (f", {rel(args.markdown)}" if args.markdown else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
