#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Descriptors 0, 1 and 2 when the process starts without them (`courier URL <&-`, as cron or
/// a daemon wrapper may start it).
///
/// A closed standard descriptor is a free number: the next `open`, `socket` or `eventfd` takes
/// it, and the event loop's descriptor would then be read as the body or written to as the
/// output. Each closed one is taken at start, before anything else opens a file, by
/// `/dev/null` opened read-only: reading it as stdin gives an end at once, and writing to it
/// as stdout or stderr fails with `EBADF`, which the output code reports as an ordinary write
/// error (never a signal). ``StandardInput`` sends no body when stdin was closed, as curl and
/// httpie send a GET without one.
enum StandardDescriptors {
    /// The standard descriptors that were closed at start and are held since. The first use
    /// (the first statement of `main.swift`) takes them.
    static let closedAtStart: Set<Int32> = reserveClosed()

    /// Whether the process started with stdin closed.
    static var stdinWasClosed: Bool { closedAtStart.contains(0) }

    private static func reserveClosed() -> Set<Int32> {
        var closed: Set<Int32> = []
        for descriptor: Int32 in 0...2 where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
            closed.insert(descriptor)
            reserve(descriptor)
        }
        return closed
    }

    /// Makes `descriptor` a read-only descriptor with nothing to read: `/dev/null`, or the read
    /// end of an empty pipe whose write end is closed where there is no `/dev/null` (a chroot).
    private static func reserve(_ descriptor: Int32) {
        var held = open("/dev/null", O_RDONLY)
        if held < 0 {
            var ends: [Int32] = [-1, -1]
            guard pipe(&ends) == 0 else { return }
            close(ends[1])
            held = ends[0]
        }
        // The lowest free number is taken, and the lower standard ones are open or held by now.
        if held != descriptor {
            dup2(held, descriptor)
            close(held)
        }
    }
}
