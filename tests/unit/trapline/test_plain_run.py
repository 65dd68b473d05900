"""A plain `trapline run [--] PROGRAM [ARGS...]` starts without click (trapline/plain_run.py,
issue 31), and gives the guest's run exactly what click's parse of the same argv gives it; any
other argv is left to click."""
import pytest
from hypothesis import assume, given, settings, strategies as st

import trapline.cli
from trapline.cli import main
from trapline.plain_run import DEFAULTS, plain_run_argv


class Parsed(Exception):
    """Raised by the stand-in of run_guest with what click's `run` handed it."""


def _click_parse(monkeypatch, argv: list[str]) -> dict:
    def record(**kwargs):
        raise Parsed(kwargs)
    monkeypatch.setattr(trapline.cli, "run_guest", record)
    with pytest.raises(Parsed) as parsed:
        main(argv, prog_name="trapline", standalone_mode=False)
    return parsed.value.args[0]


def _plain_parse(argv: list[str]) -> dict | None:
    plain = plain_run_argv(argv)
    return None if plain is None else {"program": plain[0], "args": plain[1], **DEFAULTS}


@pytest.mark.parametrize("argv", [["run", "--", "/bin/hello"], ["run", "/bin/hello"],
                                  ["run", "/bin/hello", "-v", "--strace", "--", "x"],
                                  ["run", "--", "-v", "--seed", "3"], ["run", "--", "--", "a"],
                                  ["run", "--", "-"], ["run", "--", ""]])
def test_a_plain_run_is_what_click_parses(monkeypatch, argv):
    assert _plain_parse(argv) == _click_parse(monkeypatch, argv)


@pytest.mark.parametrize("argv", [[], ["run"], ["run", "--"], ["run", "-v", "--", "/bin/hello"],
                                  ["run", "--strace", "/bin/hello"], ["run", "-E", "A=1", "x"],
                                  ["run", "--help"], ["run", "-"], ["trace", "--", "/bin/hello"],
                                  ["--version"], ["-h", "run", "x"]])
def test_anything_else_is_left_to_click(argv):
    assert plain_run_argv(argv) is None


WORDS = st.sampled_from(["--", "-", "-v", "--strace", "-E", "A=1", "--seed", "7", "-o", "f",
                         "--help", "prog", "/bin/true", "x y", "é", ""])


@settings(max_examples=200)
@given(st.booleans(), WORDS, st.lists(WORDS, max_size=5))
def test_property_the_fast_path_takes_a_plain_run_as_click_parses_it(dashes, program, args):
    """`run [--] PROGRAM ARGS...` for any words: with `--`, or a program that does not look like
    an option, the fast path takes it and hands the run what click's parse hands it, whatever
    the program's arguments look like; a first word that looks like an option is click's."""
    assume(dashes or program != "--")       # `run -- ARGS` is the form with dashes
    argv = ["run", *(["--"] if dashes else []), program, *args]
    plain = _plain_parse(argv)
    if not dashes and program.startswith("-"):
        assert plain is None
        return
    assert plain is not None and plain["program"] == program and plain["args"] == tuple(args)
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert plain == _click_parse(monkeypatch, argv)
