"""The probe language's parser: bpftrace's syntax to the syntax tree, syntax errors with the
line, the column and a caret."""
import pytest
from hypothesis import given, strategies as st

from trapline.lang import ast
from trapline.lang.errors import ProgramError
from trapline.lang.parser import parse, unescape

# bpftrace's one-liner tutorial (user space and system calls), and its reference guide's forms
ONE_LINERS = [
    'BEGIN { printf("hello world\\n"); }',
    'tracepoint:syscalls:sys_enter_openat { printf("%s %s\\n", comm, str(args.filename)); }',
    'tracepoint:raw_syscalls:sys_enter { @[comm] = count(); }',
    'tracepoint:syscalls:sys_exit_read /pid == 18644/ { @bytes = hist(args.ret); }',
    'uretprobe:/bin/bash:readline { printf("read a line: %s\\n", str(retval)); }',
    'uprobe:libc.so.6:malloc /comm == "sort"/ { @bytes = hist(arg0); }',
    'uprobe:/bin/ls:str* { @[func] = count(); } END { clear(@); }',
    'tracepoint:syscalls:sys_enter_* { @[probe] = count(); }',
    'uprobe:/bin/ls:main, uretprobe:/bin/ls:main { @n++; $x = 2; @m[pid, comm] = $x > 1 ? 1 : 0; }',
    'BEGIN { $i = 0; while ($i < 3) { $i++; } unroll(2) { @u += 1; } if ($i == 3) { exit(); } else { print(@u); } }',
    '/* block */ BEGIN // line\n{ @a = lhist(5, 0, 100, 10); delete(@a); }',
]


@pytest.mark.parametrize("text", ONE_LINERS)
def test_one_liners_parse(text):
    program = parse(text)
    assert program.probes and all(p.attach_points for p in program.probes)


def test_a_probe_with_predicate_and_several_attach_points():
    probe = parse('uprobe:/bin/ls:a, uretprobe:/bin/ls:b /arg0 / 2 == 1/ { @x = count(); }').probes[0]
    assert [p.text for p in probe.attach_points] == ["uprobe:/bin/ls:a", "uretprobe:/bin/ls:b"]
    # the predicate ends at the '/' a '{' follows: the first '/' inside it divides
    assert isinstance(probe.predicate, ast.Binary) and probe.predicate.op == "=="
    assert probe.predicate.left.op == "/"
    assert isinstance(probe.body[0], ast.MapAssign) and probe.body[0].value.name == "count"


def test_precedence_is_c_s():
    statement = parse("BEGIN { $x = 1 + 2 * 3 << 1 == 14 && 1; }").probes[0].body[0]
    top = statement.value
    assert top.op == "&&" and top.left.op == "==" and top.left.left.op == "<<"
    assert top.left.left.left.op == "+" and top.left.left.left.right.op == "*"


def test_map_keys_and_increments():
    body = parse("BEGIN { @m[1, \"a\"]++; ++@n; $v = 1; $v--; }").probes[0].body
    assert body[0].target.name == "@m" and len(body[0].target.keys) == 2 and body[0].op == "+="
    assert body[1].target.name == "@n" and body[1].op == "+="
    assert body[3].op == "-="


def test_string_escapes():
    assert unescape(r'a\n\t\"\\b') == 'a\n\t"\\b'


@pytest.mark.parametrize("text, line, column, message", [
    ("BEGIN { x = ; }", 1, 11, "unexpected '='"),
    ("BEGIN {\n  @x = count( ;\n}", 2, 15, "unexpected ';'"),
    ("BEGIN { printf(\"a\") ", 1, 21, "unexpected end of program"),
    ("uprobe:/bin/ls:main { @x = 1 # 2; }", 1, 30, "unexpected character '#'"),
])
def test_syntax_errors_point_at_the_column(text, line, column, message):
    with pytest.raises(ProgramError) as raised:
        parse(text)
    error = raised.value
    assert (error.line, error.column) == (line, column)
    assert message in error.message
    shown = str(error).splitlines()
    assert shown[0].startswith(f"-e:{line}:{column}: ERROR: syntax error")
    assert shown[1] == text.splitlines()[line - 1]
    assert shown[2] == " " * (column - 1) + "^"


def test_a_program_file_may_start_with_bpftraces_shebang():
    with pytest.raises(ProgramError) as raised:
        parse("#!/usr/bin/env bpftrace\nBEGIN { @x = ; }\n", "f.bt")
    assert (raised.value.line, raised.value.column) == (2, 14)
    assert str(raised.value).splitlines()[0].startswith("f.bt:2:14: ERROR")
    program = parse("#!/usr/bin/env bpftrace\n// counts\nBEGIN { exit(); }\n", "f.bt")
    assert program.probes[0].line == 3


@given(value=st.integers(0, (1 << 64) - 1), form=st.sampled_from(["{:d}", "0x{:x}", "0X{:X}", "0{:o}"]))
def test_integer_literals_as_c_writes_them(value, form):
    """Decimal, hex and octal (a leading 0, as bpftrace's lexer reads it: 010 is 8): an octal
    literal was a Python traceback (int('010', 0) refuses it)."""
    text = form.format(value)
    assert parse(f"BEGIN {{ @x = {text}; }}").probes[0].body[0].value.value == value


def test_a_digit_that_is_no_octal_digit_is_a_syntax_error():
    with pytest.raises(ProgramError) as bad:
        parse("BEGIN { @x = 08; }")
    assert bad.value.column == 14 and "syntax error" in bad.value.message
