"""SHA-256 for the kernel's seeded bytes (AT_RANDOM, /dev/urandom), without OpenSSL.

hashlib loads OpenSSL's libcrypto on import, a cost every run paid for the 16 AT_RANDOM bytes
of its first exec (issue 31, start-up); CPython's own SHA-256 (the _sha256 extension, what
hashlib itself falls back to without OpenSSL) gives the same digest. hashlib where a Python
lacks that module.
"""
try:
    from _sha256 import sha256
except ImportError:         # another Python implementation: the same function from hashlib
    from hashlib import sha256


def sha256_digest(data: bytes) -> bytes:
    return sha256(data).digest()
