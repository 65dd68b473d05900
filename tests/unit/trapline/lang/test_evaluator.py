"""Predicates and actions on hits: bpftrace's semantics (64-bit integers, C's division, maps,
printf), and run-time errors that stop one hit's action and are reported, never raised."""
from tests.unit.trapline.lang.fake_hit import FakeHit, consumer, fire_all


def _run(text: str, *hits) -> tuple[str, list]:
    made, out, reports = consumer(text)
    for hit in hits or (FakeHit(),):
        fire_all(made, hit)
    made.finish(FakeHit())
    return out.getvalue(), reports


def test_predicate_filters_and_maps_count():
    text, _ = _run('uprobe:/p:f /arg0 > 2 && comm == "prog"/ { @[comm, arg0 % 2] = count(); @s = sum(arg0); }',
                   *[FakeHit(args=(n,)) for n in range(6)])
    assert text == "\n\n@[prog, 0]: 1\n@[prog, 1]: 2\n@s: 12\n"


def test_printf_and_locals_and_control_flow():
    text, _ = _run('uprobe:/p:f { $i = 0; $t = 0; while ($i < 5) { $t += $i; $i++; } '
                   'unroll(3) { $t = $t * 2; } '
                   'if ($t > 100) { printf("big %d\\n", $t); } else { printf("small %d %s %x\\n", $t, func, 255); } }')
    assert text == "small 80 f ff\n\n\n"          # bpftrace's two newlines at exit


def test_64_bit_arithmetic_and_c_division():
    text, _ = _run('uprobe:/p:f { printf("%d %d %d %d %u\\n", -7 / 2, -7 % 2, 9223372036854775807 + 1, 1 << 64, -1); }')
    assert text == "-3 -1 -9223372036854775808 1 18446744073709551615\n\n\n"


def test_ternary_strings_and_comparisons():
    text, _ = _run('uprobe:/p:f { @[comm == "prog" ? "yes" : "no"] = count(); '
                   'printf("%s|%-5s|%5d|\\n", str(comm), "ab", 42); }')
    assert text == "prog|ab   |   42|\n\n\n@[yes]: 1\n"


def test_division_by_zero_is_reported_once_and_counted():
    text, reports = _run('uprobe:/p:f { @before = count(); @x = arg0 / arg1; @after = count(); }',
                         FakeHit(args=(1, 0)), FakeHit(args=(1, 0)), FakeHit(args=(4, 2)))
    assert "@before: 3" in text and "@after: 1" in text and "@x: 2" in text
    assert reports[0].startswith("trapline: -e:1:44: ERROR: uprobe:/p:f: division by zero")
    assert reports[0].splitlines()[-1] == " " * 43 + "^"
    assert reports[1] == "trapline: -e:1:44: uprobe:/p:f: division by zero: 2 hits in all"


def test_exit_stops_this_consumer_and_prints_its_maps_at_once():
    made, out, _ = consumer('uprobe:/p:f { @n = count(); if (@n == 2) { exit(); } } END { printf("end\\n"); }')
    for _ in range(5):
        fire_all(made, FakeHit())
    assert out.getvalue() == "end\n\n\n@n: 2\n"
    made.finish(FakeHit())                   # the run's end: nothing more
    assert out.getvalue() == "end\n\n\n@n: 2\n"


def test_delete_clear_zero_and_print():
    text, _ = _run('uprobe:/p:f { @a[1] = 1; @a[2] = 2; delete(@a[1]); @b = count(); @c[3] = 5; '
                   'print(@a); zero(@b); clear(@c); print(@c); print(7); print("s"); }')
    # print(@c) of the cleared map and @c at exit: an empty line each (bpftrace v0.23.0 print_map)
    assert text == "@a[2]: 2\n\n7\ns\n\n\n@a[2]: 2\n@b: 0\n\n"


def test_syscall_fields_and_retval():
    text, _ = _run('tracepoint:syscalls:sys_exit_read { @r = hist(args.ret); @v = max(retval); }',
                   FakeHit(retval=100, fields={"ret": 100}), FakeHit(retval=-11, fields={"ret": -11}))
    assert "@r:\n(..., 0)" in text and "[64, 128)" in text and "@v: 100" in text
