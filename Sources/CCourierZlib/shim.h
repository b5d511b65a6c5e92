#ifndef C_COURIER_ZLIB_H
#define C_COURIER_ZLIB_H

#include <zlib.h>

// inflateInit2 is a macro (it passes zlib's version and the stream's size along), which Swift
// cannot call; this is the same call as a function.
static inline int CCourierZlib_inflateInit2(z_streamp stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}

#endif
