"""kernel_model/digest.py: the SHA-256 of AT_RANDOM and /dev/urandom without OpenSSL is
hashlib's SHA-256, so that seeded runs read the bytes they read before (issue 31)."""
import hashlib

from hypothesis import given
from hypothesis import strategies as st

from kernel_model.digest import sha256_digest


@given(st.binary(max_size=300))
def test_the_digest_is_hashlib_s_sha256(data):
    assert sha256_digest(data) == hashlib.sha256(data).digest()


def test_a_known_digest():
    assert sha256_digest(b"abc").hex().startswith("ba7816bf8f01cfea")     # FIPS 180-2's example
