"""Records kept in the guest by jump's args:N reach a streaming sink as blocks (issue 31,
the rate of records through jump): the collector hands each drained slot's records to the sink
at once (Buffers.put_block, trapline/tracing.py StreamSink.put_block), and the sink writes
the bytes it wrote when each record came as a row."""
import io

import pytest

from instrumenter.probes.definitions import Probe
from trapline import Sandbox
from trapline.probespec import parse_probe_spec
from trapline.tracing import StreamSink

from ..samples.test_samples_run import SAMPLES

FIB20_CALLS = 21891


class _RowsOnly(StreamSink):
    """The sink without blocks: every record comes as a row (the reference)."""
    put_block = None


class _CountingBlocks(StreamSink):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.in_blocks = 0

    def put_block(self, *args, **kwargs):
        self.in_blocks += args[-1] if args else kwargs["count"]
        super().put_block(*args, **kwargs)


def _trace(arch: str, fmt: str, sink_class, batch: int):
    out = io.StringIO()
    sink = sink_class(out, fmt, batch=batch)
    probes = [Probe(parse_probe_spec("uprobe:fib:fib"), nargs=6, native="args:6"),
              Probe(parse_probe_spec("syscall:writev"))]      # fib's one print: rows before the last block
    result = Sandbox(probes=probes, strategy="jump", sink=sink).run([str(SAMPLES / arch / "fib"), "20"])
    sink.flush()
    return result, sink, out.getvalue()


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("fmt", ["jsonl", "text"])
@pytest.mark.parametrize("batch", [1, StreamSink.BATCH])
def test_native_records_come_as_blocks_with_the_rows_bytes(arch, fmt, batch):
    reference, _, expected = _trace(arch, fmt, _RowsOnly, batch)
    result, sink, written = _trace(arch, fmt, _CountingBlocks, batch)
    assert result.stdout == reference.stdout and result.hits["uprobe:fib:fib"] == FIB20_CALLS
    assert sink.in_blocks == FIB20_CALLS                 # every native record, none as a row
    assert written == expected and written.count("\n") == FIB20_CALLS + 2    # and writev's entry, exit
