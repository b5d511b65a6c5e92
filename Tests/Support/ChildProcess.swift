import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process started with `posix_spawn` itself: the part of Foundation's `Process` that
/// the tests use, under the same names, so a test reads as it would with `Process`.
///
/// Why not `Process`: on Linux, swift-corelibs-foundation's `Process.run()` (Swift 6.3.1 here;
/// fixed upstream by its pull request 5472) lists `/proc/self/fd` copying each `dirent` whole,
/// 280 bytes, where glibc gives records of about 24. When the process has about 1,350
/// descriptors open, the last record sits at the end of glibc's buffer and the copy runs into
/// an unmapped page. The parallel suite has 1,400–1,500 open at its peak (hundreds of test
/// servers at once), and the whole test process died with SIGSEGV inside `Process.run()`.
///
/// The child gets the three standard descriptors it is given (a `FileHandle`, a `Pipe`, or
/// nil for the test process's own) and none of the others, its own process group (as
/// `Process` does, so a terminal's Ctrl-C does not reach it), and is reaped by a thread of its
/// own, which calls ``terminationHandler``.
package final class ChildProcess: @unchecked Sendable {
    /// How the process ended; Foundation's values.
    package typealias TerminationReason = Process.TerminationReason

    package var executableURL: URL?
    package var arguments: [String] = []
    /// The environment; nil passes the test process's own.
    package var environment: [String: String]?
    package var currentDirectoryURL: URL?
    /// A `FileHandle` or a `Pipe`; nil inherits the test process's.
    package var standardInput: Any?
    package var standardOutput: Any?
    package var standardError: Any?
    /// Called once, on the reaping thread, after the process has ended.
    package var terminationHandler: (@Sendable (ChildProcess) -> Void)?

    private let condition = NSCondition()
    private var pid: pid_t = 0
    /// The raw `waitpid` status once the process has ended.
    private var waitStatus: Int32?

    package init() {}

    /// The child's process ID; 0 before ``run()``.
    package var processIdentifier: Int32 {
        condition.lock()
        defer { condition.unlock() }
        return pid
    }

    /// True from ``run()`` until the process has ended and been reaped.
    package var isRunning: Bool {
        condition.lock()
        defer { condition.unlock() }
        return pid != 0 && waitStatus == nil
    }

    /// The exit code, or the signal's number for a process a signal ended (as `Process` says it).
    package var terminationStatus: Int32 {
        guard let status = endedStatus() else { return 0 }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : signal
    }

    /// Whether the process exited or a signal ended it.
    package var terminationReason: TerminationReason {
        guard let status = endedStatus() else { return .exit }
        return status & 0x7f == 0 ? .exit : .uncaughtSignal
    }

    /// Starts the process.
    /// - Throws: `POSIXError` when it cannot be started (no such executable, say).
    package func run() throws {
        guard let executable = executableURL?.path else { throw POSIXError(.ENOENT) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var flags = Int32(POSIX_SPAWN_SETPGROUP)
        #if canImport(Darwin)
            flags |= Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
        #endif
        posix_spawnattr_setflags(&attributes, Int16(flags))
        posix_spawnattr_setpgroup(&attributes, 0)

        for (target, stream) in [(0, standardInput), (1, standardOutput), (2, standardError)] {
            if let descriptor = Self.childDescriptor(of: stream, reading: target == 0) {
                posix_spawn_file_actions_adddup2(&actions, descriptor, Int32(target))
            }
        }
        if let closeFrom = Self.addCloseFrom {
            _ = closeFrom(&actions, 3)
        }
        if let directory = currentDirectoryURL?.path {
            guard let addChdir = Self.addChdir else { throw POSIXError(.ENOSYS) }
            let result = directory.withCString { addChdir(&actions, $0) }
            guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EINVAL) }
        }

        let argv = ([executable] + arguments).map { strdup($0) }
        defer { for argument in argv { free(argument) } }
        let environmentLines = environment.map { values in values.map { key, value in strdup("\(key)=\(value)") } }
        defer { for line in environmentLines ?? [] { free(line) } }

        var child: pid_t = 0
        let result: Int32 = (argv + [nil]).withUnsafeBufferPointer { arguments in
            guard let argumentList = arguments.baseAddress else { return EINVAL }
            guard let environmentLines else {
                return posix_spawn(&child, executable, &actions, &attributes, argumentList, environ)
            }
            return (environmentLines + [nil]).withUnsafeBufferPointer { lines in
                guard let lineList = lines.baseAddress else { return EINVAL }
                return posix_spawn(&child, executable, &actions, &attributes, argumentList, lineList)
            }
        }
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EINVAL) }

        // The child has its copies; the parent's ends of the pipes stay open for the test.
        if let pipe = standardInput as? Pipe { try? pipe.fileHandleForReading.close() }
        if let pipe = standardOutput as? Pipe { try? pipe.fileHandleForWriting.close() }
        if let pipe = standardError as? Pipe { try? pipe.fileHandleForWriting.close() }

        let spawned = child
        condition.lock()
        pid = spawned
        condition.unlock()
        let handler = terminationHandler
        Thread.detachNewThread { [self] in
            var status: Int32 = 0
            while waitpid(spawned, &status, 0) < 0 && errno == EINTR {}
            condition.lock()
            waitStatus = status
            condition.broadcast()
            condition.unlock()
            handler?(self)
        }
    }

    /// Blocks until the process has ended.
    package func waitUntilExit() {
        condition.lock()
        defer { condition.unlock() }
        guard pid != 0 else { return }
        while waitStatus == nil { condition.wait() }
    }

    /// Sends SIGTERM.
    package func terminate() { send(signal: SIGTERM) }

    /// Sends SIGINT.
    package func interrupt() { send(signal: SIGINT) }

    private func send(signal number: Int32) {
        condition.lock()
        defer { condition.unlock() }
        guard pid != 0, waitStatus == nil else { return }
        kill(pid, number)
    }

    private func endedStatus() -> Int32? {
        condition.lock()
        defer { condition.unlock() }
        return waitStatus
    }

    /// The descriptor the child gets for one standard stream; nil to inherit the parent's.
    private static func childDescriptor(of stream: Any?, reading: Bool) -> Int32? {
        switch stream {
        case let handle as FileHandle: return handle.fileDescriptor
        case let pipe as Pipe:
            return reading ? pipe.fileHandleForReading.fileDescriptor : pipe.fileHandleForWriting.fileDescriptor
        default: return nil
        }
    }

    // glibc has both since 2.34 and 2.29, but Swift's Glibc module does not export them.
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private typealias AddChdir =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    private static let addCloseFrom: AddCloseFrom? = symbol("posix_spawn_file_actions_addclosefrom_np")
    private static let addChdir: AddChdir? = symbol("posix_spawn_file_actions_addchdir_np")

    private static func symbol<Function>(_ name: String) -> Function? {
        guard let address = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
        return unsafeBitCast(address, to: Function.self)
    }
}
