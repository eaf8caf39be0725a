"""ray-train and ray-parse on a local Ray instance with 2 CPUs (one instance
for the module): ray-parse writes what parse writes (file, folder, text,
chunks on both workers and on the driver) and gives its errors (the file's
line and sentence numbers, from late chunks) and warnings; ray-train on the
bundled sample writes model-best / model-last that spacy.load parses with;
refusals, and a worker that cannot build the pipeline: one clear error and
no output file."""
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
from spacy.language import Language
from spacy.util import load_config
from typer.testing import CliRunner

ray = pytest.importorskip("ray")

from spacy_mstparse.cli import app  # noqa: E402
from spacy_mstparse.corpus.convert import convert  # noqa: E402
from spacy_mstparse.distributed import DistributedError, UnmixableLearnerError  # noqa: E402
from spacy_mstparse.distributed.cluster import gather  # noqa: E402
from spacy_mstparse.distributed.parse import ParseBatch, ray_parse  # noqa: E402
from spacy_mstparse.distributed.train import one_copy_per_worker, ray_train  # noqa: E402
from spacy_mstparse.parsing import parse_file  # noqa: E402
from spacy_mstparse.pipeline_input import EvaluationError  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level=logging.ERROR,
             log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, sample_dev):
    """A folder with 40 CoNLL-U sentences of the dev sample and 9 text lines."""
    folder = tmp_path_factory.mktemp("ray_inputs")
    blocks = sample_dev.read_text(encoding="utf8").split("\n\n")[:40]
    (folder / "dev40.conllu").write_text("\n\n".join(blocks) + "\n\n", encoding="utf8")
    texts = [line[len("# text = "):] for line in "\n".join(blocks).splitlines()
             if line.startswith("# text = ")][:9]
    (folder / "lines.txt").write_text("\n".join(texts) + "\n", encoding="utf8")
    return folder


@pytest.fixture(scope="module")
def tagged_pipeline(trained_pipeline, sample_train, tmp_path_factory):
    """The trained parser behind an (untrained, initialized) tagger and
    morphologizer, so that it parses plain text: the tags are arbitrary but
    deterministic, which is all the comparisons need."""
    from spacy.training import Example

    from spacy_mstparse.corpus.conll import read_conllu

    nlp = spacy.load(trained_pipeline)
    refs = [doc for _, doc in zip(range(50), read_conllu(sample_train, nlp.vocab))]
    examples = [Example(nlp.make_doc(ref.text), ref) for ref in refs]
    for name in ("tagger", "morphologizer"):
        nlp.add_pipe(name, before="mst_parser").initialize(lambda: examples, nlp=nlp)
    path = tmp_path_factory.mktemp("tagged") / "tagged"
    nlp.to_disk(path)
    return path


@pytest.mark.slow
def test_ray_parse_writes_what_parse_writes(inputs, tagged_pipeline, trained_pipeline, tmp_path):
    out = tmp_path / "ray"
    summary = ray_parse(tagged_pipeline, inputs, out, workers=2, gold_tags=False, chunk_bytes=2500,
                        driver_share=False)
    assert [f["docs"] for f in summary["files"]] == [40, 9]
    assert summary["driver_chunks"] == 0 and summary["chunks"] > 10  # all on the actors
    for name, fmt in (("dev40", "conllu"), ("lines", "text")):
        source = next(inputs.glob(f"{name}.*"))
        reference = tmp_path / f"{name}.ref.conllu"
        parse_file(tagged_pipeline, source, reference, progress=False)
        ours = (out / f"{name}.conllu").read_bytes()
        assert ours == reference.read_bytes() and ours.count(b"\n\n") >= 9
    # one file, gold tags, through the CLI (one chunk per worker and more)
    single = tmp_path / "single.conllu"
    result = CliRunner().invoke(app, ["ray-parse", str(trained_pipeline), str(inputs / "dev40.conllu"),
                                      str(single), "--workers", "2", "--gold-tags"])
    assert result.exit_code == 0, result.output
    reference = tmp_path / "gold.conllu"
    parse_file(trained_pipeline, inputs / "dev40.conllu", reference, gold_tags=True, progress=False)
    assert single.read_bytes() == reference.read_bytes()


def test_ray_parse_refuses_to_overwrite_its_input(inputs, trained_pipeline):
    target = inputs / "dev40.conllu"
    before = target.read_bytes()
    result = CliRunner().invoke(app, ["ray-parse", str(trained_pipeline), str(target), str(target)])
    assert result.exit_code == 1 and "Refusing to write" in result.output
    assert target.read_bytes() == before


@Language.component("test_ray_driver_only")
def driver_only_component(doc):
    """Registered in this process only: a worker cannot build the pipeline."""
    return doc


def test_a_dead_worker_fails_clearly_and_writes_nothing(inputs, trained_pipeline, tmp_path):
    nlp = spacy.load(trained_pipeline)
    nlp.add_pipe("test_ray_driver_only")
    model = tmp_path / "needs_custom_code"
    nlp.to_disk(model)
    out = tmp_path / "out.conllu"
    with pytest.raises(DistributedError, match="loading the pipeline on worker 1 failed on a Ray "
                                               "worker: .*test_ray_driver_only"):
        ray_parse(model, inputs / "dev40.conllu", out, workers=2)
    assert not out.exists() and not list(tmp_path.glob(".out.conllu*"))


def outcome(run):
    """(the error or None, the warnings' messages) of ``run()``."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            run()
            error = None
        except (EvaluationError, ValueError) as err:
            error = f"{type(err).__name__}: {err}"
    return error, sorted({str(w.message) for w in caught})


@pytest.mark.slow
def test_errors_and_warnings_are_parses_with_the_files_numbers(inputs, trained_pipeline, tmp_path):
    """Small chunks, problems late in the file: the same error (file line,
    sentence number in the file) and warnings as parse, and no output."""
    blocks = (inputs / "dev40.conllu").read_text(encoding="utf8").split("\n\n")[:40]

    def sentence_without(block, column):  # UPOS / XPOS of every word "_"
        lines = [line.split("\t") for line in block.split("\n")]
        return "\n".join("\t".join(c[:column] + ["_"] + c[column + 1:]) if len(c) == 10
                         else "\t".join(c) for c in lines)

    bad_line = blocks[:33] + [blocks[33].replace("\t", "\t\t", 1)] + blocks[34:]
    no_upos = blocks[:29] + [sentence_without(blocks[29], 3)] + blocks[30:]
    first_word_line = sum(b.count("\n") + 2 for b in blocks[:33]) + 1
    first_word_line += sum(line.startswith("#") for line in blocks[33].split("\n"))
    problems = {"bad_line": f"bad_line.conllu:{first_word_line}: expected 10 tab-separated",
                "no_upos": "no UPOS (first in sentence 30)", "fine": None}
    for name, sents in (("bad_line", bad_line), ("no_upos", no_upos), ("fine", blocks)):
        source = tmp_path / f"{name}.conllu"
        source.write_text("\n\n".join(sents) + "\n\n", encoding="utf8")
        ref, ours = tmp_path / f"{name}.ref.conllu", tmp_path / f"{name}.ray.conllu"
        expected = outcome(lambda: parse_file(trained_pipeline, source, ref, progress=False))
        got = outcome(lambda: ray_parse(trained_pipeline, source, ours, workers=2,
                                        chunk_bytes=1500))
        assert got == expected
        if name == "fine":
            assert expected[0] is None and ours.read_bytes() == ref.read_bytes()
            assert any("no component before it" in w for w in expected[1])  # the tag plan's
        else:
            assert problems[name] in expected[0] and not expected[1]
            assert not ours.exists() and not list(tmp_path.glob(f".{ours.name}*"))


def test_more_workers_than_cpus_is_refused(inputs, trained_pipeline, tmp_path):
    with pytest.raises(DistributedError, match="needs 3 CPUs; the Ray cluster has 2"):
        ray_parse(trained_pipeline, inputs / "dev40.conllu", tmp_path / "o.conllu", workers=3)
    assert not (tmp_path / "o.conllu").exists()


def test_gather_names_a_dead_worker_and_a_failed_task():
    @ray.remote(max_retries=0)
    def dies():
        os._exit(1)

    @ray.remote(max_retries=0)
    def raises(error):
        raise error

    with pytest.raises(DistributedError, match="a Ray worker died, task: chunk 1"):
        gather([dies.remote()], ["chunk 1"])
    with pytest.raises(DistributedError, match="chunk 2 failed on a Ray worker: KeyError"):
        gather([raises.remote(KeyError("x"))], ["chunk 2"])
    with pytest.raises(EvaluationError, match="bad input"):
        gather([raises.remote(EvaluationError("bad input"))], ["chunk 3"],
               expected=(EvaluationError,))


def test_parse_batch_for_ray_data(inputs, tagged_pipeline, tmp_path):
    lines = (inputs / "lines.txt").read_text(encoding="utf8").splitlines()
    reference = tmp_path / "lines.conllu"
    parse_file(tagged_pipeline, inputs / "lines.txt", reference, progress=False)
    parse = ParseBatch(str(tagged_pipeline))
    out = parse({"text": lines[:3] + ["  "] + lines[3:], "id": list(range(len(lines) + 1))})
    assert out["conllu"][3] == "" and list(out["id"]) == list(range(len(lines) + 1))
    # the same parses as ``parse``; documents named by the row's id (parse: by
    # the input line), sent_ids numbered per row after it
    def without_ids(text):
        return [line for line in text.splitlines()
                if not line.startswith(("# sent_id = ", "# newdoc id = "))]

    assert without_ids("".join(out["conllu"])) == without_ids(reference.read_text(encoding="utf8"))
    sent_ids = [line for line in "".join(out["conllu"]).splitlines() if line.startswith("# sent_id")]
    assert sent_ids[0] == "# sent_id = 0-1" and len(set(sent_ids)) == len(sent_ids)
    assert "".join(out["conllu"]).startswith("# newdoc id = 0\n")
    validator = REPO.parent / "shared" / "tools" / "ud" / "validate.py"
    if validator.is_file():  # parsed raw text is valid UD (sent_id and text comments)
        check = subprocess.run([sys.executable, str(validator), "--lang", "en", "--level", "2",
                                "--no-warnings", str(reference)], capture_output=True, text=True)
        assert check.returncode == 0, check.stderr
    data = pytest.importorskip("ray.data")
    pytest.importorskip("pyarrow")
    ds = data.from_items([{"text": line, "id": i} for i, line in enumerate(lines)]).map_batches(
        ParseBatch, fn_constructor_kwargs={"model": str(tagged_pipeline)}, concurrency=1,
        batch_size=4)
    # Ray Data does not keep the rows' order: put them back by their ids
    rows = sorted(ds.take_all(), key=lambda row: int(row["id"]))
    assert [int(row["id"]) for row in rows] == list(range(len(lines)))
    assert without_ids("".join(row["conllu"] for row in rows)) == without_ids(
        reference.read_text(encoding="utf8"))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, sample_train, sample_dev):
    folder = tmp_path_factory.mktemp("ray_corpus")
    convert(sample_train, folder / "train.spacy", format="conllu", n_sents=1, vocab_lang="en")
    convert(sample_dev, folder / "dev.spacy", format="conllu", n_sents=1, vocab_lang="en")
    return folder


def overrides(corpus, **more):
    return {"paths.train": str(corpus / "train.spacy"), "paths.dev": str(corpus / "dev.spacy"),
            "corpora.train.limit": 300, "training.max_epochs": 2, **more}


@pytest.mark.slow
def test_ray_train_writes_pipelines_spacy_loads(corpus, tmp_path, sample_dev, capsys):
    out = tmp_path / "training"
    summary = ray_train(REPO / "configs" / "mst_parser.cfg", out, workers=2,
                        overrides=overrides(corpus, **{"components.mst_parser.learner.k": 1}))
    printed = capsys.readouterr().out
    assert "mst_parser: replicas 2 -> 1" in printed   # the config's two weight copies
    assert [r["epoch"] for r in summary["epochs"]] == [1, 2]
    assert sum(summary["epochs"][0]["shard_sentences"]) == 300
    assert "DEP_UAS" in printed and "Saved pipeline" in printed
    for name in ("model-best", "model-last"):
        nlp = spacy.load(out / name)
        assert nlp.pipe_names == ["mst_parser"]
        meta = json.loads((out / name / "meta.json").read_text())
        assert meta["performance"]["dep_uas"] > 0.5
        # calibrated on dev by the driver's evaluation, as spacy train does
        assert meta["performance"]["head_ece"] < meta["performance"]["head_ece_t1"]
        assert nlp.get_pipe("mst_parser").cfg["calibration"]["head"]["temperature"] != 1.0
    last = summary["epochs"][-1]["other_scores"]["dep_uas"]
    meta = json.loads((out / "model-last" / "meta.json").read_text())
    assert meta["performance"]["dep_uas"] == pytest.approx(last, abs=1e-9)
    # the saved pipeline parses dev as the driver did after the last epoch
    result = CliRunner().invoke(app, ["evaluate", str(out / "model-last"), str(sample_dev),
                                      "--gold-tags", "--output", str(tmp_path / "m.json")])
    assert result.exit_code == 0, result.output
    metrics = json.loads((tmp_path / "m.json").read_text())
    assert metrics["spacy_dep_uas"] == pytest.approx(100 * last, abs=1e-6)


def test_ray_train_refuses_unmixable_learners_and_other_trained_components(corpus, tmp_path):
    pegasos = {"components.mst_parser.learner": {"@mst_learners": "spacy_mstparse.Pegasos.v1"}}
    with pytest.raises(UnmixableLearnerError, match="Pegasos"):
        ray_train(REPO / "configs" / "mst_parser.cfg", tmp_path / "p", workers=2,
                  overrides=overrides(corpus, **pegasos))
    result = CliRunner().invoke(app, [
        "ray-train", str(REPO / "configs" / "mst_parser_tagged.cfg"), "--output", str(tmp_path / "t"),
        "--paths.train", str(corpus / "train.spacy"), "--paths.dev", str(corpus / "dev.spacy"),
        "--corpora.train.limit", "20"])
    assert result.exit_code == 1 and "exactly one mst_parser" in result.output
    assert not (tmp_path / "t" / "model-last").exists()


@pytest.mark.parametrize("replicas", [1, 3])
def test_ray_train_trains_one_weight_copy_per_worker(replicas):
    config = load_config(REPO / "configs" / "mst_parser.cfg", interpolate=False,
                         overrides={"components.mst_parser.replicas": replicas})
    lines = one_copy_per_worker(config)
    assert config["components"]["mst_parser"]["replicas"] == 1
    assert lines == ([] if replicas == 1 else
                     ["mst_parser: replicas 3 -> 1 (ray-train mixes the workers' weights instead)"])
