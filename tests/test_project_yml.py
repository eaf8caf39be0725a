"""project.yml: every command declares the files it reads (deps) and writes
(outputs), each dep is a file of the repository or an output of an earlier
command of the workflow, the default workflows train the raw-text pipeline,
`spacy project run` re-runs a command when its input changed, and the assets
are UD release files with checksums that the workflows can run on."""
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path, PurePosixPath

import pytest
import spacy
import srsly
from weasel.util import load_project_config

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "assets" / "en_ewt_sample"


@pytest.fixture(scope="module")
def project():
    # The vars substituted with their defaults, as `spacy project run` does.
    return load_project_config(REPO)


def commands(project):
    return {cmd["name"]: cmd for cmd in project["commands"]}


def script_paths(cmd, directories):
    """The file and folder arguments of a command's script: tokens with a
    slash or naming one of the project's directories, and the file of a
    benchmark run as ``-m benchmarks.X`` (options, other module names and
    the code after `python -c` are not paths)."""
    paths = []
    for line in cmd.get("script", []):
        tokens = shlex.split(line)
        skip = False
        for i, token in enumerate(tokens):
            if skip:
                skip = False
                continue
            if token == "-c":
                skip = True
                continue
            if token == "-m" and i + 1 < len(tokens) and tokens[i + 1].startswith("benchmarks."):
                # a benchmark script run as a module: its file
                paths.append(tokens[i + 1].replace(".", "/") + ".py")
                skip = True
                continue
            if token.startswith("-") or " " in token:
                continue
            if "/" in token or token in directories:
                paths.append(token)
    return paths


def related(a, b):
    """a and b are the same path or one lies inside the other."""
    a, b = PurePosixPath(a), PurePosixPath(b)
    return a == b or a in b.parents or b in a.parents


def inside(path, folder):
    path, folder = PurePosixPath(path), PurePosixPath(folder)
    return path == folder or folder in path.parents


def test_script_paths_are_declared(project):
    for name, cmd in commands(project).items():
        declared = cmd.get("deps", []) + cmd.get("outputs", [])
        for path in script_paths(cmd, project["directories"]):
            assert any(related(path, d) for d in declared), (
                f"command {name!r} uses {path} but lists it in neither deps nor outputs"
            )


def test_declared_paths_are_single_paths(project):
    # confection joins two adjacent bare "${vars...}" list items into one
    # string "a, b": such a dep never exists and the command never re-runs.
    for name, cmd in commands(project).items():
        for path in cmd.get("deps", []) + cmd.get("outputs", []):
            assert "," not in path and path.strip() == path and path, (name, path)


def test_outputs_are_what_the_script_writes(project):
    for name, cmd in commands(project).items():
        paths = script_paths(cmd, project["directories"])
        # a script run by the command may write beside itself (benchmarks/results/)
        folders = [str(PurePosixPath(p).parent) for p in paths if p.endswith(".py")]
        for output in cmd.get("outputs", []):
            assert any(related(output, p) for p in paths) or any(
                inside(output, folder) for folder in folders
            ), (
                f"command {name!r} declares output {output} that its script never names"
            )


def test_workflow_deps_are_repo_files_or_earlier_outputs(project):
    cmds = commands(project)
    generated = [out for cmd in cmds.values() for out in cmd.get("outputs", [])]
    assert project["workflows"]
    for workflow, steps in project["workflows"].items():
        produced = []
        for step in steps:
            cmd = cmds[step]
            for dep in cmd.get("deps", []):
                if any(related(dep, out) for out in generated):
                    assert any(inside(dep, out) for out in produced), (
                        f"workflow {workflow!r}: {step!r} needs {dep}, which no earlier "
                        f"command of the workflow writes"
                    )
                else:
                    assert (REPO / dep).exists(), f"{workflow!r}: {step!r} needs {dep}: not in the repo"
            produced.extend(cmd.get("outputs", []))


def test_default_workflows_train_the_raw_text_pipeline(project):
    """`all` and `demo` train a pipeline that tags and splits raw text;
    gold tags only in the papers' protocol workflows."""
    cmds = commands(project)
    config = spacy.util.load_config(REPO / "configs" / f"{project['vars']['config']}.cfg")
    pipeline = config["nlp"]["pipeline"]
    for component in ("mst_tagger", "trainable_lemmatizer", "senter", "mst_parser"):
        assert component in pipeline, pipeline
    assert config["corpora"]["train"]["copy_tags"] is False
    assert config["corpora"]["train"]["copy_sents"] is False
    assert project["vars"]["n_sents"] > 1  # the senter needs multi-sentence docs
    for workflow in ("all", "demo"):
        scripts = [line for step in project["workflows"][workflow] for line in cmds[step]["script"]]
        assert not any("--gold-tags" in line for line in scripts), workflow
        assert any(f"configs/{project['vars']['config']}.cfg" in line for line in scripts)
    # the demo ends on plain text: no CoNLL input, no tags
    last = cmds[project["workflows"]["demo"][-1]]
    assert project["vars"]["demo_text"] in " ".join(shlex.split(last["script"][-1]))
    assert not any(".conllu" in line for line in last["script"])
    for workflow in ("all-gold-tags", "demo-gold-tags", "arcstandard"):
        scripts = [line for step in project["workflows"][workflow] for line in cmds[step]["script"]]
        assert any("evaluate" in line and "--gold-tags" in line for line in scripts), workflow


def first_sentences(path: Path, n: int) -> str:
    blocks = path.read_text(encoding="utf8").split("\n\n")
    return "\n\n".join(blocks[:n]) + "\n\n"


def test_changed_input_is_converted_again(tmp_path):
    """The stale-corpus bug: with no deps, `convert` printed "Skipping:
    nothing changed" after the input treebank had changed."""
    shutil.copy2(REPO / "project.yml", tmp_path / "project.yml")
    treebank = tmp_path / "small.conllu"
    treebank.write_text(first_sentences(SAMPLE / "train.conllu", 20), encoding="utf8")
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    name = srsly.read_yaml(tmp_path / "project.yml")["vars"]["name"]
    output = tmp_path / "corpus" / f"{name}-train.spacy"

    def run():
        result = subprocess.run(
            [sys.executable, "-m", "spacy", "project", "run", "convert-train", str(tmp_path),
             "--vars.train_file", str(treebank)],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout

    def n_sentences():
        from spacy.tokens import DocBin

        nlp = spacy.blank("en")
        docs = list(DocBin().from_disk(output).get_docs(nlp.vocab))
        return len(docs), sum(len(doc) for doc in docs)

    assert "Converted" in run()
    first = n_sentences()
    assert "Skipping" in run()  # nothing changed
    treebank.write_text(first_sentences(SAMPLE / "train.conllu", 35), encoding="utf8")
    out = run()
    assert "Skipping" not in out and "Converted" in out, out
    second = n_sentences()
    assert second[1] > first[1], (first, second)  # more words now


# -- assets: the UD treebanks fetched from UD's GitHub repositories ---------------

UD_URL = re.compile(r"https://raw\.githubusercontent\.com/UniversalDependencies/"
                    r"(UD_[A-Za-z_]+-[A-Za-z]+)/(r2\.\d+)/([a-z]+_[a-z]+-ud-(train|dev|test)\.conllu)")
DEV_COPIES = REPO.parent / "shared" / "data" / "ud"


def test_every_asset_is_a_ud_release_file_with_a_checksum(project):
    assets = project["assets"]
    assert assets
    releases = set()
    for asset in assets:
        match = UD_URL.fullmatch(asset.get("url", ""))
        assert match, asset
        releases.add(match.group(2))
        # saved under its own name, beside the others, never over the bundled sample
        assert asset["dest"] == f"assets/ud/{match.group(3)}", asset
        assert re.fullmatch(r"[0-9a-f]{32}", asset.get("checksum", "")), asset
        assert asset.get("description")
    assert len(releases) == 1, releases  # one UD release for all
    dests = [a["dest"] for a in assets]
    assert len(set(dests)) == len(dests)
    # the English train and dev files come without --extra, no English test file at all
    default = {a["dest"] for a in assets if not a.get("extra", False)}
    assert default == {"assets/ud/en_ewt-ud-train.conllu", "assets/ud/en_ewt-ud-dev.conllu"}
    assert not any("en_ewt-ud-test" in d for d in dests)
    # every other treebank: train, dev and test (what the languages benchmark reads)
    by_treebank = {}
    for dest in dests:
        name, split = PurePosixPath(dest).name.split("-ud-")
        by_treebank.setdefault(name, set()).add(split.split(".")[0])
    for name, splits in by_treebank.items():
        assert splits == ({"train", "dev"} if name == "en_ewt" else {"train", "dev", "test"}), name


def test_asset_checksums_match_the_local_treebanks(project):
    """The checksums are those of the treebanks the project was measured on:
    fetched assets (or the development copies) must have them."""
    import hashlib

    checked = 0
    for asset in project["assets"]:
        name = PurePosixPath(asset["dest"]).name
        for path in (REPO / asset["dest"], DEV_COPIES / name):
            if path.exists():
                assert hashlib.md5(path.read_bytes()).hexdigest() == asset["checksum"], path
                checked += 1
                break
    if not checked:
        pytest.skip("no treebank here: neither fetched assets nor development copies")


def test_workflows_run_on_fetched_assets():
    """With the vars pointing at the fetched EWT files, every dep of every
    workflow is a repository file, an output of an earlier step or an asset."""
    overrides = {"vars.train_file": "assets/ud/en_ewt-ud-train.conllu",
                 "vars.dev_file": "assets/ud/en_ewt-ud-dev.conllu", "vars.name": "en_ewt"}
    project = load_project_config(REPO, overrides=overrides)
    asset_dests = {a["dest"] for a in project["assets"]}
    cmds = commands(project)
    reading_assets = set()
    for workflow, steps in project["workflows"].items():
        produced = []
        for step in steps:
            for dep in cmds[step].get("deps", []):
                if dep in asset_dests:
                    reading_assets.add(step)
                    continue
                assert (REPO / dep).exists() or any(inside(dep, out) for out in produced), (
                    workflow, step, dep)
            produced.extend(cmds[step].get("outputs", []))
    # every command reading the train or dev file reads the fetched one
    assert {"convert-train", "convert-dev", "evaluate"} <= reading_assets
