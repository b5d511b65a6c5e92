// SHA-256 as FIPS 180-4 defines it, for the test server's, the demo's and the tests' digests of
// bodies.
//
// Courier needs SHA-256 only to check that bytes arrived intact, so it carries this one file
// rather than swift-crypto, whose second copy of BoringSSL was compiled in every cold build and
// in each sanitizer build again (40-110 s each on the CI machine). C rather than Swift because
// the tests hash gigabytes in debug builds, where unoptimised Swift manages a few MB/s. On x86-64
// CPUs with the SHA extensions (measured on the CI machine: 1.37 GB/s unoptimised) the blocks go
// through them; elsewhere through the portable function (27 MB/s unoptimised, 140 MB/s at -O2).

#include "CCourierSHA256.h"

#include <stdatomic.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#define COURIER_SHA256_X86 1
#include <cpuid.h>
#include <immintrin.h>
#endif

// Aligned: the SHA-extension code adds them to registers straight from memory, 16 bytes at a time.
_Alignas(16) static const uint32_t roundConstants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t rotateRight(uint32_t value, unsigned bits) {
    return (value >> bits) | (value << (32 - bits));
}

static inline uint32_t loadBigEndian32(const uint8_t *bytes) {
    return ((uint32_t)bytes[0] << 24) | ((uint32_t)bytes[1] << 16) | ((uint32_t)bytes[2] << 8) | bytes[3];
}

// The portable block function touches only the context and the caller's bytes; instrumenting it
// would only make the sanitizer runs hash 10-20x slower. (The SHA-extension one is assembly, which
// the sanitizers never instrument.)
#define COURIER_NOT_SANITIZED __attribute__((no_sanitize("address", "thread")))

COURIER_NOT_SANITIZED
static void compressPortable(uint32_t state[8], const uint8_t *blocks, size_t count) {
    uint32_t schedule[64];
    for (; count > 0; count--, blocks += 64) {
        for (int t = 0; t < 16; t++) schedule[t] = loadBigEndian32(blocks + 4 * t);
        for (int t = 16; t < 64; t++) {
            uint32_t early = schedule[t - 15], late = schedule[t - 2];
            uint32_t sigma0 = rotateRight(early, 7) ^ rotateRight(early, 18) ^ (early >> 3);
            uint32_t sigma1 = rotateRight(late, 17) ^ rotateRight(late, 19) ^ (late >> 10);
            schedule[t] = schedule[t - 16] + sigma0 + schedule[t - 7] + sigma1;
        }
        uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
        uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
        for (int t = 0; t < 64; t++) {
            uint32_t sum1 = rotateRight(e, 6) ^ rotateRight(e, 11) ^ rotateRight(e, 25);
            uint32_t choice = (e & f) ^ (~e & g);
            uint32_t first = h + sum1 + choice + roundConstants[t] + schedule[t];
            uint32_t sum0 = rotateRight(a, 2) ^ rotateRight(a, 13) ^ rotateRight(a, 22);
            uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
            h = g; g = f; f = e; e = d + first;
            d = c; c = b; b = a; a = first + sum0 + majority;
        }
        state[0] += a; state[1] += b; state[2] += c; state[3] += d;
        state[4] += e; state[5] += f; state[6] += g; state[7] += h;
    }
}

#ifdef COURIER_SHA256_X86
// The SHA extensions keep the working variables in two registers, (A, B, E, F) and (C, D, G, H),
// highest lane first; each sha256rnds2 runs two rounds from the low two lanes of %xmm0, returns
// the new (A, B, E, F), and leaves the old one as the new (C, D, G, H). One block's 64 rounds are
// a single asm statement so that they run at full speed in unoptimised (debug) builds too, where
// the same code as intrinsics spills every value to the stack and runs 7x slower.
//
// Registers: %xmm1 (A, B, E, F), %xmm2 (C, D, G, H), %xmm3-%xmm6 the last 16 message words,
// %xmm7 the byte-swap mask, %xmm8 and %xmm9 the block's starting state, %xmm10 scratch.

// Four rounds on the message words in `words`, plus the round constants at byte `offset`.
#define FOUR_ROUNDS(words, offset)                                                                  \
    "movdqa " words ", %%xmm0\n\t"                                                                  \
    "paddd " #offset "(%[constants]), %%xmm0\n\t"                                                   \
    "sha256rnds2 %%xmm0, %%xmm1, %%xmm2\n\t"                                                        \
    "pshufd $0x0E, %%xmm0, %%xmm0\n\t"                                                              \
    "sha256rnds2 %%xmm0, %%xmm2, %%xmm1\n\t"

// The next four message words, W[t..t+3], replace the oldest four, W[t-16..t-13], computed from
// them, W[t-15..t-12] (`next`), W[t-7..t-4] (the end of `third` and start of `newest`) and
// W[t-2..t-1] (in `newest`); sha256msg1 and sha256msg2 do the two sigma functions.
#define NEXT_WORDS(oldest, next, third, newest)                                                     \
    "movdqa " newest ", %%xmm10\n\t"                                                                \
    "palignr $4, " third ", %%xmm10\n\t"                                                            \
    "sha256msg1 " next ", " oldest "\n\t"                                                           \
    "paddd %%xmm10, " oldest "\n\t"                                                                 \
    "sha256msg2 " newest ", " oldest "\n\t"

#define W0 "%%xmm3"
#define W1 "%%xmm4"
#define W2 "%%xmm5"
#define W3 "%%xmm6"
#define NEXT_SIXTEEN(base)                                                                          \
    NEXT_WORDS(W0, W1, W2, W3) FOUR_ROUNDS(W0, base)                                                \
    NEXT_WORDS(W1, W2, W3, W0) FOUR_ROUNDS(W1, base + 16)                                           \
    NEXT_WORDS(W2, W3, W0, W1) FOUR_ROUNDS(W2, base + 32)                                           \
    NEXT_WORDS(W3, W0, W1, W2) FOUR_ROUNDS(W3, base + 48)

__attribute__((target("sha,ssse3,sse4.1")))
static void compressWithSHAExtensions(uint32_t state[8], const uint8_t *blocks, size_t count) {
    const __m128i byteSwap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i low = _mm_loadu_si128((const __m128i *)&state[0]);   // a b c d, lane 0 first
    __m128i high = _mm_loadu_si128((const __m128i *)&state[4]);  // e f g h
    low = _mm_shuffle_epi32(low, 0xB1);                          // b a d c
    high = _mm_shuffle_epi32(high, 0x1B);                        // h g f e
    __m128i working[2] = {
        _mm_alignr_epi8(low, high, 8),     // f e b a: (A, B, E, F)
        _mm_blend_epi16(high, low, 0xF0),  // h g d c: (C, D, G, H)
    };

    for (; count > 0; count--, blocks += 64) {
        __asm__ volatile(
            "movdqu (%[working]), %%xmm1\n\t"
            "movdqu 16(%[working]), %%xmm2\n\t"
            "movdqu (%[swap]), %%xmm7\n\t"
            "movdqa %%xmm1, %%xmm8\n\t"
            "movdqa %%xmm2, %%xmm9\n\t"
            "movdqu (%[block]), %%xmm3\n\t"
            "pshufb %%xmm7, %%xmm3\n\t"
            "movdqu 16(%[block]), %%xmm4\n\t"
            "pshufb %%xmm7, %%xmm4\n\t"
            "movdqu 32(%[block]), %%xmm5\n\t"
            "pshufb %%xmm7, %%xmm5\n\t"
            "movdqu 48(%[block]), %%xmm6\n\t"
            "pshufb %%xmm7, %%xmm6\n\t"
            FOUR_ROUNDS(W0, 0) FOUR_ROUNDS(W1, 16) FOUR_ROUNDS(W2, 32) FOUR_ROUNDS(W3, 48)
            NEXT_SIXTEEN(64) NEXT_SIXTEEN(128) NEXT_SIXTEEN(192)
            "paddd %%xmm8, %%xmm1\n\t"
            "paddd %%xmm9, %%xmm2\n\t"
            "movdqu %%xmm1, (%[working])\n\t"
            "movdqu %%xmm2, 16(%[working])\n\t"
            :
            : [working] "r"(working), [swap] "r"(&byteSwap), [block] "r"(blocks), [constants] "r"(roundConstants)
            : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
              "memory");
    }

    low = _mm_shuffle_epi32(working[0], 0x1B);                                   // a b e f
    high = _mm_shuffle_epi32(working[1], 0xB1);                                  // g h c d
    _mm_storeu_si128((__m128i *)&state[0], _mm_blend_epi16(low, high, 0xF0));  // a b c d
    _mm_storeu_si128((__m128i *)&state[4], _mm_alignr_epi8(high, low, 8));     // e f g h
}

#undef NEXT_SIXTEEN
#undef W0
#undef W1
#undef W2
#undef W3
#undef NEXT_WORDS
#undef FOUR_ROUNDS

static int cpuHasSHAExtensions(void) {
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    const unsigned ssse3 = 1u << 9, sse41 = 1u << 19;
    if ((ecx & ssse3) == 0 || (ecx & sse41) == 0) return 0;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return 0;
    return (ebx & (1u << 29)) != 0;
}
#endif

// Whether the CPU has the SHA extensions: -1 not yet probed, else 0 or 1; racing first probes
// store the same value.
static _Atomic int cpuSupport = -1;
static _Atomic int portableForced = 0;

static int cpuHasInstructions(void) {
    int chosen = atomic_load_explicit(&cpuSupport, memory_order_relaxed);
    if (chosen < 0) {
#ifdef COURIER_SHA256_X86
        chosen = cpuHasSHAExtensions();
#else
        chosen = 0;
#endif
        atomic_store_explicit(&cpuSupport, chosen, memory_order_relaxed);
    }
    return chosen;
}

static void compress(uint32_t state[8], const uint8_t *blocks, size_t count) {
#ifdef COURIER_SHA256_X86
    if (cpuHasInstructions() && !atomic_load_explicit(&portableForced, memory_order_relaxed)) {
        compressWithSHAExtensions(state, blocks, count);
        return;
    }
#endif
    compressPortable(state, blocks, count);
}

int courier_sha256_cpu_has_instructions(void) { return cpuHasInstructions(); }

void courier_sha256_force_portable(int portable) {
    atomic_store_explicit(&portableForced, portable ? 1 : 0, memory_order_relaxed);
}

void courier_sha256_init(courier_sha256_context *context) {
    static const uint32_t initial[8] = {
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
    };
    memcpy(context->state, initial, sizeof initial);
    context->length = 0;
    context->pendingCount = 0;
}

void courier_sha256_update(courier_sha256_context *context, const void *bytes, size_t count) {
    if (count == 0) return;
    const uint8_t *input = bytes;
    context->length += count;
    if (context->pendingCount > 0) {
        size_t take = 64 - context->pendingCount;
        if (take > count) take = count;
        memcpy(context->pending + context->pendingCount, input, take);
        context->pendingCount += take;
        input += take;
        count -= take;
        if (context->pendingCount < 64) return;
        compress(context->state, context->pending, 1);
        context->pendingCount = 0;
    }
    size_t whole = count / 64;
    if (whole > 0) {
        compress(context->state, input, whole);
        input += whole * 64;
        count -= whole * 64;
    }
    if (count > 0) {
        memcpy(context->pending, input, count);
        context->pendingCount = count;
    }
}

void courier_sha256_final(courier_sha256_context *context, uint8_t digest[32]) {
    uint64_t bits = context->length * 8;
    uint8_t padding[72] = {0x80};
    // One 0x80 byte, zeros up to 56 mod 64, then the length in bits, big-endian.
    size_t zeros = (context->pendingCount < 56 ? 56 : 120) - context->pendingCount;
    for (int i = 0; i < 8; i++) padding[zeros + i] = (uint8_t)(bits >> (56 - 8 * i));
    courier_sha256_update(context, padding, zeros + 8);
    for (int i = 0; i < 8; i++) {
        digest[4 * i] = (uint8_t)(context->state[i] >> 24);
        digest[4 * i + 1] = (uint8_t)(context->state[i] >> 16);
        digest[4 * i + 2] = (uint8_t)(context->state[i] >> 8);
        digest[4 * i + 3] = (uint8_t)context->state[i];
    }
}
