"""trapline/experiments/spec.py and plan.py: every mistake in a spec is one line naming the key,
and `trapline experiment run` exits 2 with it, writing nothing."""
import tomllib

import pytest
from click.testing import CliRunner

from trapline.cli import main
from trapline.experiments.plan import make_plan
from trapline.experiments.plots import check as check_plots
from trapline.experiments.spec import SpecError, load_spec

GOOD = """
name = "t"
[program]
sample = "hello"
[run]
probes = ["uprobe:hello:main"]
[sweep]
strategy = ["jump", "emulate"]
"""

# (what is wrong, the TOML, the key the message must name, a word of the cause)
BAD = [
    ("unknown top key", 'name = "t"\nnmae = 1\n[program]\nsample = "hello"\n', "nmae", "unknown key"),
    ("unknown program key", 'name = "t"\n[program]\nsampel = "hello"\n', "program.sampel", "unknown key"),
    ("no name", '[program]\nsample = "hello"\n', "name", "missing"),
    ("wrong type", 'name = "t"\nseed = "x"\n[program]\nsample = "hello"\n', "seed", "expected an integer"),
    ("bool is no int", 'name = "t"\n[program]\nsample = "hello"\n[run]\nquantum = true\n', "run.quantum",
     "expected an integer"),
    ("both programs", 'name = "t"\n[program]\nsample = "hello"\npath = "x"\n', "program", "exactly one"),
    ("unknown strategy", GOOD.replace('"emulate"', '"fast"'), "sweep.strategy", "'fast' is not one of"),
    ("unknown run strategy", GOOD.replace("[sweep]\nstrategy", "[sweep]\nx").replace(
        "[run]\n", '[run]\nstrategy = "slow"\n'), "run.strategy", "'slow' is not one of"),
    ("bad probe", GOOD.replace("uprobe:hello:main", "uprobe:hello"), "run.probes[0]", "bad probe spec"),
    ("unknown probe kind", GOOD.replace("uprobe:hello:main", "kprobe:do_sys_open"), "run.probes[0]",
     "kprobe"),
    ("unknown sample arch", GOOD.replace('sample = "hello"', 'sample = "hello"\narch = "arm64"'),
     "program.arch", "'arm64' is not one of i386, x86_64"),
    ("missing sample", GOOD.replace('sample = "hello"', 'sample = "nonesuch"'), "program.sample",
     "no sample 'nonesuch'"),
    ("missing program file", GOOD.replace('sample = "hello"', 'path = "/nonexistent/prog"'),
     "program.path", "no file"),
    ("missing rootfs", GOOD.replace('sample = "hello"', 'path = "/bin/true"\nrootfs = "/nonexistent"'),
     "program.rootfs", "not a directory"),
    ("empty sweep", GOOD.replace('["jump", "emulate"]', "[]"), "sweep.strategy", "empty list"),
    ("zip lengths", GOOD + 'zip = [{a = [1, 2], b = [1]}]\n', "sweep.zip[0]", "differ in length"),
    ("unknown template", GOOD.replace('sample = "hello"', 'sample = "{who}"'), "program.sample",
     "{who} names no parameter"),
    ("metric needs probes", 'name = "t"\n[program]\nsample = "hello"\n[metrics]\ncollect = ["hits"]\n',
     "metrics.collect[0]", "needs run.probes"),
    ("unknown metric", GOOD + '[metrics]\ncollect = ["speed"]\n', "metrics.collect[0]", "unknown metric"),
    ("expression", GOOD + '[metrics]\nexpected_hits = "__import__(1)"\n', "metrics.expected_hits",
     "only integers"),
    ("plot of a metric not collected", GOOD + '[metrics]\ncollect = ["hits"]\n[[plots]]\nname = "p"\n'
     'x = "strategy"\ny = "lost_hits"\n', "plots[0].y", "not a collected metric"),
    ("plot axis", GOOD + '[[plots]]\nname = "p"\nx = "quantum"\ny = "hits"\n', "plots[0].x",
     "not a parameter"),
    ("not TOML", 'name = \n', "", "not TOML"),
    ("random draw too big", GOOD + 'n = { random = 5, low = 1, high = 3 }\n', "sweep.n",
     "cannot draw 5 distinct integers from [1, 3]"),
    ("random draw key", GOOD + 'n = { random = 2, low = 1, hgih = 3 }\n', "sweep.n.hgih",
     "unknown key"),
    ("walk-up with probes", GOOD + '[walkup]\nwindow = 10\n', "walkup", "no run.probes"),
    ("walk-up option", 'name = "t"\n[program]\nsample = "hello"\n[walkup]\nexclusive = "some"\n',
     "walkup.exclusive", "'some' is not one of off, exact"),
    ("walk-up threshold", 'name = "t"\n[program]\nsample = "hello"\n[walkup]\nthreshold = 0\n',
     "walkup.threshold", "expected a percentage"),
    ("profile mode", 'name = "t"\n[program]\nsample = "hello"\n[profile]\nmode = "leaf"\n',
     "profile.mode", "'leaf' is not one of pc, stack"),
    ("profile interval", 'name = "t"\n[program]\nsample = "hello"\n[profile]\n[sweep]\n'
     'interval = [0]\n', "sweep.interval", "expected an integer >= 1"),
    ("profile with probes", GOOD + '[profile]\ninterval = 10\n', "profile", "no run.probes"),
    ("walk-up and profile", 'name = "t"\n[program]\nsample = "hello"\n[walkup]\n[profile]\n',
     "profile", "not both"),
    ("detach on no signal", GOOD.replace("[run]\n", '[run]\ndetach_on = "SIGNOPE"\n'), "run.detach_on",
     "'SIGNOPE' is no signal"),
    ("an empty probe window", GOOD.replace("[run]\n", "[run]\nenable_at = 50\ndisable_at = 50\n"),
     "run.disable_at", "not after enable_at 50"),
    ("cold probes beyond the functions", GOOD.replace("[run]\n", "[run]\ncold_probes = 100000\n"),
     "run.cold_probes", "functions"),
]


def _plan(text: str):
    spec = load_spec(text.encode(), "spec.toml", None)
    plan = make_plan(spec)
    check_plots(spec, plan.parameters, plan.points[0].collect if plan.points else [])
    return plan


def test_the_good_spec_plans_two_points():
    plan = _plan(GOOD)
    assert [p.strategy for p in plan.points] == ["jump", "emulate"]
    assert [p.program for p in plan.points] == ["/bin/hello"] * 2


@pytest.mark.parametrize("what, text, key, cause", BAD, ids=[b[0] for b in BAD])
def test_a_bad_spec_is_one_line_naming_the_key(what, text, key, cause):
    with pytest.raises(SpecError) as error:
        _plan(text)
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(f"spec.toml: {key}:" if key else "spec.toml: "), message
    assert cause in message, message


@pytest.mark.parametrize("what, text, key, cause", BAD, ids=[b[0] for b in BAD])
def test_the_command_exits_2_with_the_line_and_writes_nothing(tmp_path, what, text, key, cause):
    """Every case of the issue's "Bad input" (and the others above), through the command."""
    spec = tmp_path / "bad.toml"
    spec.write_text(text)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["experiment", "run", str(spec), "-o", str(out)])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"trapline: {spec}: {key}"), result.output
    assert not out.exists()


def test_an_unknown_spec_name_lists_the_shipped_ones():
    result = CliRunner().invoke(main, ["experiment", "run", "nonesuch"])
    assert result.exit_code == 2
    assert "no shipped spec of that name (have: children, detach, loss, probe-cost, profile-error, walkup)" in result.output


def test_an_unreachable_scheduler_is_one_line(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text(GOOD)
    result = CliRunner().invoke(main, ["experiment", "run", str(spec), "-o", str(tmp_path / "o"),
                                       "--scheduler", "tcp://127.0.0.1:1"])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("trapline: --scheduler tcp://127.0.0.1:1: cannot reach it")
    assert len(result.output.strip().splitlines()) == 1
    manifest = tomllib.loads((tmp_path / "o" / "manifest.toml").read_text())
    assert (manifest["status"], manifest["points_done"]) == ("partial", [])
    assert manifest["partial_because"].startswith("stopped by an error: --scheduler tcp://127.0.0.1:1")


def test_every_shipped_spec_plans():
    from trapline.experiments.shipped import shipped
    sizes = {}
    for name, text in shipped().items():
        spec = load_spec(text.encode(), name, None)
        plan = make_plan(spec)
        check_plots(spec, plan.parameters, plan.points[0].collect)
        sizes[name] = len(plan.points)
    assert sizes == {"children": 36, "detach": 60, "loss": 224, "probe-cost": 100, "profile-error": 28,
                     "walkup": 36}


def test_templates_and_expressions_fill_each_point():
    plan = _plan(GOOD.replace("[sweep]", '[params]\ncalls = 5\n[sweep]\nworkers = [2, 3]')
                 .replace('sample = "hello"', 'sample = "hello"\nargv = ["{workers}", "x{calls}"]')
                 + '[metrics]\nexpected_hits = "workers * (calls + 1) // 2"\n')
    assert [(p.argv, p.expected_hits, p.strategy) for p in plan.points] == [
        (["2", "x5"], 6, "jump"), (["2", "x5"], 6, "emulate"),
        (["3", "x5"], 9, "jump"), (["3", "x5"], 9, "emulate")]


def test_a_folder_that_is_no_experiment_s_is_one_line_for_verify_and_resume(tmp_path):
    for args in (["verify", str(tmp_path)], ["run", "--resume", str(tmp_path)]):
        result = CliRunner().invoke(main, ["experiment", *args])
        assert result.exit_code == 2, result.output
        assert result.output.strip() == f"trapline: {tmp_path}: no manifest.toml (not an experiment's folder)"
    assert list(tmp_path.iterdir()) == []
