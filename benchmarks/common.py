"""What the benchmark scripts share: paths and learner / feature blocks,
measured subprocesses (exact per-child rusage through ``os.wait4``), the
CoNLL-U -> DocBin conversion, ``spacy_mstparse evaluate`` runs, the code
snapshot (``--snapshot``), machine information, and the in-process pieces
(gold-tagged training examples, the epoch loop over ``parser.update``, which
trains through the pipe's ``GraphTrainer``, encoded gold trees, timed
``pipe`` runs).

The scripts import it as ``benchmarks.common`` and run as modules from the
repository root (``python -m benchmarks.bench_learners``); their worker
subprocesses are started the same way (``module_command``), so under
``--snapshot`` (``PYTHONPATH`` = the snapshot, ``PYTHONSAFEPATH=1``) a worker
runs the snapshot's own copy of the benchmark.
"""
import json
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence

REPO_ROOT = Path(__file__).resolve().parent.parent
BENCH_DIR = REPO_ROOT / "benchmarks"
RESULTS = BENCH_DIR / "results"
WORK = BENCH_DIR / "work"
# The UD treebanks: assets/ud (fetched by `spacy project assets`) when it
# holds EWT, else the development machines' copies in ../shared/data/ud.
ASSETS_UD = REPO_ROOT / "assets" / "ud"
DATA = (ASSETS_UD if (ASSETS_UD / "en_ewt-ud-train.conllu").exists()
        else REPO_ROOT / ".." / "shared" / "data" / "ud")
DEFAULT_TRAIN = DATA / "en_ewt-ud-train.conllu"
DEFAULT_DEV = DATA / "en_ewt-ud-dev.conllu"

# Learner and feature blocks several benchmarks use.
PA_I = {"@mst_learners": "spacy_mstparse.PassiveAggressive.v1", "variant": "PA-I", "C": 0.05}
MIRA_K5 = {"@mst_learners": "spacy_mstparse.MIRA.v1", "k": 5, "C": None}
# McDonald et al. (2005)'s conjunctions only: no direction back-off.
FEATURES_V1 = {"@mst_features": "spacy_mstparse.FirstOrderFeatures.v1", "tag_columns": "both",
               "use_morph": False, "n_buckets": 2**22}


# ---------------------------------------------------------------------------
# Logging, paths, sizes
# ---------------------------------------------------------------------------

_T0 = time.perf_counter()
# Environment of every subprocess; --snapshot points it at an exported,
# separately built copy of the committed code.
CHILD_ENV: Optional[Dict[str, str]] = None


def log(message: str) -> None:
    elapsed = time.perf_counter() - _T0
    print(f"[{elapsed / 60:6.1f} min] {message}", file=sys.stderr, flush=True)


def elapsed_seconds() -> float:
    """Seconds since this module was imported (the benchmark's start)."""
    return time.perf_counter() - _T0


def rel(path: Path) -> str:
    """``path`` relative to the repository root when possible (for the
    recorded commands: no absolute machine paths)."""
    return os.path.relpath(Path(path).resolve(), REPO_ROOT)


def display_command(cmd: Sequence[str]) -> str:
    """``cmd`` as a shell line (arguments quoted where needed), ``python``
    for this interpreter."""
    return " ".join("python" if arg == sys.executable else shlex.quote(str(arg)) for arg in cmd)


def module_command(module: str, *args: str) -> List[str]:
    """``python -m benchmarks.<module> ARGS`` (run with cwd = repository root)."""
    return [sys.executable, "-m", f"benchmarks.{module}", *args]


def invocation(module: str, argv: Optional[Sequence[str]] = None) -> str:
    """How this benchmark was started, for the results: ``python -m
    benchmarks.<module> ARGS``."""
    return display_command(module_command(module, *(argv if argv is not None else sys.argv[1:])))


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())


def tail(path: Path, n: int = 25) -> str:
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return ""


def save_results(results: Dict[str, Any], path: Path) -> None:
    """Write the results JSON (with the seconds since the start)."""
    results["total_seconds"] = elapsed_seconds()
    path.write_text(json.dumps(results, indent=2) + "\n")


def finish_results(results: Dict[str, Any], path: Path, table: str,
                   markdown: Optional[Path]) -> None:
    """The end of a run: finishing time and load, the JSON, the Markdown
    table on stdout and in ``markdown`` (if given)."""
    import datetime

    results["finished"] = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    results["machine"]["loadavg_at_end"] = list(os.getloadavg())
    save_results(results, path)
    print(table)
    if markdown:
        markdown.parent.mkdir(parents=True, exist_ok=True)
        markdown.write_text(table)


def num(value: Any, fmt: str) -> str:
    """A table cell: ``value`` formatted, "-" when missing."""
    return "-" if value is None else format(value, fmt)


def arc_weight_stats(component_dir: Path) -> Dict[str, Any]:
    """The saved arc-weight file of an ``mst_parser`` directory
    (``arc_weights.npz``, bitmap + values; ``.npy`` in format 1), its size
    and the number of non-zero arc weights."""
    import numpy

    from spacy_mstparse.components.serialization import load_sparse_vector

    path = next(Path(component_dir).glob("arc_weights.np*"))
    if path.suffix == ".npz":
        arc = load_sparse_vector(path.read_bytes(), str(path))
    else:
        arc = numpy.load(path)
    return {"arc_file": path.name, "arc_file_bytes": path.stat().st_size,
            "arc_nonzero": int(numpy.count_nonzero(arc)), "arc_buckets": int(arc.size)}


# ---------------------------------------------------------------------------
# Subprocesses
# ---------------------------------------------------------------------------


def run_measured(cmd: Sequence[str], log_path: Path, cwd: Path = REPO_ROOT,
                 cap_seconds: Optional[float] = None,
                 env: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    """Run ``cmd`` (cwd = repo root, stdout+stderr to ``log_path``; ``env``:
    its environment, default ``CHILD_ENV``), reap it with ``os.wait4`` and
    return its exit code, wall time, CPU times and peak RSS (that child's
    own rusage). With ``cap_seconds`` the child gets SIGTERM once it has run
    that long (``capped`` in the result says so)."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()
    capped = False
    with open(log_path, "wb") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(list(cmd), cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                env=CHILD_ENV if env is None else env)
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


# ---------------------------------------------------------------------------
# Treebank files
# ---------------------------------------------------------------------------


def add_treebank_options(parser) -> None:
    """``--train`` / ``--dev`` CoNLL-U options (checked by ``resolve_treebanks``)."""
    for attr in ("train", "dev"):
        parser.add_argument(f"--{attr}", type=Path, default=None,
                            help=f"{attr} CoNLL-U (default ../shared/data/ud/"
                                 f"en_ewt-ud-{attr}.conllu relative to the repository root)")


def resolve_treebanks(parser, args, default_train: Path = DEFAULT_TRAIN,
                      default_dev: Path = DEFAULT_DEV) -> None:
    """Set ``args.train`` / ``args.dev`` (None = the default) to resolved
    paths, or stop through ``parser.error`` when a file does not exist."""
    for attr, default in (("train", default_train), ("dev", default_dev)):
        path = getattr(args, attr) or default
        if not path.is_file():
            parser.error(
                f"{attr} treebank not found: {path.resolve()} (pass --{attr} PATH; the "
                f"default is {rel(default)} relative to the repository root {REPO_ROOT.name}/)"
            )
        setattr(args, attr, path.resolve())


def choose_names(parser, text: str, known: Iterable[str], what: str) -> List[str]:
    """The names of a comma-separated option value, or ``parser.error``
    naming the unknown ones (``what``: "learner", "system", ...)."""
    known = list(known)
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in known]
    if unknown or not names:
        parser.error(f"unknown {what}(s) {unknown}; choose from {', '.join(known)}")
    return names


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


# ---------------------------------------------------------------------------
# spacy train logs, spacy_mstparse evaluate
# ---------------------------------------------------------------------------

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


def evaluate_model(model: Path, dev: Path, out_json: Path) -> Dict[str, Any]:
    """``python -m spacy_mstparse evaluate MODEL DEV --gold-tags`` in a
    measured subprocess: scores, parser speed, peak RSS."""
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
# Code and machine
# ---------------------------------------------------------------------------


def git(*args: str) -> Optional[str]:
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


def _imported_from(env: Optional[Dict[str, str]]) -> Optional[Path]:
    """Where a subprocess with ``env`` imports ``spacy_mstparse`` from."""
    check = subprocess.run(
        [sys.executable, "-c", "import spacy_mstparse; print(spacy_mstparse.__file__)"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True,
    )
    return Path(check.stdout.strip()).resolve() if check.returncode == 0 else None


def checkout_env(root: Path) -> Dict[str, str]:
    """This process's environment with ``root`` first on ``PYTHONPATH``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(root)] + [p for p in [env.get("PYTHONPATH")] if p])
    return env


def use_snapshot(dest: Path) -> Dict[str, Any]:
    """Point every subprocess at the built snapshot ``dest``: ``PYTHONPATH``
    first, ``PYTHONSAFEPATH=1`` (neither the checkout in the working
    directory nor the editable install is imported; workers started with
    ``module_command`` run the snapshot's copy of the benchmark). Stops when
    ``dest`` is not a built snapshot or is not what the children import."""
    global CHILD_ENV
    built = dest / ".built"
    if not built.exists():
        sys.exit(f"{dest} is not a built snapshot (no .built)")
    env = checkout_env(dest.resolve())
    env["PYTHONSAFEPATH"] = "1"
    imported = _imported_from(env)
    if imported is None or dest.resolve() not in imported.parents:
        sys.exit(f"the snapshot {rel(dest)} is not the imported spacy_mstparse ({imported})")
    CHILD_ENV = env
    commit = built.read_text().strip()
    log(f"subprocesses use the snapshot of {commit[:12]} ({rel(dest)})")
    return {"snapshot": True, "commit": commit, "path": rel(dest),
            "imported_from": rel(imported)}


def make_snapshot(work: Path) -> Dict[str, Any]:
    """Export the committed tree (``git archive HEAD``) to
    ``work/src/<commit>/``, build its Cython extensions in place (once per
    commit) and point the subprocesses at it (``use_snapshot``). Other
    people's uncommitted edits and rebuilds of the shared checkout then
    cannot change the code in the middle of a run."""
    import tarfile

    commit = git("rev-parse", "HEAD")
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
        build_log = work / "src" / f"{commit[:12]}.build.log"
        build = run_measured([sys.executable, "setup.py", "build_ext", "--inplace", "-j", "2"],
                             build_log, cwd=dest)
        if build["returncode"] != 0:
            sys.exit(f"building the snapshot failed:\n{tail(build_log)}")
        write_dist_info(dest)
        built.write_text(commit + "\n")
    return use_snapshot(dest)


def working_tree_code() -> Dict[str, Any]:
    imported = _imported_from(None)
    return {
        "snapshot": False,
        "commit": git("rev-parse", "HEAD"),
        "tracked_files_modified_at_start": git("status", "--porcelain", "--untracked-files=no"),
        "imported_from": rel(imported) if imported is not None else None,
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
# In-process training and parsing
# ---------------------------------------------------------------------------


def gold_examples(path: Path, vocab, limit: int = 0) -> list:
    """Examples of a CoNLL-U file, one sentence per Example: the reference
    doc, and a predicted doc with its gold words, tags and sentence starts
    (``GoldAnnotationsCorpus``'s copying); the first ``limit`` (0 = all)."""
    from spacy.training import Example

    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.corpus.readers import gold_annotated_doc

    out = []
    for ref in read_conllu(path, vocab, n_sents=1):
        if limit and len(out) == limit:
            break
        out.append(Example(gold_annotated_doc(Example(ref.copy(), ref)), ref))
    return out


def numpy_orders(seed: int = 0) -> Callable[[int], Sequence[int]]:
    """Epoch orders: a fresh ``numpy.random.RandomState(seed).permutation``
    of the examples each epoch."""
    import numpy

    rng = numpy.random.RandomState(seed)
    return lambda n: rng.permutation(n)


def python_orders(seed: int = 0) -> Callable[[int], Sequence[int]]:
    """Epoch orders: one index list shuffled in place each epoch with
    ``random.Random(seed)`` (as shuffling the example list itself)."""
    import random

    rng = random.Random(seed)
    order: List[int] = []

    def next_order(n: int) -> List[int]:
        if len(order) != n:
            order[:] = range(n)
        rng.shuffle(order)
        return list(order)

    return next_order


def train_epochs(parser, examples: Sequence, epochs: int, batch_size: int,
                 orders: Callable[[int], Sequence[int]],
                 on_epoch: Optional[Callable[[int, Dict[str, float], float], bool]] = None
                 ) -> float:
    """The in-process training loop of the ``mst_parser`` benchmarks, after
    ``nlp.initialize``: ``epochs`` passes over ``examples`` in the order
    ``orders(n)`` gives, ``parser.update`` on batches of ``batch_size``
    (the pipe's ``GraphTrainer`` does the work), then the prediction weights
    (averaging counts as training time). ``on_epoch(epoch, losses,
    train_seconds)`` runs after every epoch, untimed; True stops. Returns
    the training seconds."""
    train_seconds = 0.0
    for epoch in range(1, epochs + 1):
        start = time.perf_counter()
        order = orders(len(examples))
        losses: Dict[str, float] = {}
        for i in range(0, len(order), batch_size):
            parser.update([examples[j] for j in order[i:i + batch_size]], losses=losses)
        parser.prediction_weights()
        train_seconds += time.perf_counter() - start
        if on_epoch is not None and on_epoch(epoch, losses, train_seconds):
            break
    return train_seconds


def encoded_gold(parser, examples: Iterable) -> List[tuple]:
    """``(Sentence, gold heads)`` of every usable reference sentence of
    ``examples``, encoded by an initialized ``mst_parser``
    (``parser.training_sentences``): what ``GraphTrainer.begin`` and
    ``spacy_mstparse.graph.primal_objective`` take."""
    return [(sentence, heads) for sentence, heads, _ in parser.training_sentences(examples)]


def copy_docs(docs: Iterable) -> list:
    """Fresh copies of input docs (parsing annotates docs in place)."""
    from spacy.tokens import Doc

    return [Doc(d.vocab).from_bytes(d.to_bytes()) for d in docs]


def timed_pipe(component, docs: Sequence, batch_size: int = 128):
    """(parsed docs, seconds) of ``component.pipe`` over copies of ``docs``;
    copying is not timed."""
    copies = copy_docs(docs)
    start = time.perf_counter()
    parsed = list(component.pipe(copies, batch_size=batch_size))
    return parsed, time.perf_counter() - start
