"""Semantic checks before the run: each error names the place with a caret and says why."""
import pytest

from trapline.lang.checks import check, check_config
from trapline.lang.errors import ProgramError
from trapline.lang.parser import parse


def _error(text: str) -> ProgramError:
    with pytest.raises(ProgramError) as raised:
        program = parse(text)
        check_config(program)
        check(program)
    return raised.value


@pytest.mark.parametrize("text, column, words", [
    ("uprobe:/bin/ls:main { cout(); }", 23, "unknown function 'cout'"),
    ("uprobe:/bin/ls:main { @x = curtask; }", 28, "curtask is the kernel's task_struct"),
    ("BEGIN { system(\"ls\"); }", 9, "system() would run a command on the host"),
    ("uretprobe:/bin/ls:main { @x = arg0; }", 31, "arg0 is the probed function's argument"),
    ("uprobe:/bin/ls:main { @x = retval; }", 28, "retval is only set in uretprobe"),
    ("BEGIN { printf(\"%d %s\\n\", 1); }", 9, "the format has 2 conversions, 1 argument given"),
    ("BEGIN { @x = count(); @x = 1; }", 23, "@x holds count() (line 1) and cannot hold plain values"),
    ("BEGIN { @x[1] = 1; @x[1, 2] = 2; }", 20, "@x has keys of 1 part elsewhere, 2 here"),
    ("BEGIN { @x = lhist(1, 0, $y, 1); }", 26, "undefined variable $y"),
    ("BEGIN { $y = 1; @x = lhist(1, 0, $y, 1); }", 22, "min, max and step are integer literals"),
    ("BEGIN { @x = hist(1, 2); }", 14, "hist() takes 1 argument, not 2"),
    ("BEGIN { @x = count() + 1; }", 14, "count() is an aggregation"),
    ("BEGIN { @x = pidd; }", 14, "unknown identifier 'pidd'"),
    ("kprobe:do_nanosleep { @x = 1; }", 1, "kprobe probes are not available"),
    ("tracepoint:sched:sched_switch { @x = 1; }", 1, "tracepoint category 'sched' is not modeled"),
    ("tracepoint:syscalls:sys_enter_nosuchcall { @x = 1; }", 1, "no system call is named"),
    ("tracepoint:syscalls:sys_enter_read { @x = args.nosuch; }", 48, "read has no argument 'nosuch'"),
    ("tracepoint:syscalls:sys_exit_read { @x = args.fd; }", 47, "sys_exit_ tracepoints have args.ret only"),
    ("uprobe:/bin/ls:main { @x = args.size; }", 33, "/bin/ls has no DWARF for main (build it with -g)"),
    ("uretprobe:/bin/ls:main { @x = args.size; }", 36, "not in a uretprobe"),
    ("config = { buffer_limt = 4 } BEGIN { }", 12, "unknown config key 'buffer_limt' (trapline knows: buffer_limit)"),
    ("config = { buffer_limit = 4; buffer_limit = 5 } BEGIN { }", 30, "buffer_limit is set twice"),
    ("config = { buffer_limit = 0 } BEGIN { }", 12, "buffer_limit is a number of events, at least 1"),
    ("config = { buffer_limit = many } BEGIN { }", 12, "buffer_limit is a number of events, at least 1"),
    ("BEGIN { @x = printf(\"a\"); }", 14, "printf() is a statement"),
    ("BEGIN { @m[1] = 1; @m[comm] = 2; }", 23, "@m's key is a string here, an integer on line 1"),
    ("BEGIN { @m[1, \"a\"] = 1; }\nEND { @m[pid, 2] = 2; }", 15,
     "@m's key part 2 is an integer here, a string on line 1"),
    ("BEGIN { @x = \"" + "a" * 201 + "\"; }", 14, "string literal of 201 bytes"),
])
def test_errors(text, column, words):
    error = _error(text)
    assert words in error.message
    assert error.column == column
    lines = str(error).splitlines()
    assert lines[2] == " " * (column - 1) + "^"


def test_a_good_program_gives_its_attach_points():
    attaches = check(parse(
        "u:/bin/ls:str*, ur:/bin/ls:main { @[func] = count(); } "
        "t:syscalls:sys_exit_read { @r = hist(args.ret); } "
        "tracepoint:syscalls:sys_enter_openat { printf(\"%s\\n\", str(args.filename)); } "
        "interval:ms:10 { @t = count(); } END { print(@r); clear(@); }"))
    kinds = [[a.kind for a in block] for block in attaches]
    assert kinds == [["uprobe", "uretprobe"], ["tracepoint"], ["tracepoint"], ["interval"], ["END"]]
    assert attaches[0][0].text == "uprobe:/bin/ls:str*" and attaches[0][0].wildcard
    assert attaches[3][0].period_ns == 10_000_000
