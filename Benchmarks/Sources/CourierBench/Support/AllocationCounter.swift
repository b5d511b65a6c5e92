#if canImport(Glibc)
    import Glibc
#endif

/// Heap allocations of this process so far, when bench.py preloaded malloc-count/malloc_count.c
/// (LD_PRELOAD); nil when it did not, and the driver then shows no allocation column.
enum AllocationCounter {
    private typealias Getter = @convention(c) () -> UInt64

    private static let getter: Getter? = {
        #if canImport(Glibc)
            guard let process = dlopen(nil, RTLD_NOW), let symbol = dlsym(process, "courier_bench_allocations") else {
                return nil
            }
            return unsafeBitCast(symbol, to: Getter.self)
        #else
            return nil
        #endif
    }()

    static func current() -> UInt64? { getter?() }
}
