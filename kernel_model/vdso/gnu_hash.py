"""The vDSO's GNU hash table (DT_GNU_HASH), beside its SysV one (DT_HASH).

Linux links the vDSO with --hash-style=both (arch/x86/entry/vdso/Makefile), and glibc's loader
looks an object's symbols up through the GNU table whenever it has one (elf/dl-lookup.c:
_dl_setup_hash prefers DT_GNU_HASH, do_lookup_x asks its Bloom filter first), so on Linux
glibc finds __vdso_clock_gettime and the others this way; musl's __vdsosym reads DT_HASH only.

The table, as the GNU toolchain lays it out: four 32-bit words (nbuckets, symoffset, the Bloom
filter's word count and its second shift), the Bloom words (address-sized: ELFCLASS64 or 32),
one 32-bit word per bucket (the first symbol of the bucket, 0 for none), then one chain word
per hashed symbol (its hash, the low bit set on the last symbol of its bucket). The hashed
symbols are the last ones of .dynsym, in bucket order: `in_bucket_order` gives that order.
"""
from __future__ import annotations

import struct

# GNU ld's bucket counts (bfd/elflink.c compute_bucket_count): the largest one that is not
# above the number of symbols; the vDSO's few symbols get 3 buckets, as the host's [vdso] has.
BUCKET_SIZES = (1, 3, 17, 37, 67, 97, 131)
# The Bloom filter's second hash is the hash shifted right by this (any shift is valid: the
# reader takes it from the header).
BLOOM_SHIFT = 6
BLOOM_BITS_PER_SYMBOL = 4        # words enough for this many bits per symbol, a power of two


def gnu_hash(name: bytes) -> int:
    """dl_new_hash: h = h * 33 + c from 5381, in 32 bits."""
    h = 5381
    for byte in name:
        h = (h * 33 + byte) & 0xFFFFFFFF
    return h


def bucket_count(symbols: int) -> int:
    return max(size for size in BUCKET_SIZES if size <= max(symbols, 1))


def in_bucket_order(names: list[bytes]) -> list[bytes]:
    """`names` in the order the table needs them in .dynsym: by bucket, stable within one."""
    buckets = bucket_count(len(names))
    return sorted(names, key=lambda name: gnu_hash(name) % buckets)


def _bloom_words(symbols: int, word_bits: int) -> int:
    words = 1
    while words * word_bits < BLOOM_BITS_PER_SYMBOL * symbols:
        words *= 2
    return words


def gnu_hash_table(names: list[bytes], wide: bool, symoffset: int = 1) -> bytes:
    """The table over `names`, .dynsym's symbols from index `symoffset` on (index 0 is the
    null symbol), which must be in bucket order."""
    if names != in_bucket_order(names):
        raise ValueError("the hashed symbols must be in bucket order")
    word_bits = 64 if wide else 32
    nbuckets = bucket_count(len(names))
    bloom = [0] * _bloom_words(len(names), word_bits)
    buckets = [0] * nbuckets
    chains = []
    hashes = [gnu_hash(name) for name in names]
    for index, h in enumerate(hashes):
        word = (h // word_bits) % len(bloom)
        bloom[word] |= 1 << (h % word_bits) | 1 << ((h >> BLOOM_SHIFT) % word_bits)
        bucket = h % nbuckets
        if buckets[bucket] == 0:
            buckets[bucket] = symoffset + index
        last = index + 1 == len(hashes) or hashes[index + 1] % nbuckets != bucket
        chains.append(h | 1 if last else h & ~1)
    header = struct.pack("<4I", nbuckets, symoffset, len(bloom), BLOOM_SHIFT)
    return header + struct.pack(f"<{len(bloom)}{'Q' if wide else 'I'}", *bloom) + \
        struct.pack(f"<{nbuckets + len(chains)}I", *buckets, *chains)
