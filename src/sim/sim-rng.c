/*
 * sim-rng.c — the simulator's only source of randomness: xoshiro256**
 * seeded through splitmix64 (Blackman and Vigna). Every stream is seeded by
 * the caller, so runs are reproducible bit for bit; nothing here reads a
 * clock or the environment.
 */
#include "sim/sim-internal.h"

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void corun__rng_seed(struct corun__rng *r, uint64_t seed)
{
    uint64_t x = seed;

    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t corun__rng_next(struct corun__rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;

    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double corun__rng_unit(struct corun__rng *r)
{
    /* 53 random bits: exactly representable, the same on every machine. */
    return (double)(corun__rng_next(r) >> 11) * 0x1.0p-53;
}

unsigned corun__rng_below(struct corun__rng *r, unsigned n)
{
    /* Multiply-shift: bias below 2^-32 for the n we use, and portable. */
    return (unsigned)(((corun__rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

uint64_t corun__seed_mix(uint64_t a, uint64_t b)
{
    uint64_t x = a ^ (b * 0xd1342543de82ef95ull);

    return splitmix64(&x);
}
