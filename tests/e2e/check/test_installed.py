"""A user's strategy from an installed package (issue 29): a package built in a temporary
folder registers its class in the entry-point group trapline.strategies; it and trapline
(a wheel built from this checkout, whose metadata carries the pytest11 plugin) are installed
with `pip install --no-deps --target` and found through PYTHONPATH alone, from a folder
outside the checkout. `trapline check` checks the installed strategy by default, and the
user's own ten-line test file checks it through the plugin's fixtures, with no conftest."""
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SOURCES = ("emu", "loader", "kernel_model", "instrumenter", "trapline")

STRATEGY = '''
from instrumenter.strategies.trampoline import TrampolineProbes


class Careful(TrampolineProbes):
    """Our trampoline strategy under the user's name."""
'''

USER_TEST = '''
from hypothesis import given, settings
from trapline.testing import relocation_cases
from trapline.testing.probes import ProbedCase, scenarios
from careful import Careful

@settings(max_examples=20)
@given(case=relocation_cases("x86_64"))
def test_relocation(case, trapline_relocation):
    trapline_relocation(case, Careful)

@settings(max_examples=10)
@given(case=scenarios("i386").map(lambda s: ProbedCase(*s)))
def test_probed(case, trapline_probed_run):
    trapline_probed_run(case, "careful")

def test_no_profile_chosen_means_no_deadline():
    import os
    if os.environ.get("CI"):    # hypothesis loads its "ci" profile on CI; the plugin's replaces it
        assert settings().deadline is None and settings().max_examples == 30
        assert settings().derandomize
    else:
        assert settings().deadline is None and settings().max_examples == 100
'''

# Environment variables by which hypothesis detects a CI service (hypothesis._settings); the
# user's test runs once outside CI and once on it, whatever the machine running this test is.
CI_VARIABLES = ("CI", "TF_BUILD", "BUILDKITE", "CIRCLECI", "CIRRUS_CI", "CODEBUILD_BUILD_ID",
                "GITHUB_ACTIONS", "GITLAB_CI", "HEROKU_TEST_RUN_ID", "TEAMCITY_VERSION",
                "bamboo.buildKey", "__TOX_ENVIRONMENT_VARIABLE_ORIGINAL_CI")


def _pip(*args, cwd):
    done = subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("installed")
    source = work / "trapline-src"                 # built outside the checkout: no build/ left there
    for name in SOURCES:
        shutil.copytree(ROOT / name, source / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.o"))
    for name in ("setup.cfg", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    user = work / "careful-src"
    (user / "careful").mkdir(parents=True)
    (user / "careful" / "__init__.py").write_text(STRATEGY)
    (user / "pyproject.toml").write_text(textwrap.dedent('''
        [build-system]
        requires = ["setuptools>=64"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "careful"
        version = "1.0"

        [project.entry-points."trapline.strategies"]
        careful = "careful:Careful"
    '''))
    wheels = work / "wheels"
    _pip("wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels), str(source), cwd=work)
    target = work / "site"
    _pip("install", "--no-deps", "--no-build-isolation", "-q", "--target", str(target),
         *map(str, wheels.glob("trapline-*.whl")), str(user), cwd=work)
    return target


def _run(args, installed: Path, cwd: Path, ci: bool | None = None, samples: Path | None = None):
    env = dict(os.environ, PYTHONPATH=str(installed))
    env.pop("TRAPLINE_SAMPLES", None)
    if samples is not None:     # (pip --target installs no data files: the samples are named)
        env["TRAPLINE_SAMPLES"] = str(samples)
    if ci is not None:
        for name in CI_VARIABLES:
            env.pop(name, None)
        if ci:
            env["CI"] = "true"
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=900)


def test_trapline_check_finds_and_checks_the_installed_strategy(installed, tmp_path):
    done = _run(["-m", "trapline", "check", "--arch", "i386", "--examples", "5", "--format", "json"],
                installed, tmp_path, samples=ROOT / "samples" / "bin")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "trapline/__init__.py" in _run(["-c", "import trapline; print(trapline.__file__)"],
                                          installed, tmp_path).stdout.replace(os.sep, "/")
    assert str(ROOT) not in _run(["-c", "import trapline; print(trapline.__file__)"],
                                 installed, tmp_path).stdout
    import json
    rows = json.loads(done.stdout)
    careful = [r for r in rows if r["strategy"] == "careful"]
    assert [r["property"] for r in careful if "host" not in r["property"]] == [
        "relocation", "probed sequence (careful)", "process tree (fork/vfork/exec)",
        "threads at small quanta", "removal and detach"]
    assert all(r["failed"] == 0 and r["accepted"] > 0 for r in careful)


def test_without_the_samples_check_says_so_and_runs_the_rest(installed, tmp_path):
    done = _run(["-m", "trapline", "check", "--strategy", "careful", "--arch", "i386", "--examples",
                 "3", "--no-host", "--format", "json"], installed, tmp_path)
    import json
    if "no whole-program properties" not in done.stderr:
        pytest.fail("the wheel's samples were found without TRAPLINE_SAMPLES: " + done.stderr)
    line = next(x for x in done.stderr.splitlines() if "no whole-program properties" in x)
    assert line.startswith("trapline: no whole-program properties: no shipped samples found "
                           "(searched ") and line.endswith("; set TRAPLINE_SAMPLES)")
    assert done.returncode == 0, done.stdout + done.stderr
    assert [r["property"] for r in json.loads(done.stdout)] == ["relocation",
                                                                "probed sequence (careful)"]


@pytest.mark.parametrize("ci", [False, True], ids=["local", "on-ci"])
def test_the_pytest_plugin_checks_it_in_the_users_own_test_file(installed, tmp_path, ci):
    (tmp_path / "test_careful.py").write_text(USER_TEST)
    done = _run(["-m", "pytest", "-q", "-p", "no:cacheprovider", "test_careful.py"], installed, tmp_path,
                ci=ci)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed" in done.stdout


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_trace_places_the_installed_strategy_by_its_entry_point_name(installed, tmp_path, arch):
    fib = ROOT / "samples" / "bin" / arch / "fib"
    runs = {s: _run(["-m", "trapline", "trace", "-c", "-p", f"uprobe:{fib}:fib", "--strategy", s,
                     str(fib)], installed, tmp_path) for s in ("trampoline", "careful")}
    assert all(done.returncode == 0 for done in runs.values()), runs
    table = {s: [line.split() for line in done.stderr.splitlines() if line.startswith("uprobe:")]
             for s, done in runs.items()}
    assert table["careful"][0][1] == table["trampoline"][0][1] != "0"      # the same hits
    assert table["careful"][0][2] == "careful"
    assert runs["careful"].stdout == runs["trampoline"].stdout
