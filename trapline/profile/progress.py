"""Progress of a long profile on the terminal (issue 18): one status line on stderr, rewritten
in place every STEP samples with the samples taken and the virtual time reached, and erased
when the run ends. Only when stderr is a terminal: a redirected or piped run gets no such
line, so files and test output stay as they were. It counts samples, never host time, so it
says the same at the same point of every run.
"""
from __future__ import annotations

STEP = 500                  # samples between two updates
CLEAR = "\r\x1b[2K"         # carriage return, erase the line (ECMA-48 EL 2)


class ProfileProgress:
    def __init__(self, stream, label: str):
        self.stream, self.label = stream, label
        self.samples, self.shown = 0, False

    @classmethod
    def for_terminal(cls, stream, label: str) -> "ProfileProgress | None":
        isatty = getattr(stream, "isatty", None)
        return cls(stream, label) if isatty is not None and isatty() else None

    def sample(self, sample) -> None:
        self.samples += 1
        if self.samples % STEP == 0:
            self._show(sample.ts)

    def _show(self, ts: int) -> None:
        self.stream.write(f"{CLEAR}profiling {self.label}: {self.samples} samples, {ts:,} guest instructions")
        self.stream.flush()
        self.shown = True

    def tally(self, sample, n: int) -> None:
        """`n` samples at once (the histogram's: `sample.ts` is the first's), shown when they
        pass a multiple of STEP."""
        before, self.samples = self.samples, self.samples + n
        if self.samples // STEP > before // STEP:
            self._show(sample.ts)

    def phase(self, text: str) -> None:
        """Work that takes no samples (--compare-full's two more runs), shown until done()."""
        self.stream.write(f"{CLEAR}{self.label}: {text}")
        self.stream.flush()
        self.shown = True

    def done(self) -> None:
        if self.shown:
            self.stream.write(CLEAR)
            self.stream.flush()
            self.shown = False
