"""The pipelines users get, trained once and cached: ``spacy train`` on the
shipped configs (``configs/mst_parser.cfg``, ``configs/mst_parser_o2.cfg``)
and spaCy's standard efficiency pipeline (``spacy init config --pipeline
tagger,parser --optimize efficiency``: tok2vec + tagger + parser), all on
the whole EWT train treebank (dev for spaCy's evaluation during training).

Helper of ``benchmarks/bench_shipped_speed.py``. The cache lives outside the
repository (``~/.cache/spacy-mstparse-bench`` unless ``--cache`` says
otherwise); each model sits in ``<name>-<key>``, where the key is a hash of
the config (its settings, not its comments), the training overrides, the
treebank files (size, mtime) and, for ours, the model format version,
so an edited config trains anew and an unchanged one is loaded (the
prediction-only settings, ``PREDICTION_ONLY``, are left out of the key).
``model-last`` is the model used (as ``bench_peers``). ``--max-epochs``
caps the epochs of every system (a ``--training.max_epochs`` override, part
of the key and of the record): parse speed does not depend on how long a
model trained, accuracy does.

Run alone to train (or find) one system, e.g. in the background while
something else is done::

    nice -n 5 python -m benchmarks.shipped_models spacy
"""
import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any, Dict, List

from benchmarks import common

SYSTEMS = {
    "o1": {"config": common.REPO_ROOT / "configs" / "mst_parser.cfg"},
    "o2": {"config": common.REPO_ROOT / "configs" / "mst_parser_o2.cfg"},
    "spacy": {"init": "tagger,parser"},
}
DEFAULT_CACHE = Path.home() / ".cache" / "spacy-mstparse-bench"
SPACY_EPOCHS = 10
# Settings that only change prediction (the benchmark applies the config's
# values to the loaded pipeline): not part of the cache key.
PREDICTION_ONLY = ("quantize_weights", "keep_heads")


def _stat(path: Path) -> Dict[str, Any]:
    stat = path.stat()
    return {"name": path.name, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def corpora(cache: Path, train: Path, dev: Path) -> Dict[str, Path]:
    """EWT train / dev as DocBins (one sentence per Doc), converted once."""
    out = {"train": cache / "corpus" / "train-n1.spacy", "dev": cache / "corpus" / "dev-n1.spacy"}
    out["train"].parent.mkdir(parents=True, exist_ok=True)
    common.convert_once(train, out["train"], 1)
    common.convert_once(dev, out["dev"], 1)
    return out


def config_text(name: str, spacy_epochs: int) -> str:
    """The config ``spacy train`` gets: the shipped file as it is, or
    spaCy's init config with its epochs fixed (``max_steps = 0``,
    ``patience = 0``: no early stop)."""
    spec = SYSTEMS[name]
    if "config" in spec:
        return spec["config"].read_text(encoding="utf-8")
    from spacy.cli.init_config import init_config

    config = init_config(lang="en", pipeline=spec["init"].split(","), optimize="efficiency")
    config["training"]["max_epochs"] = spacy_epochs
    config["training"]["max_steps"] = 0
    config["training"]["patience"] = 0
    return config.to_str()


def model_dir(name: str, cache: Path, train: Path, dev: Path, spacy_epochs: int = SPACY_EPOCHS,
              max_epochs: int = 0):
    """(directory, config text) of a system's cache entry."""
    import spacy

    from spacy.util import load_config_from_str

    from spacy_mstparse.components.mst_parser import FORMAT_VERSION

    text = config_text(name, spacy_epochs)
    trained = load_config_from_str(text, interpolate=False)
    for block in trained.get("components", {}).values():
        for key in PREDICTION_ONLY:
            block.pop(key, None)
    key = {"config": trained.to_str(), "train": _stat(train), "dev": _stat(dev),
           "spacy": spacy.__version__, "max_epochs": max_epochs}
    if name != "spacy":
        key["format"] = FORMAT_VERSION   # a new model format needs new models of ours
    key_src = json.dumps(key, sort_keys=True)
    key = hashlib.sha256(key_src.encode("utf-8")).hexdigest()[:16]
    return cache / f"{name}-{key}", text


def ensure_trained(name: str, cache: Path, train: Path, dev: Path,
                   spacy_epochs: int = SPACY_EPOCHS, max_epochs: int = 0) -> Dict[str, Any]:
    """Train ``name`` unless its cache entry has a finished ``model-last``;
    returns the entry's record (model path, training command and times).
    max_epochs > 0: at most that many epochs (an override of the config)."""
    out_dir, text = model_dir(name, cache, train, dev, spacy_epochs, max_epochs)
    record_path = out_dir / "record.json"
    if record_path.is_file() and (out_dir / "model-last").is_dir():
        record = json.loads(record_path.read_text())
        record["reused"] = True
        record["model"] = str(out_dir / "model-last")
        common.log(f"{name}: cached model {out_dir.name}")
        return record
    paths = corpora(cache, train, dev)
    out_dir.mkdir(parents=True, exist_ok=True)
    cfg = out_dir / "config.cfg"
    cfg.write_text(text, encoding="utf-8")
    cmd = [sys.executable, "-m", "spacy", "train", str(cfg), "--output", str(out_dir),
           "--paths.train", str(paths["train"]), "--paths.dev", str(paths["dev"]),
           "--nlp.lang", "en"]
    if max_epochs:
        cmd += ["--training.max_epochs", str(max_epochs)]
    common.log(f"{name}: training into {out_dir}")
    run = common.run_measured(cmd, out_dir / "train.log")
    if run["returncode"] != 0 or not (out_dir / "model-last").is_dir():
        raise RuntimeError(f"{name}: spacy train exited with {run['returncode']}:\n"
                           f"{common.tail(out_dir / 'train.log')}")
    shown = common.display_command(cmd).replace(str(cache), "$CACHE")
    record = {"system": name, "command": shown, "max_epochs_override": max_epochs or None,
              "wall_seconds": run["wall_seconds"],
              "user_seconds": run["user_seconds"], "loadavg_before": run["loadavg_before"],
              "config_source": (common.rel(SYSTEMS[name]["config"]) if "config" in SYSTEMS[name]
                                else f"spacy init config --pipeline {SYSTEMS[name]['init']} "
                                     f"--optimize efficiency; max_epochs {spacy_epochs}, "
                                     "max_steps 0, patience 0"),
              "curve": common.training_curve(out_dir / "train.log"), "cache_entry": out_dir.name}
    record_path.write_text(json.dumps(record, indent=2) + "\n")
    record["reused"] = False
    record["model"] = str(out_dir / "model-last")
    return record


def main(argv: List[str] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("systems", nargs="+", choices=sorted(SYSTEMS))
    p.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    p.add_argument("--spacy-epochs", type=int, default=SPACY_EPOCHS,
                   help="epochs of spaCy's pipeline (its config: no early stop)")
    p.add_argument("--max-epochs", type=int, default=0,
                   help="cap every system's epochs (0: as the configs say)")
    p.add_argument("--train", type=Path, default=common.DEFAULT_TRAIN)
    p.add_argument("--dev", type=Path, default=common.DEFAULT_DEV)
    args = p.parse_args(argv)
    for name in args.systems:
        record = ensure_trained(name, args.cache, args.train, args.dev, args.spacy_epochs,
                                args.max_epochs)
        print(json.dumps({k: v for k, v in record.items() if k != "curve"}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
