"""The pty line discipline (kernel_model/fs/pty_ldisc.py, drivers/tty/n_tty.c) over random
input cut into random writes: in canonical mode with the default settings, what the slave
reads, read by read, is the input's complete lines, CR turned into NL, each read one line (or
the part of one a short buffer takes), whatever the cut; the text after the last NL stays
unread; the echo is the input with ONLCR's CR NL for each line end. In raw mode the reads give
the input's bytes exactly. Erase and kill characters are left out of the canonical alphabet
(they edit, and the example-based tests cover them); a case with a line that spans writes and
one read cut short are both asserted to be reached."""
from hypothesis import given, settings, strategies as st

from kernel_model.fs.pty_ldisc import LineDiscipline, output
from kernel_model.fs.termios import Termios

TEXT = st.lists(st.sampled_from(b"ab \t\n\r"), max_size=60).map(bytes)
CUTS = st.lists(st.integers(1, 12), min_size=1, max_size=20)


def _pieces(data: bytes, cuts: list[int]) -> list[bytes]:
    pieces, at = [], 0
    for n in cuts:
        pieces.append(data[at:at + n])
        at += n
    return [p for p in pieces if p] + ([data[at:]] if data[at:] else [])


def _drain(ldisc: LineDiscipline, t: Termios, size: int) -> list[bytes]:
    reads = []
    while (got := ldisc.read(size, t)) is not None and got:
        reads.append(got)
    return reads


@settings(max_examples=300, deadline=None)
@given(TEXT, CUTS, st.integers(1, 8))
def test_canonical_reads_are_the_complete_lines(data, cuts, size):
    t, ldisc = Termios(), LineDiscipline()
    echoes = b"".join(ldisc.receive(piece, t) for piece in _pieces(data, cuts))
    typed = data.replace(b"\r", b"\n")
    complete, _, rest = typed.rpartition(b"\n")
    complete = complete + b"\n" if b"\n" in typed else b""
    reads = _drain(ldisc, t, size)
    assert b"".join(reads) == complete
    assert all(len(r) <= size for r in reads)
    assert all(r.endswith(b"\n") or len(r) == size for r in reads)
    assert bytes(ldisc.line) == rest
    assert output(echoes, t) == typed.replace(b"\n", b"\r\n")


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=60), CUTS, st.integers(1, 8))
def test_raw_reads_give_the_bytes_exactly(data, cuts, size):
    t = Termios(iflag=0, oflag=0, lflag=0)
    ldisc = LineDiscipline()
    for piece in _pieces(data, cuts):
        ldisc.receive(piece, t)
    assert b"".join(_drain(ldisc, t, size)) == data


def test_the_interesting_cases_are_reached():
    """A line cut over two writes, and a read shorter than its line, both read whole."""
    t, ldisc = Termios(), LineDiscipline()
    ldisc.receive(b"abc", t)
    ldisc.receive(b"de\r", t)
    assert _drain(ldisc, t, 4) == [b"abcd", b"e\n"]
