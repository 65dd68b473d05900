"""Measured figures live in bench/ and docs/, not in the code's comments and docstrings (issue
27): a timing or a rate written beside the code ("~12 ms", "3.1x `run`", "took 2-3 us",
"300 k/s") was true on one host on one day and goes stale silently when the code or the host
changes. The code says why (the reason, or the bench/ script that measures it); the figures
are in bench/'s output and docs/benchmarks.md.

What is scanned: every comment and string (docstrings, help texts) of the repository's Python
files outside bench/, read with tokenize, so code (hex literals, struct formats) is never read
as prose. A figure is reported when it reads as a measurement: an approximate time, ratio or
share (`~`, "about"), a ratio written `3.1x`, a rate (`/s`), a bound on a time (`<= 2 µs`), or
a time on a line that says it cost or took it. Constants are not measurements (a protocol
timeout, USER_HZ, a modeled clock's "1 ns per instruction"): they either do not read as one or
are in ALLOWED with the reason.
"""
import io
import re
import subprocess
import tokenize
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OWNERS_OF_FIGURES = ("bench/",)     # benchmarks print and document their measurements

NUMBER = r"\d+(?:[.,]\d+)?(?:\s?-\s?\d+(?:[.,]\d+)?)?"      # 12, 1.5, 2-3, 8,500
TIME_UNIT = r"(?:µs|us|ns|ms|s|sec|seconds?|minutes?|hours?)"
TIME = rf"{NUMBER}\s?{TIME_UNIT}\b"
NOT_AFTER = r"(?<![\w.%])"          # not the tail of a word, a number or a printf conversion
MEASURE_WORD = r"\b(?:cost|costs|took|paid|pays|spent|measured|saves|saved|faster|slower)\b"
MEASURED = {
    "approximate": re.compile(
        rf"(?:~|\babout |\baround |\bnearly |\balmost )\s?{NUMBER}\s?(?:{TIME_UNIT}|x|×|%)(?!\w)"
        r"|(?:~|\babout |\baround |\bnearly |\balmost )(?:half an|an|a|one|two|three) "
        r"(?:hour|minute|second)s?\b"),
    "ratio": re.compile(rf"{NOT_AFTER}{NUMBER}[x×](?=[\s,;:)`]|$)"),
    "rate": re.compile(rf"{NOT_AFTER}{NUMBER}\s?[kKMG]?\s?(?:[a-z]+\s)?[a-z]*/s\b"),
    "bound": re.compile(rf"(?:<=|>=|≤|≥)\s?{TIME}"),
    "cost": re.compile(rf"{MEASURE_WORD}.*{NOT_AFTER}{TIME}|{NOT_AFTER}{TIME}.*{MEASURE_WORD}"),
}
# (file, the figure found): constants that read like measurements, each with its reason.
ALLOWED = {
    # a timer tick's length at Linux's lowest CONFIG_HZ, 100: a bound from the kernel's constant
    ("kernel_model/process/exec_cache.py", "<= 10 ms"),
    # timeval's rule: a tv_usec of a million or more carries into tv_sec
    ("tests/unit/kernel_model/syscalls/impls/test_select.py", ">= 1 s"),
    # a guest program's expected output: it checks the lease-break-time it set (1 s) was waited
    ("tests/e2e/run/test_leases.py", ">= 1 s"),
}


def measured_figures(text: str) -> list[tuple[str, str]]:
    """(kind, figure) of each measurement-like figure in one line of prose."""
    found = []
    for kind, pattern in MEASURED.items():
        match = pattern.search(text)
        if match:
            found.append((kind, match.group(0)))
    return found


def prose_lines(source: str):
    """(line number, text) of every line of the comments and string literals of `source`."""
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in (tokenize.COMMENT, tokenize.STRING):
            for offset, line in enumerate(token.string.splitlines()):
                yield token.start[0] + offset, line


def scanned_files() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "*.py"], cwd=REPO, capture_output=True, text=True,
                            check=True).stdout.split()
    return [name for name in listed if not name.startswith(OWNERS_OF_FIGURES)
            and name != "tests/unit/test_measured_figures.py"]


def test_the_code_carries_no_measured_figures():
    found = []
    for name in scanned_files():
        for number, line in prose_lines((REPO / name).read_text(encoding="utf-8")):
            for kind, figure in measured_figures(line):
                if (name, figure) not in ALLOWED:
                    found.append(f"{name}:{number}: {kind} {figure!r}: {line.strip()}")
    assert found == [], "\n".join(found)


def test_every_allowed_figure_is_still_there():
    """An allow-list entry whose figure went away is removed, so the list says what it allows."""
    seen = set()
    for name in {name for name, _ in ALLOWED}:
        for _, line in prose_lines((REPO / name).read_text(encoding="utf-8")):
            seen.update((name, figure) for _, figure in measured_figures(line))
    assert ALLOWED <= seen, sorted(ALLOWED - seen)


MEASUREMENTS = [
    "costs a start-up ~12 ms of CPU",
    "`trace` on code no probe touches cost 3.1x `run` with this hook",
    "`trace` cost 3-4x `run`",
    "getting them on every hit took 2-3 us of a record's ~10",
    "0.2 us for six where a batch's `.read()` took 1-2 us",
    "one trap (~1.5 us with a Python action)",
    "about 4 % of a static hello's instructions",
    "about half an hour on 2 cores",
    "goal >= 300 k/s",
    "1035 k text lines/s",
    "issue 12: <= 2 µs of kernel-model time",
    "Costs ~1.7x on translated code",
]
NOT_MEASUREMENTS = [
    'f"{self.start:08x}-{self.end:08x}"',            # printf conversions
    '"%08lx-%08lx %c%c%c%c %08llx %02x:%02x"',
    "struct.Struct('<16QQQHHHHQQQQQ64x')",            # struct padding
    "# 2 x 8 500 decodes",                            # a product, not a ratio
    "virtual: 1 ns per guest instruction",            # the modeled clock's definition
    "tick 10000 us (USER_HZ 100)",                    # the kernel's constants
    "not acknowledged within its remotetimeout (2 s)",    # gdb's protocol default
    "Asked again every 20 ms",                        # a polling period chosen by the code
    "int3s it could not know about",
]


def test_the_pattern_finds_measurements_and_passes_constants():
    assert [text for text in MEASUREMENTS if not measured_figures(text)] == []
    assert [(text, measured_figures(text)) for text in NOT_MEASUREMENTS
            if measured_figures(text)] == []
