"""run.handler (issue 28: every run option of trace, here --handler): the user's handler runs in
the trampoline page at every uprobe hit (samples/handlers' limit_n clamps fib's n to 5: fib(10)
makes 15 calls instead of 177), its file is an input shipped by content and hashed in the
manifest, verify catches a changed handler, and a bad one is one line naming the key."""
import csv
import io
import shutil
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from trapline.cli import main

HANDLERS = Path(__file__).resolve().parents[3] / "samples" / "handlers"
SPEC = """
name = "handled"
[program]
sample = "fib"
argv = ["10"]
[run]
probes = ["uprobe:fib:fib"]
strategy = "{strategy}"
[sweep]
arch = ["i386", "x86_64"]
strategy = ["trampoline", "jump"]
handler = ["", "h/{arch}/limit_n.s", "h/{arch}/limit_n.o:limit_n"]
"""


@pytest.fixture
def spec_dir(tmp_path) -> Path:
    shutil.copytree(HANDLERS, tmp_path / "h", ignore=shutil.ignore_patterns("*.c", "*.h", "*.py"))
    (tmp_path / "spec.toml").write_text(SPEC.replace('strategy = "{strategy}"\n', ""))
    return tmp_path


@pytest.mark.e2e
def test_the_handler_runs_at_every_hit_and_is_an_input(spec_dir):
    out = spec_dir / "out"
    result = CliRunner().invoke(main, ["experiment", "run", str(spec_dir / "spec.toml"), "-o", str(out),
                                       "-j", "2"])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO((out / "results.csv").read_text())))
    assert len(rows) == 12
    for row in rows:
        handled = row["handler"] != ""
        assert row["outcome"] == "ok" and row["placed"] == f"{row['strategy']}=1", row
        assert int(row["hits"]) == (15 if handled else 177), row
    manifest = tomllib.loads((out / "manifest.toml").read_text())
    handlers = {i["source"]: i for i in manifest["inputs"] if i.get("guest", "").startswith("/limit_n")}
    assert sorted(handlers) == sorted(str(spec_dir / "h" / arch / name) for arch in ("i386", "x86_64")
                                      for name in ("limit_n.o", "limit_n.s"))
    verified = CliRunner().invoke(main, ["experiment", "verify", str(out), "-j", "2"])
    assert verified.exit_code == 0, verified.output
    changed = spec_dir / "h" / "x86_64" / "limit_n.s"
    changed.write_text(changed.read_text() + "\nnop\n")
    verified = CliRunner().invoke(main, ["experiment", "verify", str(out), "-j", "2"])
    assert verified.exit_code == 1
    assert f"differs: input {changed} (guest /limit_n.s) changed" in verified.output


@pytest.mark.e2e
@pytest.mark.parametrize("handler, cause", [("h/x86_64/missing.s", "no file"),
                                            ("h/x86_64/limit_n.o:nonesuch", "nonesuch"),
                                            ("bad.s", "bad.s")])
def test_a_bad_handler_is_one_line_naming_the_key(spec_dir, handler, cause):
    (spec_dir / "bad.s").write_text("this is not an instruction\n")
    (spec_dir / "bad.toml").write_text(
        SPEC.replace('strategy = "{strategy}"', 'strategy = "trampoline"').replace(
            'strategy = ["trampoline", "jump"]\nhandler = ["", "h/{arch}/limit_n.s", '
            '"h/{arch}/limit_n.o:limit_n"]', f'handler = ["{handler}"]'))
    out = spec_dir / "bad-out"
    result = CliRunner().invoke(main, ["experiment", "run", str(spec_dir / "bad.toml"), "-o", str(out)])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"trapline: {spec_dir / 'bad.toml'}: sweep.handler: ")
    assert cause in lines[0], lines
    assert not out.exists()


def test_an_object_for_the_other_arch_is_refused_before_anything_runs(spec_dir):
    (spec_dir / "other.toml").write_text(
        SPEC.replace('strategy = "{strategy}"', 'strategy = "trampoline"').replace(
            'arch = ["i386", "x86_64"]\nstrategy = ["trampoline", "jump"]\nhandler = ["", "h/{arch}/limit_n.s", '
            '"h/{arch}/limit_n.o:limit_n"]', 'arch = ["x86_64"]\nhandler = ["h/i386/limit_n.o:limit_n"]'))
    result = CliRunner().invoke(main, ["experiment", "run", str(spec_dir / "other.toml"), "-o",
                                       str(spec_dir / "o")])
    assert result.exit_code == 2, result.output
    assert "sweep.handler: handler " in result.output and "built for i386" in result.output
    assert len(result.output.strip().splitlines()) == 1 and not (spec_dir / "o").exists()


@pytest.mark.e2e
def test_a_dask_cluster_gets_the_handler_by_content_and_gives_the_local_results(spec_dir):
    """The handler's tree is scattered beside the program's (execute.py): a local Dask cluster
    of two worker processes gives the local pool's cells and the same manifest inputs."""
    import distributed  # noqa: F401  (a dependency of trapline: setup.cfg)
    (spec_dir / "one.toml").write_text(SPEC.replace('strategy = "{strategy}"\n', "").replace(
        'arch = ["i386", "x86_64"]\nstrategy = ["trampoline", "jump"]', 'arch = ["x86_64"]\nstrategy = ["jump"]'))
    outputs = {}
    for where in (["-j", "2"], ["--dask-local", "2"]):
        out = spec_dir / where[0].strip("-")
        result = CliRunner().invoke(main, ["experiment", "run", str(spec_dir / "one.toml"), "-o", str(out),
                                           *where])
        assert result.exit_code == 0, result.output
        rows = list(csv.DictReader(io.StringIO((out / "results.csv").read_text())))
        outputs[where[0]] = ([{k: v for k, v in r.items() if not k.startswith("host_")} for r in rows],
                             tomllib.loads((out / "manifest.toml").read_text())["inputs"])
    local, dask = outputs["-j"], outputs["--dask-local"]
    differing = [(i, key, row[key], dask[0][i].get(key)) for i, row in enumerate(local[0])
                 for key in row if row[key] != dask[0][i].get(key)]
    assert not differing, differing
    assert local == dask
    assert [int(r["hits"]) for r in outputs["-j"][0]] == [177, 15, 15]
