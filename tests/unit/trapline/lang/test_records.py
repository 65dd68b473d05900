"""ArgumentRecords: rows the guest's native args actions stored run the blocks of their probe;
other rows are dropped; the guest's drops are counted per pid (reported as lost events)."""
from instrumenter.probes.records import Buffer
from trapline.lang.native import ArgumentRecords, argument_words
from tests.unit.trapline.lang.fake_hit import consumer


class _Probe:
    class spec:
        text = "uprobe:/p:f"


def test_rows_run_their_probes_blocks_and_drops_are_counted():
    made, out, _ = consumer("uprobe:/p:f /arg0 > 1/ { @[pid, arg0] = count(); @s = sum(arg1); }")
    block = made.blocks[0]
    assert argument_words(block) == 2
    records = ArgumentRecords()
    records.route(_Probe, [(made, block, "f")], "f")
    for args in ((1, 5), (2, 7), (3, 9), (2, 1)):
        records.put((0, 42, 0, "uprobe:/p:f", 0x1000, args, None, "entry", "f"))
    records.put((0, 42, 0, "uprobe:/p:other", 0x2000, (9, 9), None, "entry", "other"))
    made.finish(None)
    assert out.getvalue() == "\n\n@[42, 3]: 1\n@[42, 2]: 2\n@s: 17\n"
    assert records.dropped() == {}
    records.by_pid[42] = Buffer(42, 1)
    records.by_pid[42].dropped = 3
    assert records.dropped() == {42: 3}


def test_blocks_that_read_more_than_arguments_stay_on_the_python_path():
    for text in ('uprobe:/p:f { printf("%d\\n", arg0); }', "uprobe:/p:f { @[comm] = count(); }",
                 "uprobe:/p:f /arg7 > 0/ { @ = count(); }", "uretprobe:/p:f { @ = sum(retval); }",
                 "uprobe:/p:f { if (arg0) { @ = count(); } }"):
        made, _, _ = consumer(text)
        assert argument_words(made.blocks[0]) is None, text
