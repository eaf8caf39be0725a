"""The install: what the base package pulls in (no Ray, pandas or pyarrow),
which extras the Makefile's demo and test targets install, the build's flags
per compiler, OpenMP only where a test program builds, and one version."""
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
HEAVY = {"ray", "pyarrow", "pandas"}


@pytest.fixture(scope="module")
def pyproject():
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf8"))


@pytest.fixture(scope="module")
def setup_module():
    """setup.py as a module (its setup() call runs only as a script)."""
    spec = importlib.util.spec_from_file_location("mstparse_setup", REPO / "setup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def closure(requirements, extras=()):
    """The names of every distribution the requirements pull in, through the
    installed packages' metadata (markers evaluated for this Python)."""
    seen = set()
    todo = [(Requirement(r), set(extras)) for r in requirements]
    while todo:
        req, wanted = todo.pop()
        env_extras = wanted or {""}
        if req.marker is not None and not any(
                req.marker.evaluate({"extra": e}) for e in env_extras):
            continue
        name = canonicalize_name(req.name)
        key = (name, tuple(sorted(req.extras)))
        if key in seen:
            continue
        seen.add(key)
        try:
            requires = distribution(name).requires or []
        except PackageNotFoundError:
            continue  # not installed here: nothing below it to follow
        todo.extend((Requirement(r), set(req.extras)) for r in requires)
    return {name for name, _ in seen}


def test_base_install_pulls_no_ray_pandas_or_pyarrow(pyproject):
    project = pyproject["project"]
    base = closure(project["dependencies"])
    assert "spacy" in base and "thinc" in base
    assert not base & HEAVY, base & HEAVY
    with_ray = closure(project["dependencies"] + project["optional-dependencies"]["ray"])
    assert "ray" in with_ray
    for extra, reqs in project["optional-dependencies"].items():
        if extra != "ray":
            assert not closure(reqs) & HEAVY, extra


def test_make_demo_installs_the_base_package_and_make_test_the_extras(tmp_path):
    make = shutil.which("make")
    if make is None:
        pytest.skip("no make")

    def dry_run(target):
        out = subprocess.run([make, "-n", "-C", str(REPO), target, f"VENV={tmp_path}/venv"],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        return [line for line in out.stdout.splitlines() if "pip install" in line]

    demo, test = dry_run("demo"), dry_run("test")
    editable = re.compile(r"pip install .*-e \"?([^\"\s]+)")
    demo_targets = [m.group(1) for m in map(editable.search, demo) if m]
    test_targets = [m.group(1) for m in map(editable.search, test) if m]
    assert demo_targets == ["."], demo
    assert len(test_targets) == 1 and "ray" in test_targets[0] and "test" in test_targets[0]
    # the compile step runs before pip's install, outside it (visible), for both
    for target in ("demo", "test"):
        out = subprocess.run([make, "-n", "-C", str(REPO), target, f"VENV={tmp_path}/venv"],
                             capture_output=True, text=True, timeout=60).stdout
        assert out.index("setup.py -q build_ext --inplace") < out.index("--no-build-isolation -e")


def test_version_has_one_source(pyproject):
    import spacy_mstparse

    assert "version" in pyproject["project"]["dynamic"]
    attr = pyproject["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    assert attr == "spacy_mstparse.__version__"
    assert re.fullmatch(r"\d+\.\d+\.\d+", spacy_mstparse.__version__)
    # the SPDX string form, with a setuptools that reads it
    assert isinstance(pyproject["project"]["license"], str)
    setuptools_req = next(Requirement(r) for r in pyproject["build-system"]["requires"]
                          if Requirement(r).name == "setuptools")
    assert not setuptools_req.specifier.contains("76.9") and setuptools_req.specifier.contains("77")


class FakeCompiler:
    """Records what the OpenMP test asks of a compiler; ``works``: whether
    compiling succeeds."""

    def __init__(self, compiler_type, works=True):
        self.compiler_type, self.works, self.calls = compiler_type, works, []

    def compile(self, sources, output_dir=None, extra_postargs=None):
        self.calls.append(("compile", list(extra_postargs or [])))
        assert "omp.h" in Path(sources[0]).read_text()
        if not self.works:
            from setuptools.errors import CompileError

            raise CompileError("unsupported option '-fopenmp'")
        return [os.path.join(output_dir, "openmp_test.o")]

    def link_executable(self, objects, name, output_dir=None, extra_postargs=None):
        self.calls.append(("link", list(extra_postargs or [])))


def test_openmp_is_used_only_where_a_test_program_builds(setup_module, monkeypatch):
    monkeypatch.delenv("MSTPARSE_OPENMP", raising=False)
    gcc = FakeCompiler("unix")
    assert setup_module.openmp_args(gcc) == (["-fopenmp"], ["-fopenmp"])
    assert gcc.calls == [("compile", ["-fopenmp"]), ("link", ["-fopenmp"])]
    msvc = FakeCompiler("msvc")
    assert setup_module.openmp_args(msvc) == (["/openmp"], [])
    apple_clang = FakeCompiler("unix", works=False)
    assert setup_module.openmp_args(apple_clang) is None
    monkeypatch.setenv("MSTPARSE_OPENMP", "0")
    off = FakeCompiler("unix")
    assert setup_module.openmp_args(off) is None and off.calls == []


def test_flags_per_compiler(setup_module):
    assert setup_module.compiler_family(FakeCompiler("msvc")) == "msvc"
    for unix_like in ("unix", "mingw32", "cygwin"):
        assert setup_module.compiler_family(FakeCompiler(unix_like)) == "unix"
    # MSVC gets only its own switches; gcc / clang no debug symbols
    assert all(flag.startswith("/") for flag in setup_module.COMPILE_ARGS["msvc"])
    unix = setup_module.COMPILE_ARGS["unix"]
    assert "-g0" in unix and "-fopenmp" not in unix and "-std=c11" in unix


def test_openmp_detection_with_this_machines_compiler(setup_module):
    """The real compiler: if it says OpenMP works, a module built with those
    flags is what the build uses; if not, the build must still succeed."""
    from setuptools._distutils.ccompiler import new_compiler
    from setuptools._distutils.sysconfig import customize_compiler

    compiler = new_compiler()
    customize_compiler(compiler)
    if shutil.which(compiler.compiler[0] if compiler.compiler_type == "unix" else "cl") is None:
        pytest.skip("no C compiler")
    args = setup_module.openmp_args(compiler)
    assert args is None or args[0] == setup_module.OPENMP_ARGS[compiler.compiler_type][0]
    if sys.platform.startswith("linux") and "gcc" in compiler.compiler[0]:
        assert args is not None  # GCC on Linux has OpenMP
