"""mst_parser side by side with the parsers a spaCy user would pick instead.

On one treebank (by default UD English EWT: ``../shared/data/ud/en_ewt-ud-train.conllu``
-> ``en_ewt-ud-dev.conllu`` relative to the repository root) the script
trains and evaluates, in one run and on one machine:

gold tags (gold words, sentences, UPOS/XPOS/FEATS/lemmas in; heads and labels out)
  ``mst-o1``   ``mst_parser`` first order, ``configs/mst_parser.cfg`` (PA-I, Eisner,
               McDonald et al. 2005 features) trained with ``spacy train``;
  ``mst-o2``   ``mst_parser`` second order (McDonald & Pereira 2006), ``configs/mst_parser_o2.cfg``,
               skipped with a message while that config does not exist;
  ``spacy-gold`` spaCy's own ``parser`` from ``spacy init config -p parser -o efficiency``
               (CPU), whose tok2vec embeds POS and TAG in addition to NORM/PREFIX/SUFFIX/SHAPE,
               trained on the gold tags (the stock config embeds no tags at all, so this is
               the closest spaCy parser "given gold tags");
  ``udpipe1``  UDPipe 1's parser (Parsito; PyPI ``ufal.udpipe``) trained on the train file
               with tokenizer and tagger off, run on the dev words and gold tags;
predicted tags (gold words and sentence starts in, nothing else)
  ``mst-tagged`` spaCy tok2vec + tagger + morphologizer + ``mst_supertagger`` feeding
               ``mst_parser`` (``configs/mst_parser_tagged.cfg`` without its senter:
               sentences are given);
  ``spacy-tagger-parser`` spaCy's ``init config -p tagger,parser -o efficiency`` (CPU) as is.
ablations, run only when named in ``--systems``
  ``mst-tagged-c0`` ``mst-tagged`` without word clusters (``cluster_bits = 0``);
  ``mst-tagged-o1`` ``mst-tagged`` at first order (with direction back-off);
  ``mst-o2-r2``     ``mst-o2`` with ``replicas = 2`` (since 2 is the config's own, the same);
  ``mst-o2-r3``     ``mst-o2`` with ``replicas = 3``;
  ``mst-o2-r4``     ``mst-o2`` with ``replicas = 4``;
  ``mst-o2-seed1``  ``mst-o2`` with spaCy's ``seed = 1`` (another order of the training batches);
  ``mst-o2-seed2``  ``mst-o2`` with spaCy's ``seed = 2`` (a third order);
  ``mst-o2-s0``     ``mst-o2`` without stop factors (``sibling_stops = false``);
  ``mst-o2-m``      ``mst-o2`` with the FEATS features (``use_morph = true``);
  ``mst-o2-k10``    ``mst-o2`` with 10-best MIRA instead of 5-best;
  ``mst-tagged-s0`` ``mst-tagged`` without stop factors;
  ``mst-tagged-st0`` ``mst-tagged`` without the supertagger, reading UPOS + XPOS;
  ``mst-tagged-m``  ``mst-tagged`` with the predicted FEATS features (``use_morph = true``).

Every spaCy-trained system uses the same DocBins (``spacy_mstparse convert``, one sentence
per Doc) and the same corpus reader (``spacy_mstparse.GoldAnnotationsCorpus.v1``, gold
tokenization; gold tags and sentences copied in for the gold-tag systems only).

Training caps (the same for every system): ``spacy train`` runs ``--epochs`` epochs
(default 10; ``max_steps = 0``, ``patience = 0``, i.e. no early stop), and any training
subprocess is stopped after ``--train-cap`` minutes (default 15). A spaCy run stopped by
the cap is evaluated with its ``model-best`` (saved at spaCy's last improving evaluation
on the dev file: optimistic) and marked "capped"; otherwise ``model-last`` is used.
UDPipe cannot be stopped early (a stopped run leaves no model), so it ignores the cap
(``peer_runner.py`` notes the signal and trains on; its real time is reported, marked
"over the cap"), and its iterations are chosen to fit the cap on an idle machine (``--udpipe-options``, default ``iterations=3;structured_interval=0``,
about 3.3 min per iteration on EWT on an idle 2-core machine; the manual's other defaults
kept, plus ``embedding_xpostag=20`` so that it sees XPOS like mst_parser). The manual's
defaults, 10 iterations with structured_interval=8, would take about 55 min here.

Measured per system:
* accuracy: every system writes its dev parse as CoNLL-U, and ONE scorer
  (``score_conllu``: ``spacy_mstparse.scoring.attachment_scores``) gives UAS/LAS
  without punctuation and with all words; spaCy's ``Scorer.score_deps`` on the same
  files (``dep_uas``/``dep_las``, labels lower-cased, ``punct`` left out) for comparison;
* training wall time, CPU time and peak RSS of the training subprocess (``os.wait4``);
* parse speed: tokens/s of the parser component alone (``python -m benchmarks.peer_runner
  parse``: one process, every component timed separately), and of parser + the tok2vec
  it listens to (spaCy) -- median of ``--speed-runs`` (3) runs, all systems
  round-robin at the end of the run so that a busy stretch hits every system alike;
  peak RSS of those processes;
* model size on disk: the saved pipeline directory / UDPipe model file, and the parser's
  own part (the parser component directory plus the tok2vec it listens to).

Results: ``benchmarks/results/peers.json`` (with the commands, machine, versions, git
commit), a Markdown table (``--markdown``, default ``benchmarks/results/peers.md``) and an
accuracy-vs-speed scatter plot (``--plot``, default ``benchmarks/results/peers.png``).

    pip install -r benchmarks/requirements-peers.txt
    python -m benchmarks.bench_peers --quick           # 1,000 train sentences, 1 epoch: smoke test
    python -m benchmarks.bench_peers                   # the full comparison (about 1.5 h on 2 cores)
    python -m benchmarks.bench_peers --systems mst-o1,udpipe1
"""
import argparse
import datetime
import json
import statistics
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from benchmarks import common
from benchmarks.common import (
    REPO_ROOT, RESULTS, convert_once, count_sentences, dir_bytes, display_command, log,
    module_command, num, rel, resolve_treebanks, run_measured, tail, take_sentences,
    training_curve,
)

DEFAULT_WORK = common.WORK / "peers"
DEFAULT_EPOCHS = 10
DEFAULT_TRAIN_CAP_MIN = 15.0
DEFAULT_UDPIPE_OPTIONS = "iterations=3;structured_interval=0;embedding_xpostag=20"
QUICK_TRAIN_SENTS = 1000

GOLD, PREDICTED = "gold", "predicted"

# One entry per system; adding one is adding an entry here.
SYSTEMS: Dict[str, Dict[str, Any]] = {
    "mst-o1": {
        "label": "mst_parser, 1st order",
        "description": "mst_parser first order (configs/mst_parser.cfg)",
        "kind": "spacy", "tags": GOLD, "config": REPO_ROOT / "configs" / "mst_parser.cfg",
    },
    "mst-o2": {
        "label": "mst_parser, 2nd order",
        "description": "mst_parser second order (configs/mst_parser_o2.cfg)",
        "kind": "spacy", "tags": GOLD, "config": REPO_ROOT / "configs" / "mst_parser_o2.cfg",
    },
    "mst-o2-r2": {
        "label": "mst_parser, 2nd order, 2 replicas",
        "description": ("mst-o2 with replicas = 2 (two weight copies on differently ordered "
                        "streams, mean weights; not in the default set)"),
        "kind": "spacy", "tags": GOLD, "config": REPO_ROOT / "configs" / "mst_parser_o2.cfg",
        "set": {"components.mst_parser.replicas": 2}, "optional": True,
    },
    "mst-o2-r3": {
        "label": "mst_parser, 2nd order, 3 replicas",
        "description": "mst-o2 with replicas = 3 (not in the default set)",
        "kind": "spacy", "tags": GOLD, "config": REPO_ROOT / "configs" / "mst_parser_o2.cfg",
        "set": {"components.mst_parser.replicas": 3}, "optional": True,
    },
    "mst-o2-r4": {
        "label": "mst_parser, 2nd order, 4 replicas",
        "description": "mst-o2 with replicas = 4 (not in the default set)",
        "kind": "spacy", "tags": GOLD, "config": REPO_ROOT / "configs" / "mst_parser_o2.cfg",
        "set": {"components.mst_parser.replicas": 4}, "optional": True,
    },
    "mst-o2-seed1": {
        "label": "mst_parser, 2nd order, training seed 1",
        "description": "mst-o2 with spaCy's seed 1 (another shuffle of the training batches)",
        "kind": "spacy", "tags": GOLD, "config": REPO_ROOT / "configs" / "mst_parser_o2.cfg",
        "set": {"system.seed": 1, "training.seed": 1}, "optional": True,
    },
    "mst-o2-seed2": {
        "label": "mst_parser, 2nd order, training seed 2",
        "description": "mst-o2 with spaCy's seed 2 (a third shuffle of the training batches)",
        "kind": "spacy", "tags": GOLD, "config": REPO_ROOT / "configs" / "mst_parser_o2.cfg",
        "set": {"system.seed": 2, "training.seed": 2}, "optional": True,
    },
    "mst-o2-s0": {
        "label": "mst_parser, 2nd order, no stop factors",
        "description": "mst-o2 with sibling_stops = false (not in the default set)",
        "kind": "spacy", "tags": GOLD, "config": REPO_ROOT / "configs" / "mst_parser_o2.cfg",
        "set": {"components.mst_parser.features.sibling_stops": False}, "optional": True,
    },
    "mst-o2-m": {
        "label": "mst_parser, 2nd order, FEATS features",
        "description": "mst-o2 with use_morph = true (not in the default set)",
        "kind": "spacy", "tags": GOLD, "config": REPO_ROOT / "configs" / "mst_parser_o2.cfg",
        "set": {"components.mst_parser.features.use_morph": True}, "optional": True,
    },
    "mst-o2-k10": {
        "label": "mst_parser, 2nd order, 10-best MIRA",
        "description": "mst-o2 with learner.k = 10 (not in the default set)",
        "kind": "spacy", "tags": GOLD, "config": REPO_ROOT / "configs" / "mst_parser_o2.cfg",
        "set": {"components.mst_parser.learner.k": 10}, "optional": True,
    },
    "spacy-gold": {
        "label": "spaCy parser (tok2vec + POS/TAG)",
        "description": ("spaCy parser, 'init config -p parser -o efficiency' (CPU), tok2vec "
                        "embeds NORM/PREFIX/SUFFIX/SHAPE + POS/TAG, trained on gold tags"),
        "kind": "spacy", "tags": GOLD, "init": "parser", "embed_tags": True,
    },
    "udpipe1": {
        "label": "UDPipe 1 parser",
        "description": "UDPipe 1 (ufal.udpipe) Parsito parser, tokenizer and tagger off, gold tags in",
        "kind": "udpipe", "tags": GOLD,
    },
    "mst-tagged": {
        "label": "spaCy tagger+morphologizer+supertagger -> mst_parser",
        "description": ("spaCy tok2vec + tagger + morphologizer + mst_supertagger feeding "
                        "mst_parser (configs/mst_parser_tagged.cfg without senter)"),
        "kind": "spacy", "tags": PREDICTED, "config": REPO_ROOT / "configs" / "mst_parser_tagged.cfg",
        "drop": ["senter"],
    },
    "mst-tagged-c0": {
        "label": "spaCy tagger+morphologizer -> mst_parser, no clusters",
        "description": ("mst-tagged with cluster_bits = 0 (the word-cluster ablation; "
                        "not in the default set)"),
        "kind": "spacy", "tags": PREDICTED, "config": REPO_ROOT / "configs" / "mst_parser_tagged.cfg",
        "drop": ["senter"], "set": {"components.mst_parser.features.cluster_bits": 0},
        "optional": True,
    },
    "mst-tagged-o1": {
        "label": "spaCy tagger+morphologizer -> mst_parser, 1st order",
        "description": ("mst-tagged at first order with direction back-off (the shipped config "
                        "before second order; not in the default set)"),
        "kind": "spacy", "tags": PREDICTED, "config": REPO_ROOT / "configs" / "mst_parser_tagged.cfg",
        "drop": ["senter"], "set": {"components.mst_parser.order": 1,
                                    "components.mst_parser.features.direction_backoff": True},
        "optional": True,
    },
    "mst-tagged-s0": {
        "label": "spaCy tagger+morphologizer -> mst_parser, no stop factors",
        "description": "mst-tagged with sibling_stops = false (not in the default set)",
        "kind": "spacy", "tags": PREDICTED, "config": REPO_ROOT / "configs" / "mst_parser_tagged.cfg",
        "drop": ["senter"], "set": {"components.mst_parser.features.sibling_stops": False},
        "optional": True,
    },
    "mst-tagged-st0": {
        "label": "spaCy tagger+morphologizer -> mst_parser (UPOS + XPOS, no supertags)",
        "description": ("mst-tagged without mst_supertagger, reading UPOS + XPOS (the shipped "
                        "config before supertags; not in the default set)"),
        "kind": "spacy", "tags": PREDICTED, "config": REPO_ROOT / "configs" / "mst_parser_tagged.cfg",
        "drop": ["senter", "mst_supertagger"],
        "set": {"components.mst_parser.features.supertags": False,
                "components.mst_parser.features.tag_columns": "both",
                "training.annotating_components": ["tok2vec", "tagger", "morphologizer"]},
        "optional": True,
    },
    "mst-tagged-m": {
        "label": "spaCy tagger+morphologizer+supertagger -> mst_parser, FEATS features",
        "description": ("mst-tagged with use_morph = true: the parser also reads the "
                        "morphologizer's FEATS (not in the default set)"),
        "kind": "spacy", "tags": PREDICTED, "config": REPO_ROOT / "configs" / "mst_parser_tagged.cfg",
        "drop": ["senter"], "set": {"components.mst_parser.features.use_morph": True},
        "optional": True,
    },
    "spacy-tagger-parser": {
        "label": "spaCy tagger + parser",
        "description": "spaCy 'init config -p tagger,parser -o efficiency' (CPU)",
        "kind": "spacy", "tags": PREDICTED, "init": "tagger,parser",
    },
}
# the score weights of a dropped component (by key prefix)
DROPPED_SCORES = {"senter": "sents_", "mst_supertagger": "supertag_"}
DEFAULT_SYSTEMS = tuple(name for name, spec in SYSTEMS.items() if not spec.get("optional"))


# ---------------------------------------------------------------------------
# Scoring: one scorer for every system's CoNLL-U output
# ---------------------------------------------------------------------------


def _flatten(docs) -> Dict[str, List[Any]]:
    """Words, absolute head indices (-1 for roots) and labels over all docs."""
    words: List[str] = []
    heads: List[int] = []
    labels: List[str] = []
    for doc in docs:
        offset = len(words)
        for token in doc:
            words.append(token.text)
            heads.append(-1 if token.head.i == token.i else offset + token.head.i)
            labels.append(token.dep_)
    return {"words": words, "heads": heads, "labels": labels}


def score_conllu(pred_path: Path, gold_path: Path) -> Dict[str, Any]:
    """Score a parsed CoNLL-U file against the gold one, on the words of the
    whole file (so a system that splits or joins sentences is still scored
    word by word; a head is right when it is the same word of the file).

    ``uas``/``las`` leave out punctuation (gold label ``punct``), ``uas_all``/
    ``las_all`` count every word (``spacy_mstparse.scoring.attachment_scores``).
    ``spacy_dep_uas``/``spacy_dep_las``: spaCy's ``Scorer.score_deps`` over the
    same words (labels lower-cased, punctuation left out), for comparison."""
    import spacy
    from spacy.scorer import Scorer
    from spacy.tokens import Doc
    from spacy.training import Example

    from spacy_mstparse.corpus.conll import read_conll
    from spacy_mstparse.scoring import PUNCT_LABELS, attachment_scores

    nlp = spacy.blank("xx")
    gold = _flatten(read_conll(gold_path, nlp.vocab, format="conllu", n_sents=1))
    pred = _flatten(read_conll(pred_path, nlp.vocab, format="conllu", n_sents=1))
    if gold["words"] != pred["words"]:
        n = min(len(gold["words"]), len(pred["words"]))
        first = next((i for i in range(n) if gold["words"][i] != pred["words"][i]), n)
        raise ValueError(
            f"{pred_path}: its words differ from {gold_path} from word {first + 1} on "
            f"({len(pred['words'])} vs {len(gold['words'])} words); cannot score"
        )
    scores = attachment_scores(gold["heads"], gold["labels"], pred["heads"], pred["labels"])

    def as_doc(d):
        heads = [i if h < 0 else h for i, h in enumerate(d["heads"])]
        deps = ["ROOT" if h < 0 else (lab or "dep") for h, lab in zip(d["heads"], d["labels"])]
        return Doc(nlp.vocab, words=d["words"], heads=heads, deps=deps)

    def getter(token, attr):
        return token.vocab.strings.as_string(getattr(token, attr)).lower()

    example = Example(as_doc(pred), as_doc(gold))
    spacy_scores = Scorer.score_deps([example], "dep", getter=getter, ignore_labels=PUNCT_LABELS)
    scores["spacy_dep_uas"] = 100.0 * spacy_scores["dep_uas"]
    scores["spacy_dep_las"] = 100.0 * spacy_scores["dep_las"]
    return scores


# ---------------------------------------------------------------------------
# Configs
# ---------------------------------------------------------------------------


def _reader(copy: bool) -> Dict[str, Any]:
    return {"@readers": "spacy_mstparse.GoldAnnotationsCorpus.v1", "path": None,
            "max_length": 0, "gold_tokens": True, "copy_tags": copy, "copy_sents": copy}


def prepare_config(name: str, spec: Dict[str, Any], work: Path, epochs: int) -> Dict[str, Any]:
    """Write ``work/configs/<name>.cfg`` for a spaCy-trained system; returns
    what was done (commands, changes)."""
    import spacy.util

    cfg_dir = work / "configs"
    cfg_dir.mkdir(parents=True, exist_ok=True)
    info: Dict[str, Any] = {}
    if "init" in spec:
        init_path = cfg_dir / f"{name}-init.cfg"
        cmd = [sys.executable, "-m", "spacy", "init", "config", rel(init_path), "--lang", "en",
               "--pipeline", spec["init"], "--optimize", "efficiency", "--force"]
        run = run_measured(cmd, cfg_dir / f"{name}-init.log")
        if run["returncode"] != 0:
            raise RuntimeError(f"spacy init config failed:\n{tail(cfg_dir / f'{name}-init.log')}")
        info["init_command"] = run["command"]
        config = spacy.util.load_config(init_path)
        copy = spec["tags"] == GOLD
        config["corpora"]["train"] = dict(_reader(copy), path="${paths.train}")
        config["corpora"]["dev"] = dict(_reader(copy), path="${paths.dev}")
        if spec.get("embed_tags"):
            embed = config["components"]["tok2vec"]["model"]["embed"]
            embed["attrs"] = list(embed["attrs"]) + ["POS", "TAG"]
            embed["rows"] = list(embed["rows"]) + [100, 500]
        info["changes"] = ["corpora: spacy_mstparse.GoldAnnotationsCorpus.v1 (gold tokens"
                           + (", gold tags and sentences copied)" if copy else ")")]
        if spec.get("embed_tags"):
            info["changes"].append("tok2vec embed attrs + POS, TAG (rows 100, 500)")
    else:
        config = spacy.util.load_config(spec["config"])
        info["base_config"] = rel(spec["config"])
        for comp in spec.get("drop", ()):
            config["nlp"]["pipeline"] = [c for c in config["nlp"]["pipeline"] if c != comp]
            config["components"].pop(comp, None)
            for key in list(config["training"]["score_weights"]):
                if key.startswith(DROPPED_SCORES.get(comp, "\0")):
                    config["training"]["score_weights"].pop(key)
            info.setdefault("changes", []).append(f"removed component {comp}")
    for dotted, value in spec.get("set", {}).items():
        *sections, key = dotted.split(".")
        block = config
        for section in sections:
            block = block[section]
        block[key] = value
        info.setdefault("changes", []).append(f"{dotted} = {value!r}")
    config["training"]["max_epochs"] = epochs
    config["training"]["max_steps"] = 0
    config["training"]["patience"] = 0
    info.setdefault("changes", []).append(
        f"training.max_epochs = {epochs}, max_steps = 0, patience = 0")
    cfg_path = cfg_dir / f"{name}.cfg"
    config.to_disk(cfg_path)
    info["config"] = rel(cfg_path)
    return info


# ---------------------------------------------------------------------------
# Per-system steps
# ---------------------------------------------------------------------------


def train_system(name: str, spec: Dict[str, Any], args, paths: Dict[str, Path]) -> Dict[str, Any]:
    """Train one system; returns the entry with ``train`` and ``model``."""
    out_dir = args.work_dir / name
    if out_dir.exists():
        import shutil
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    cap = args.train_cap * 60.0
    entry: Dict[str, Any] = {}
    if spec["kind"] == "udpipe":
        model = out_dir / "model.udpipe"
        cmd = module_command("peer_runner", "udpipe-train", rel(paths["train_conllu"]), rel(model),
                             "--options", args.udpipe_options)
        log(f"  training: {display_command(cmd)}")
        train = run_measured(cmd, out_dir / "train.log", cap_seconds=cap)
        entry["udpipe_options"] = args.udpipe_options
        if train["returncode"] != 0 or not model.is_file():
            raise RuntimeError(f"UDPipe training failed (exit {train['returncode']}"
                               f"{', stopped by the time cap' if train['capped'] else ''}):\n"
                               f"{tail(out_dir / 'train.log')}")
        entry["train"] = train
        entry["model"] = rel(model)
        entry["model_used"] = "final model"
        return entry
    entry.update(prepare_config(name, spec, args.work_dir, args.epochs))
    cmd = [sys.executable, "-m", "spacy", "train", entry["config"], "--output", rel(out_dir),
           "--paths.train", rel(paths["train_spacy"]), "--paths.dev", rel(paths["dev_spacy"]),
           "--nlp.lang", "en"]
    log(f"  training: {display_command(cmd)}")
    train = run_measured(cmd, out_dir / "train.log", cap_seconds=cap)
    train["curve"] = training_curve(out_dir / "train.log")
    entry["train"] = train
    last, best = out_dir / "model-last", out_dir / "model-best"
    if train["returncode"] == 0 and last.is_dir():
        entry["model"], entry["model_used"] = rel(last), "model-last"
    elif train["capped"] and best.is_dir():
        entry["model"], entry["model_used"] = rel(best), "model-best (training stopped by the cap)"
    else:
        raise RuntimeError(f"spacy train exited with {train['returncode']}"
                           f"{' (stopped by the time cap, no model-best yet)' if train['capped'] else ''}:\n"
                           f"{tail(out_dir / 'train.log')}")
    return entry


def parse_once(name: str, spec: Dict[str, Any], entry: Dict[str, Any], args, tag: str) -> Dict[str, Any]:
    out_dir = args.work_dir / name
    out = out_dir / f"dev-{tag}.conllu"
    timing = out_dir / f"timing-{tag}.json"
    cmd = module_command("peer_runner", "parse", spec["kind"], entry["model"], rel(args.dev),
                         rel(out), "--timing", rel(timing))
    if spec["tags"] == GOLD and spec["kind"] == "spacy":
        cmd.append("--gold-tags")
    run = run_measured(cmd, out_dir / f"parse-{tag}.log")
    if run["returncode"] != 0:
        raise RuntimeError(f"parsing failed ({run['command']}):\n{tail(out_dir / f'parse-{tag}.log')}")
    result = json.loads(timing.read_text())
    result.update({"command": run["command"], "peak_rss_mb": run["peak_rss_mb"],
                   "wall_seconds": run["wall_seconds"], "loadavg_before": run["loadavg_before"],
                   "output": rel(out)})
    return result


def model_sizes(spec: Dict[str, Any], entry: Dict[str, Any], parse: Dict[str, Any]) -> Dict[str, Any]:
    model = REPO_ROOT / entry["model"]
    if model.is_file():
        total = parser = model.stat().st_size
    else:
        total = dir_bytes(model)
        parts = list(parse.get("parser_components", [])) + list(parse.get("listened_tok2vec", []))
        parser = sum(dir_bytes(model / part) for part in parts if (model / part).is_dir())
    return {"model_bytes": total, "model_mb": total / 2**20,
            "parser_bytes": parser, "parser_mb": parser / 2**20}


# ---------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------


def merge_results(runs: List[Dict[str, Any]]) -> Dict[str, Any]:
    """One results dict holding the systems of several runs (the first run's
    settings; each system keeps its own run's command, settings and date)."""
    merged = dict(runs[0], systems={}, merged_from=[run["command"] for run in runs])
    for run in runs:
        for name, res in run["systems"].items():
            merged["systems"][name] = dict(res, run={"command": run["command"], "date": run["date"],
                                                     "settings": run["settings"]})
    if len(runs) > 1:
        merged["settings"] = dict(runs[0]["settings"], epochs="per run", train_cap_minutes="per run")
    return merged


def markdown_table(results: Dict[str, Any]) -> str:
    lines = [
        "| System | Tags in | Train (min) | Train RSS (MB) | UAS | LAS | UAS all | LAS all "
        "| spaCy dep_uas | dep_las | Parser tok/s | Parser+tok2vec tok/s | Pipeline tok/s "
        "| Parse RSS (MB) | Parser size (MB) | Model (MB) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    notes = []
    for name, res in results["systems"].items():
        label = f"{SYSTEMS.get(name, {}).get('label', name)} (`{name}`)"
        if "skipped" in res:
            notes.append(f"- `{name}` skipped: {res['skipped']}")
            continue
        if "error" in res:
            notes.append(f"- `{name}` failed: {res['error'].splitlines()[0]}")
            continue
        tr, sc, sp = res["train"], res["scores"], res.get("speed", {})
        over = " (over the cap: cannot stop early)" if res.get("kind") == "udpipe" else " (capped)"
        train_min = num(tr["wall_seconds"] / 60, ".1f") + (over if tr.get("capped") else "")
        lines.append("| " + " | ".join([
            label, res["tags"], train_min, num(tr["peak_rss_mb"], ".0f"),
            num(sc["uas"], ".2f"), num(sc["las"], ".2f"),
            num(sc["uas_all"], ".2f"), num(sc["las_all"], ".2f"),
            num(sc["spacy_dep_uas"], ".2f"), num(sc["spacy_dep_las"], ".2f"),
            num(sp.get("parser_tokens_per_second_median"), ",.0f"),
            num(sp.get("parser_with_tok2vec_tokens_per_second_median"), ",.0f"),
            num(sp.get("pipeline_tokens_per_second_median"), ",.0f"),
            num(sp.get("peak_rss_mb_max"), ".0f"),
            num(res["size"]["parser_mb"], ".1f"), num(res["size"]["model_mb"], ".1f"),
        ]) + " |")
    s = results["settings"]
    lines.append("")
    lines.append(
        f"{s['train_sentences']:,} train sentences ({s['train_used']}) -> {s['dev_sentences']:,} dev "
        f"sentences ({s['dev']}); spaCy-trained systems: {s['epochs']} epoch(s), training capped at "
        f"{s['train_cap_minutes']} min; UDPipe options `{s['udpipe_options']}`. UAS/LAS leave out "
        f"punctuation, \"all\" counts every word; one scorer (ours) on every system's CoNLL-U "
        f"output, spaCy's Scorer on the same files for comparison. Speeds: median of "
        f"{s['speed_runs']} runs, "
        + ("each in its own benchmark run (separate runs: compare accuracy, not speed), "
           if "merged_from" in results else "round-robin over the systems in the same run, ")
        + "one process each. "
        f"Machine: {results['machine']['nproc']} CPU(s), {results['machine']['cpu_model']}. Code: "
        f"commit {(results['code']['commit'] or '?')[:12]}"
        f"{' (snapshot)' if results['code']['snapshot'] else ' (working tree)'}; run {results['date']}."
    )
    runs = {name: res["run"] for name, res in results["systems"].items() if "run" in res}
    if runs:
        lines.append("")
        lines.extend(f"- `{name}`: {run['settings']['epochs']} epoch(s), capped at "
                     f"{run['settings']['train_cap_minutes']:g} min, run {run['date']}: "
                     f"`{run['command']}`" for name, run in runs.items())
    if notes:
        lines.append("")
        lines.extend(notes)
    return "\n".join(lines) + "\n"


def scatter_plot(results: Dict[str, Any], path: Path) -> bool:
    """LAS (no punctuation) against parser tokens/s, one point per system."""
    try:
        import matplotlib
        import matplotlib.ticker
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib is not installed: no plot (pip install -r benchmarks/requirements-peers.txt)")
        return False
    fig, ax = plt.subplots(figsize=(7.5, 5))
    styles = {GOLD: ("o", "tab:blue", "gold tags in"), PREDICTED: ("s", "tab:orange", "predicted tags")}
    seen = set()
    speeds = []
    for name, res in results["systems"].items():
        speed = res.get("speed", {}).get("parser_tokens_per_second_median")
        if "scores" not in res or speed is None:
            continue
        marker, color, legend = styles[res["tags"]]
        speeds.append(speed)
        ax.scatter([speed], [res["scores"]["las"]], marker=marker, color=color, s=60,
                   label=None if res["tags"] in seen else legend)
        seen.add(res["tags"])
        ax.annotate(SYSTEMS.get(name, {}).get("label", name), (speed, res["scores"]["las"]),
                    textcoords="offset points", xytext=(6, 4), fontsize=8)
    ax.set_xscale("log")
    if speeds:  # room on the right for the labels
        ax.set_xlim(min(speeds) / 1.3, max(speeds) * 3.0)
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: f"{x:,.0f}"))
    if speeds and max(speeds) * 3.0 < 10 * min(speeds) / 1.3:  # no power of ten in range
        ax.xaxis.set_minor_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: f"{x:,.0f}"))
    else:
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlabel("parser tokens/s (parser component alone, median of runs; log scale)")
    ax.set_ylabel("LAS, punctuation excluded (%)")
    ax.set_title(f"{Path(results['settings']['dev']).name}: accuracy vs parse speed")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Systems: " + "; ".join(f"{k}: {v['description']}" for k, v in SYSTEMS.items()),
    )
    ap.add_argument("--systems", default=",".join(DEFAULT_SYSTEMS),
                    help="comma-separated subset (default: all: %(default)s)")
    common.add_treebank_options(ap)
    ap.add_argument("--train-sents", type=int, default=None,
                    help=f"first N training sentences only ({QUICK_TRAIN_SENTS} with --quick)")
    ap.add_argument("--epochs", type=int, default=None,
                    help=f"spacy train epochs (default {DEFAULT_EPOCHS}; 1 with --quick)")
    ap.add_argument("--train-cap", type=float, default=DEFAULT_TRAIN_CAP_MIN,
                    help="minutes after which a training subprocess is stopped (default %(default)s)")
    ap.add_argument("--udpipe-options", default=None,
                    help=f"UDPipe parser options (default '{DEFAULT_UDPIPE_OPTIONS}'; "
                         "iterations=1 with --quick)")
    ap.add_argument("--speed-runs", type=int, default=3)
    ap.add_argument("--quick", action="store_true",
                    help="smoke test: 1,000 train sentences, 1 epoch, UDPipe 1 iteration, "
                         "results under benchmarks/work/peers/")
    ap.add_argument("--snapshot", action="store_true",
                    help="run the committed code (git archive HEAD, built under benchmarks/work/src/)")
    ap.add_argument("--work-dir", type=Path, default=DEFAULT_WORK)
    ap.add_argument("--output", type=Path, default=None,
                    help="results JSON (default benchmarks/results/peers.json; "
                         "WORK_DIR/peers-quick.json with --quick)")
    ap.add_argument("--markdown", type=Path, default=None, help="Markdown table (default beside the JSON)")
    ap.add_argument("--plot", type=Path, default=None, help="scatter plot PNG (default beside the JSON)")
    ap.add_argument("--merge", type=Path, nargs="+", default=None, metavar="JSON",
                    help="combine the systems of several results JSONs (runs on the same data) "
                         "into --output, with its table and plot")
    ap.add_argument("--render", type=Path, default=None, metavar="JSON",
                    help="only rewrite the Markdown table and the plot from a results JSON")
    args = ap.parse_args(argv)
    args.system_names = common.choose_names(ap, args.systems, SYSTEMS, "system")
    if args.epochs is None:
        args.epochs = 1 if args.quick else DEFAULT_EPOCHS
    if args.train_sents is None and args.quick:
        args.train_sents = QUICK_TRAIN_SENTS
    if args.udpipe_options is None:
        args.udpipe_options = ("iterations=1;structured_interval=0;embedding_xpostag=20"
                               if args.quick else DEFAULT_UDPIPE_OPTIONS)
    args.work_dir = args.work_dir.resolve()
    if args.output is None:
        args.output = args.work_dir / "peers-quick.json" if args.quick else RESULTS / "peers.json"
    if args.markdown is None:
        args.markdown = args.output.with_suffix(".md")
    if args.plot is None:
        args.plot = args.output.with_suffix(".png")
    if args.epochs < 1 or args.speed_runs < 1 or args.train_cap <= 0:
        ap.error("--epochs and --speed-runs must be >= 1, --train-cap > 0")
    resolve_treebanks(ap, args)
    return args


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    if args.merge:
        results = merge_results([json.loads(path.read_text()) for path in args.merge])
        common.save_results(results, args.output)
        args.render = args.output
    if args.render:
        results = json.loads(args.render.read_text())
        markdown = args.render.with_suffix(".md") if args.markdown == args.output.with_suffix(".md") else args.markdown
        plot = args.render.with_suffix(".png") if args.plot == args.output.with_suffix(".png") else args.plot
        markdown.write_text(markdown_table(results))
        scatter_plot(results, plot)
        print(markdown.read_text())
        return 0
    work = args.work_dir
    corpus = work / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    started = datetime.datetime.now().astimezone()
    if args.snapshot:
        code = common.make_snapshot(common.WORK)
        code["entry_points"] = rel(common.write_dist_info(REPO_ROOT / code["path"]))
    else:
        code = common.working_tree_code()

    train_src = args.train
    if args.train_sents:
        train_src = corpus / f"{args.train.stem}-first{args.train_sents}.conllu"
        n = take_sentences(args.train, train_src, args.train_sents)
        log(f"using the first {n} sentences of {rel(args.train)}")
    paths = {"train_conllu": train_src,
             "train_spacy": corpus / f"{train_src.stem}-n1.spacy",
             "dev_spacy": corpus / f"{args.dev.stem}-n1.spacy"}
    conversions = {"train": convert_once(train_src, paths["train_spacy"], 1),
                   "dev": convert_once(args.dev, paths["dev_spacy"], 1)}

    results: Dict[str, Any] = {
        "benchmark": "mst_parser vs spaCy's parser and UDPipe 1 (benchmarks/bench_peers.py)",
        "date": started.isoformat(timespec="seconds"),
        "command": common.invocation("bench_peers", argv),
        "machine": common.machine_info(),
        "code": code,
        "settings": {
            "train": rel(args.train), "train_used": rel(train_src),
            "train_sentences": count_sentences(train_src),
            "dev": rel(args.dev), "dev_sentences": count_sentences(args.dev),
            "epochs": args.epochs, "train_cap_minutes": args.train_cap,
            "udpipe_options": args.udpipe_options, "speed_runs": args.speed_runs,
            "n_sents_per_doc": 1,
            "speed_method": ("python -m benchmarks.peer_runner parse: one process per run, each pipeline "
                             "component timed separately over all dev docs (pipe, batch 64); "
                             "UDPipe: Model.parse over all sentences"),
            "peak_rss_method": "os.wait4(pid) rusage of each child process (ru_maxrss, KiB)",
            "model_size_method": "sum of file sizes, 1 MB = 2**20 bytes",
        },
        "conversions": conversions,
        "systems": {},
    }
    try:
        import ufal.udpipe  # noqa: F401
        results["machine"]["ufal.udpipe"] = __import__("importlib.metadata").metadata.version("ufal.udpipe")
    except Exception:
        results["machine"]["ufal.udpipe"] = None
    args.output.parent.mkdir(parents=True, exist_ok=True)

    def save() -> None:
        common.save_results(results, args.output)

    failed = False
    done: List[str] = []
    for i, name in enumerate(args.system_names, 1):
        spec = SYSTEMS[name]
        entry: Dict[str, Any] = {"description": spec["description"], "tags": spec["tags"],
                                 "kind": spec["kind"]}
        results["systems"][name] = entry
        log(f"[{i}/{len(args.system_names)}] {name}: {spec['description']}")
        if "config" in spec and not Path(spec["config"]).is_file():
            entry["skipped"] = f"{rel(spec['config'])} does not exist"
            log(f"  skipped: {entry['skipped']}")
            save()
            continue
        try:
            entry.update(train_system(name, spec, args, paths))
            tr = entry["train"]
            log(f"  trained in {tr['wall_seconds'] / 60:.1f} min{' (capped)' if tr['capped'] else ''}, "
                f"peak RSS {tr['peak_rss_mb']:.0f} MB; parsing dev")
            parse = parse_once(name, spec, entry, args, "eval")
            entry["parse"] = parse
            entry["scores"] = score_conllu(REPO_ROOT / parse["output"], args.dev)
            entry["size"] = model_sizes(spec, entry, parse)
            log(f"  UAS {entry['scores']['uas']:.2f} LAS {entry['scores']['las']:.2f} "
                f"(all words {entry['scores']['uas_all']:.2f} / {entry['scores']['las_all']:.2f})")
            done.append(name)
        except Exception as err:  # record it and go on with the next system
            failed = True
            entry["error"] = str(err)
            log(f"  FAILED: {err}")
        save()

    # Speed: round-robin over the systems, so a busy stretch hits all alike.
    keys = ("parser_tokens_per_second", "parser_with_tok2vec_tokens_per_second",
            "pipeline_tokens_per_second")
    for run in range(1, args.speed_runs + 1):
        for name in done:
            entry = results["systems"][name]
            log(f"speed run {run}/{args.speed_runs}: {name}")
            try:
                res = parse_once(name, SYSTEMS[name], entry, args, f"speed{run}")
            except Exception as err:
                failed = True
                entry.setdefault("speed_errors", []).append(str(err))
                log(f"  FAILED: {err}")
                continue
            speed = entry.setdefault("speed", {"runs": []})
            same = (Path(REPO_ROOT / res["output"]).read_text()
                    == Path(REPO_ROOT / entry["parse"]["output"]).read_text())
            speed["runs"].append({k: res[k] for k in keys + ("component_seconds", "peak_rss_mb",
                                                            "loadavg_before")}
                                 | {"same_output_as_eval": same})
            for k in keys:
                speed[f"{k}_median"] = statistics.median(r[k] for r in speed["runs"])
            speed["peak_rss_mb_max"] = max(r["peak_rss_mb"] for r in speed["runs"])
            (REPO_ROOT / res["output"]).unlink()
        save()

    common.finish_results(results, args.output, markdown_table(results), args.markdown)
    plotted = scatter_plot(results, args.plot)
    log(f"done: {rel(args.output)}, {rel(args.markdown)}" + (f", {rel(args.plot)}" if plotted else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
