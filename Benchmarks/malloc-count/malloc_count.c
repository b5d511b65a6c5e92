// Counts heap allocations of a benchmark process, loaded with LD_PRELOAD by bench.py.
// courier-bench reads the count through dlsym("courier_bench_allocations") around its measured
// section, to report allocations per operation (DESIGN.md: allocation counts gated in benchmarks).
// Forwarding to glibc's __libc_* entry points avoids dlsym(RTLD_NEXT) recursion at start-up.
#include <stdatomic.h>
#include <stddef.h>
#include <errno.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

static _Atomic unsigned long long allocations;

unsigned long long courier_bench_allocations(void) {
    return atomic_load_explicit(&allocations, memory_order_relaxed);
}

static inline void count_one(void) {
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
}

void *malloc(size_t size) { count_one(); return __libc_malloc(size); }
void *calloc(size_t count, size_t size) { count_one(); return __libc_calloc(count, size); }
void *realloc(void *pointer, size_t size) { count_one(); return __libc_realloc(pointer, size); }
void *memalign(size_t alignment, size_t size) { count_one(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { count_one(); return __libc_memalign(alignment, size); }

int posix_memalign(void **result, size_t alignment, size_t size) {
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
    count_one();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL && size != 0) return ENOMEM;
    *result = pointer;
    return 0;
}
