#ifndef C_COURIER_SHA256_H
#define C_COURIER_SHA256_H

#include <stddef.h>
#include <stdint.h>

/// A SHA-256 computation in progress (FIPS 180-4). Plain data: copy it to fork a computation.
typedef struct {
    uint32_t state[8];
    uint64_t length;
    uint8_t pending[64];
    size_t pendingCount;
} courier_sha256_context;

/// Starts a computation.
void courier_sha256_init(courier_sha256_context *context);

/// Adds `count` bytes; `bytes` may be NULL when `count` is 0.
void courier_sha256_update(courier_sha256_context *context, const void *bytes, size_t count);

/// Pads, writes the 32-byte digest to `digest`, and leaves the context spent.
void courier_sha256_final(courier_sha256_context *context, uint8_t digest[32]);

/// Whether the CPU has the SHA instructions this file uses (x86-64 SHA-NI); when it does, blocks
/// go through them unless `courier_sha256_force_portable` says otherwise.
int courier_sha256_cpu_has_instructions(void);

/// For tests: 1 to force the portable code even where SHA instructions exist, 0 to allow them.
void courier_sha256_force_portable(int portable);

#endif
