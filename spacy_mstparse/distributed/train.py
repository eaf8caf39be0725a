"""``ray-train``: an mst_parser trained on a Ray cluster by iterative
parameter mixing (McDonald, Hall & Mann 2010; the arithmetic is
``mixing.py``).

The driver reads the config with ``spacy train``'s overrides, initializes the
pipeline (``init_nlp``: labels, decoder, vocab) and reads the training
corpus; the examples are shuffled once (``[training] seed``) and dealt into
N shards, each sent once through Ray's object store as two DocBins
(predicted and reference docs), as is the initialized pipeline (its config
and ``nlp.to_bytes()``). One ``ShardTrainer`` actor per shard rebuilds the
pipeline and its examples once. Every epoch the driver puts the mixed arc
and label weights in the object store (float32; the mostly-zero label
table as indices and values, ``mixing.pack``; read zero-copy by the
actors), every actor restarts its parser's trainer from them
(``GraphTrainer.restart_from``), trains one pass over its shuffled
shard through ``nlp.update`` (the one training loop, ``GraphTrainer``,
batched by the config's batcher) and returns its weights, their mean over
the epoch and the tick counts; the driver mixes them
(``MixedWeights.mix``), installs the result in its own pipeline
(``GraphTrainer.set_mixed_state``), scores the dev corpus, prints the
epoch's row with the config's logger and writes ``model-last`` (and
``model-best`` when the score is the best so far) exactly as ``spacy train``
does, each written to a temporary folder first and then renamed.

What it trains: exactly one ``mst_parser`` with a mixable learner
(``mixing.check_mixable``); every other component must be frozen or not
trainable (tagged pipelines: train the tagger with ``spacy train``, or
source it frozen). ``max_epochs`` epochs with one evaluation each;
``patience``, ``max_steps`` and ``eval_frequency`` do not apply.
"""
import random
import shutil
import sys
import time
from pathlib import Path
from typing import Any, Dict, IO, List, Optional, Sequence, Tuple

from .cluster import DistributedError, gather, kill_actors, ray_session, require_ray
from .mixing import MixedWeights, check_mixable, pack, packed_nbytes, unpack

DIR_MODEL_BEST = "model-best"
DIR_MODEL_LAST = "model-last"


def docbin_bytes(docs) -> bytes:
    from spacy.tokens import DocBin

    return DocBin(docs=docs, store_user_data=False).to_bytes()


def shard_examples(examples: Sequence, n_shards: int, seed: Optional[int]) -> List[List]:
    """The examples shuffled once and dealt round-robin into ``n_shards``."""
    order = list(range(len(examples)))
    random.Random(seed).shuffle(order)
    return [[examples[i] for i in order[k::n_shards]] for k in range(n_shards)]


def pipeline_from_bytes(config_str: str, nlp_bytes: bytes):
    """The pipeline of ``nlp.config.to_str()`` with ``nlp.to_bytes()`` loaded."""
    from spacy import util
    from thinc.api import Config

    from .. import evaluation  # noqa: F401  (registers the factories)

    config = Config().from_str(config_str, interpolate=False)
    nlp = util.load_model_from_config(config, auto_fill=False, validate=False)
    return nlp.from_bytes(nlp_bytes)


class ShardTrainer:
    """One shard's trainer (a Ray actor): the pipeline and the shard's
    examples, built once; ``train_epoch`` trains one pass from given weights."""

    def __init__(self, pipeline: Tuple[str, bytes], shard: Tuple[bytes, bytes],
                 parser: str, seed: Optional[int], index: int):
        from spacy import registry
        from spacy.schemas import ConfigSchemaTraining
        from spacy.tokens import DocBin
        from spacy.training import Example

        self.nlp = pipeline_from_bytes(*pipeline)
        predicted = DocBin().from_bytes(shard[0]).get_docs(self.nlp.vocab)
        reference = DocBin().from_bytes(shard[1]).get_docs(self.nlp.vocab)
        self.examples = [Example(p, r) for p, r in zip(predicted, reference)]
        config = self.nlp.config.interpolate()
        self.T = registry.resolve(config["training"], schema=ConfigSchemaTraining)
        self.parser = parser
        self.seed = 0 if seed is None else seed
        self.index = index

    def train_epoch(self, epoch: int, arc, label) -> Dict[str, Any]:
        """One pass over the shuffled shard from w = (arc, label); returns
        ``GraphTrainer.epoch_state()`` with the loss, words, batches, wall
        and CPU seconds."""
        start, cpu_start = time.perf_counter(), time.process_time()
        trainer = self.nlp.get_pipe(self.parser).get_trainer()
        trainer.restart_from({"arc": unpack(arc), "label": unpack(label)})
        random.Random(f"{self.seed}/{epoch}/{self.index}").shuffle(self.examples)
        losses: Dict[str, float] = {}
        n_batches = 0
        for batch in self.T["batcher"](self.examples):
            self.nlp.update(batch, drop=self.T["dropout"], losses=losses, sgd=False,
                            exclude=self.T["frozen_components"],
                            annotates=self.T["annotating_components"])
            n_batches += 1
        state = trainer.epoch_state()
        for part in ("weights", "averages"):
            state[part] = {name: pack(vector) for name, vector in state[part].items()}
        state.update(loss=losses.get(self.parser, 0.0), batches=n_batches,
                     words=sum(len(eg) for eg in self.examples),
                     seconds=time.perf_counter() - start,
                     cpu_seconds=time.process_time() - cpu_start)
        return state


def parser_to_train(nlp, frozen: Sequence[str]) -> str:
    """The one trainable ``mst_parser``; any other trained component refused."""
    from ..components.mst_parser import MSTParser

    parsers, others = [], []
    for name, proc in nlp.pipeline:
        if name in frozen or not getattr(proc, "is_trainable", False):
            continue
        (parsers if isinstance(proc, MSTParser) else others).append(name)
    if others or len(parsers) != 1:
        raise DistributedError(
            "ray-train trains exactly one mst_parser by parameter mixing; the config trains "
            f"{', '.join(parsers + others) or 'nothing'} (freeze the other components in "
            "[training] frozen_components, or train them with spacy train)")
    return parsers[0]


def _save(nlp, before_to_disk, path: Path) -> None:
    """``nlp.to_disk(path)`` through a temporary folder renamed into place."""
    tmp = path.with_name(f".{path.name}.tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    before_to_disk(nlp).to_disk(tmp)
    if path.exists():
        shutil.rmtree(path)
    tmp.rename(path)


def one_copy_per_worker(config) -> List[str]:
    """Set ``replicas = 1`` on every mst_parser of ``config`` that trains
    more weight copies (ray-train mixes the workers' weights instead and
    trains one copy per worker); one line to print for each."""
    lines = []
    for name, component in config.get("components", {}).items():
        replicas = component.get("replicas", 1)
        if component.get("factory") == "mst_parser" and isinstance(replicas, int) and replicas > 1:
            component["replicas"] = 1
            lines.append(f"{name}: replicas {replicas} -> 1 (ray-train mixes the workers' weights "
                         f"instead)")
    return lines


def ray_train(config_path, output_path: Optional[Path], workers: int,
              address: Optional[str] = None, overrides: Optional[Dict[str, Any]] = None,
              weighting: str = "uniform", stdout: Optional[IO] = None,
              stderr: Optional[IO] = None, progress: Optional[bool] = None) -> Dict[str, Any]:
    """Train the config's mst_parser on ``workers`` Ray actors by parameter
    mixing; write ``output_path/model-last`` and ``model-best``. Returns a
    summary with one record per epoch (scores and wall times). ``progress``:
    a bar of the shards done in each epoch (None: on a terminal)."""
    require_ray()
    from spacy import registry, util
    from spacy.schemas import ConfigSchemaTraining
    from spacy.training.initialize import init_nlp
    from spacy.training.loop import (
        clean_output_dir, create_before_to_disk_callback, create_evaluation_callback, update_meta)
    from wasabi import Printer

    from .. import evaluation  # noqa: F401  (registers the factories)

    stdout = sys.stdout if stdout is None else stdout
    stderr = sys.stderr if stderr is None else stderr
    msg = Printer(no_print=True)
    config = util.load_config(config_path, overrides=overrides or {}, interpolate=False)
    for line in one_copy_per_worker(config):
        stdout.write(msg.info(line) + "\n")
    stdout.write(msg.divider("Initializing pipeline") + "\n")
    nlp = init_nlp(config)
    stdout.write(msg.good("Initialized pipeline") + "\n")
    config = nlp.config.interpolate()
    T = registry.resolve(config["training"], schema=ConfigSchemaTraining)
    if T["seed"] is not None:
        util.fix_random_seed(T["seed"])
    name = parser_to_train(nlp, T["frozen_components"])
    pipe = nlp.get_pipe(name)
    check_mixable(pipe.learner)
    if T["max_epochs"] < 1:
        raise DistributedError(f"ray-train needs [training] max_epochs >= 1, got {T['max_epochs']}")
    train_corpus, dev_corpus = util.resolve_dot_names(config, [T["train_corpus"], T["dev_corpus"]])
    examples = list(train_corpus(nlp))
    if not examples:
        raise DistributedError("the training corpus is empty")
    evaluate = create_evaluation_callback(nlp, dev_corpus, T["score_weights"])
    before_to_disk = create_before_to_disk_callback(T["before_to_disk"])
    mixed = MixedWeights({k: t.current() for k, t in pipe.get_trainer().tables().items()})
    shards = shard_examples(examples, workers, T["seed"])
    output_path = None if output_path is None else Path(output_path)
    records = []
    with ray_session(workers, address) as ray:
        pipeline_ref = ray.put((nlp.config.to_str(), nlp.to_bytes()))
        actor_cls = ray.remote(num_cpus=1)(ShardTrainer)
        actors = []
        try:
            for i, shard in enumerate(shards):
                shard_ref = ray.put((docbin_bytes([eg.predicted for eg in shard]),
                                     docbin_bytes([eg.reference for eg in shard])))
                actors.append(actor_cls.remote(pipeline_ref, shard_ref, name, T["seed"], i))
            if output_path is not None:
                output_path.mkdir(parents=True, exist_ok=True)
                clean_output_dir(output_path)
            stdout.write(msg.info(f"Pipeline: {nlp.pipe_names}") + "\n")
            stdout.write(msg.info(f"Training {name} on {workers} Ray workers by parameter "
                                  f"mixing ({weighting}); shards of "
                                  f"{', '.join(str(len(s)) for s in shards)} docs") + "\n")
            with nlp.select_pipes(disable=T["frozen_components"]):
                log_step, finalize_logger = T["logger"](nlp, stdout, stderr)
            checkpoints: List[Tuple[float, int]] = []
            start, steps, words = time.perf_counter(), 0, 0
            try:
                for epoch in range(T["max_epochs"]):
                    t0 = time.perf_counter()
                    packed = {k: pack(w) for k, w in mixed.weights.items()}
                    refs = {k: ray.put(p) for k, p in packed.items()}
                    states = gather(
                        [a.train_epoch.remote(epoch, refs["arc"], refs["label"]) for a in actors],
                        [f"epoch {epoch + 1} of shard {i + 1}" for i in range(len(actors))],
                        progress=progress, desc=f"epoch {epoch + 1}: shards trained")
                    t1 = time.perf_counter()
                    sent = sum(packed_nbytes(p) for p in packed.values())
                    received = [sum(packed_nbytes(p) for part in ("weights", "averages")
                                    for p in s[part].values()) for s in states]
                    for state in states:
                        for part in ("weights", "averages"):
                            state[part] = {k: unpack(p) for k, p in state[part].items()}
                    mixed.mix(states, weighting)
                    pipe.get_trainer().set_mixed_state(mixed.state())
                    t2 = time.perf_counter()
                    score, other_scores = evaluate()
                    t3 = time.perf_counter()
                    steps += sum(s["batches"] for s in states)
                    words += sum(s["words"] for s in states)
                    checkpoints.append((score, steps))
                    is_best = score == max(c[0] for c in checkpoints)
                    info = {"epoch": epoch, "step": steps, "score": score,
                            "other_scores": other_scores,
                            "losses": {name: sum(s["loss"] for s in states)},
                            "checkpoints": checkpoints,
                            "seconds": int(time.perf_counter() - start), "words": words}
                    with nlp.select_pipes(disable=T["frozen_components"]):
                        update_meta(T, nlp, info)
                    if output_path is not None:
                        _save(nlp, before_to_disk, output_path / DIR_MODEL_LAST)
                        if is_best:
                            if (output_path / DIR_MODEL_BEST).exists():
                                shutil.rmtree(output_path / DIR_MODEL_BEST)
                            shutil.copytree(output_path / DIR_MODEL_LAST,
                                            output_path / DIR_MODEL_BEST)
                        info["output_path"] = str(output_path / DIR_MODEL_LAST)
                    log_step(info)
                    records.append({
                        "epoch": epoch + 1, "score": score,
                        "other_scores": {k: v for k, v in other_scores.items()
                                         if isinstance(v, (int, float))},
                        "train_seconds": t1 - t0, "mix_seconds": t2 - t1,
                        "eval_seconds": t3 - t2,
                        "shard_seconds": [s["seconds"] for s in states],
                        "shard_cpu_seconds": [s["cpu_seconds"] for s in states],
                        "shard_sentences": [s["n_ticks"]["arc"] for s in states],
                        "bytes_out_per_worker": sent, "bytes_in_per_worker": received})
            finally:
                finalize_logger()
        finally:
            kill_actors(actors)
    if output_path is not None:
        stdout.write(msg.good("Saved pipeline to output directory",
                              output_path / DIR_MODEL_LAST) + "\n")
    return {"workers": workers, "weighting": weighting, "parser": name, "epochs": records}
