"""The seeded byte stream behind /dev/urandom and /dev/random.

Never host randomness: the bytes are SHA-256 in counter mode over the run's seed, so a run with
the same seed reads the same bytes in the same order.
"""
from ..digest import sha256_digest


class DeterministicRandom:
    def __init__(self, seed: int, label: bytes = b"trapline/dev/urandom"):
        self._key = label + b"\0" + str(seed).encode()
        self._counter = 0
        self._buffer = b""

    def read(self, n: int) -> bytes:
        while len(self._buffer) < n:
            block = sha256_digest(self._key + self._counter.to_bytes(8, "little"))
            self._buffer += block
            self._counter += 1
        out, self._buffer = self._buffer[:n], self._buffer[n:]
        return out
