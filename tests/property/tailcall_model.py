"""What samples/tailcall.c does, in Python: its output line, and the returns a lossless
return probe reports — function and value, in order — for any set of probed functions.

A tail call hands the caller's return slot to the callee; when the callee returns, every frame
waiting on that slot returns with it, innermost first, each with the same value (Linux's
uretprobes: kernel/events/uprobes.c handle_trampoline). A frame a longjmp leaves never returns.
Each function below takes `chain`: the frames (outermost first) whose slot it returns through.
"""
from __future__ import annotations

from collections import Counter

M = 0xFFFF_FFFF
FUNCTIONS = ("hot", "mid", "top", "c1", "c2", "c3", "relay", "via", "even", "odd", "last",
             "thrower", "jumper", "s0", "s1", "s2", "s3", "sleaf")
DEFAULT_SHAPE = "t2ct1dh"


class _Longjmp(Exception):
    def __init__(self, value: int):
        self.value = value


class TailcallModel:
    def __init__(self, probed=FUNCTIONS):
        self.probed = set(probed)
        self.returns: list[tuple[str, int]] = []     # (function, value), in report order
        self.calls = Counter()
        self.chained_returns = 0          # returns of a probed frame through a shared slot

    # ---- what a return reports --------------------------------------------------------------
    def _returned(self, name: str, chain: list[str], value: int) -> int:
        reported = [f for f in [name, *reversed(chain)] if f in self.probed]
        if len(reported) > 1:
            self.chained_returns += len(reported) - 1
        self.returns += [(f, value) for f in reported]
        return value

    # ---- the sample's functions ---------------------------------------------------------------
    def hot(self, chain, x):
        self.calls["hot"] += 1
        return self._returned("hot", chain, (x * 1664525 + 1013904223) & M)

    def mid(self, chain, x):
        self.calls["mid"] += 1
        return self.hot(chain + ["mid"], (x + 1) & M)

    def top(self, chain, x):
        self.calls["top"] += 1
        return self._returned("top", chain, self.mid([], x) ^ 0x5A5A5A5A)

    def c1(self, chain, x):
        self.calls["chain"] += 1
        return self.hot(chain + ["c1"], x ^ 3)

    def c2(self, chain, x):
        return self.c1(chain + ["c2"], (x + 2) & M)

    def c3(self, chain, x):
        return self.c2(chain + ["c3"], (x * 5) & M)

    def relay(self, chain, x):
        return self.hot(chain + ["relay"], (x + 7) & M)

    def via(self, chain, x):
        self.calls["via"] += 1
        return self.relay(chain + ["via"], x ^ 0x1234)

    def last(self, chain, acc, parity):
        self.calls["last"] += 1
        return self._returned("last", chain, ((acc ^ parity) * 1664525 + 1013904223) & M)

    def even(self, chain, n, acc):
        self.calls["even"] += 1
        if n == 0:
            return self.last(chain + ["even"], acc, 0)
        return self.odd(chain + ["even"], n - 1, (acc + n) & M)

    def odd(self, chain, n, acc):
        self.calls["odd"] += 1
        if n == 0:
            return self.last(chain + ["odd"], acc, 1)
        return self.even(chain + ["odd"], n - 1, (acc * 3) & M)

    def thrower(self, chain, x):
        raise _Longjmp(x | 1)

    def jumper(self, chain, x):
        self.calls["jumper"] += 1
        return self.thrower(chain + ["jumper"], (x + 11) & M)

    def sleaf(self, chain, p, x):
        return self._returned("sleaf", chain, (x * 1664525 + 1013904223) & M)

    def step(self, n: int, chain, p: str, x: int) -> int:
        self.calls["steps"] += 1
        name = f"s{n}"
        x = (x * 2654435761 + n) & M
        op = p[0] if p else "\0"
        if op == "t":
            return self.step((ord(p[1]) - 48) & 3, chain + [name], p[2:], x)
        if op == "d":
            return self.step((n + 1) % 4, chain + [name], p[1:], x)
        if op == "c":
            value = self.step((ord(p[1]) - 48) & 3, [], p[2:], x) ^ (n + 1)
            return self._returned(name, chain, value)
        if op == "h":
            return self.sleaf(chain + [name], p, x)
        return self._returned(name, chain, x)

    # ---- main ----------------------------------------------------------------------------------
    def main(self, rounds: int = 200, shape: str = DEFAULT_SHAPE) -> str:
        total, jumps = 0, 0
        for i in range(rounds):
            total = (total + self.top([], i)) & M
            total ^= self.c3([], total)
            total = (total + self.via([], i)) & M
            total ^= self.even([], i % 5, total)
            total = (total + self.step(0, [], shape, total)) & M
            try:
                self.jumper([], total)
                raise AssertionError("jumper returned")
            except _Longjmp as escape:
                caught = escape.value & M
                jumps += 1
            total ^= caught
        c = self.calls
        return (f"hot={c['hot']} mid={c['mid']} top={c['top']} chain={c['chain']} "
                f"via={c['via']} even={c['even']} odd={c['odd']} last={c['last']} "
                f"jumper={c['jumper']} jumps={jumps} steps={c['steps']} sum={total:08x}\n")


def valid_shape(shape: str) -> bool:
    """Every `t` and `c` is followed by the digit of the step it goes to (the sample reads it)."""
    i = 0
    while i < len(shape):
        if shape[i] in "tc":
            if i + 1 >= len(shape) or shape[i + 1] not in "0123":
                return False
            i += 2
        else:
            i += 1
    return True
