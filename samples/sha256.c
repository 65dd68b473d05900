/*
 * sha256.c -- SHA-256 of a generated buffer, for the compute benchmark (bench/compute.py).
 *
 * Exercises: the integer code of a hash's compression function (FIPS 180-4, section 6.2)
 * over N bytes, with no syscall between the start and the one write at the end, so that the
 * same function can be timed as a whole program (trapline, QEMU user mode, native) and called
 * alone in a bare Unicorn loop (hash_buffer: no libc call, no syscall).  The buffer is bss,
 * filled with a byte pattern (i * 131 + 7) before hashing.
 *
 * Usage: sha256 [N]   (N bytes, default 1 MiB, at most 8 MiB)   Output: "sha256(N) = HEX\n".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_BYTES (8u << 20)

static uint8_t buffer[MAX_BYTES + 128];
uint32_t digest[8];

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROTR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

void compress(uint32_t h[8], const uint8_t *block)
{
    uint32_t w[64];
    for (int t = 0; t < 16; t++)
        w[t] = (uint32_t)block[4 * t] << 24 | (uint32_t)block[4 * t + 1] << 16 |
               (uint32_t)block[4 * t + 2] << 8 | block[4 * t + 3];
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = ROTR(w[t - 15], 7) ^ ROTR(w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 = ROTR(w[t - 2], 17) ^ ROTR(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (int t = 0; t < 64; t++) {
        uint32_t t1 = k + (ROTR(e, 6) ^ ROTR(e, 11) ^ ROTR(e, 25)) + ((e & f) ^ (~e & g)) + K[t] + w[t];
        uint32_t t2 = (ROTR(a, 2) ^ ROTR(a, 13) ^ ROTR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        k = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += k;
}

/* Fill the first n bytes of the buffer and hash them into `digest` (n <= MAX_BYTES). */
__attribute__((noinline))
void hash_buffer(uint32_t n)
{
    static const uint32_t initial[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                        0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    uint8_t tail[128] = {0};
    uint32_t whole = n & ~63u, rest = n - whole, tail_len = rest < 56 ? 64 : 128;
    for (uint32_t i = 0; i < n; i++)
        buffer[i] = (uint8_t)(i * 131u + 7u);
    for (int i = 0; i < 8; i++)
        digest[i] = initial[i];
    for (uint32_t off = 0; off < whole; off += 64)
        compress(digest, buffer + off);
    for (uint32_t i = 0; i < rest; i++)
        tail[i] = buffer[whole + i];
    tail[rest] = 0x80;
    uint64_t bits = (uint64_t)n * 8;
    for (int i = 0; i < 8; i++)
        tail[tail_len - 1 - i] = (uint8_t)(bits >> (8 * i));
    for (uint32_t off = 0; off < tail_len; off += 64)
        compress(digest, tail + off);
}

int main(int argc, char **argv)
{
    uint32_t n = 1u << 20;
    if (argc > 1)
        n = (uint32_t)strtoul(argv[1], NULL, 10);
    if (n > MAX_BYTES)
        n = MAX_BYTES;
    hash_buffer(n);
    printf("sha256(%u) = ", n);
    for (int i = 0; i < 8; i++)
        printf("%08x", digest[i]);
    printf("\n");
    return 0;
}
