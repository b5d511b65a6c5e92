import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs the built `courier` binary as a subprocess and captures what it wrote.
struct CourierProcess {
    struct Result: Sendable {
        var status: Int32
        var stdout: Data
        var stderr: String
        var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// What a shell does before it execs `courier`: set the umask (`"077"`), and apply
    /// redirections (`"<&-"` closes stdin, `">&-"` stdout, `"2>&-"` stderr, as cron or a
    /// daemon wrapper may start it).
    struct Shell: Sendable {
        var umask: String?
        var redirections = ""
    }

    /// The `courier` executable: `$COURIER_BIN`, or the one built next to this test bundle.
    static func executable() throws -> URL {
        if let path = ProcessInfo.processInfo.environment["COURIER_BIN"] { return URL(fileURLWithPath: path) }
        var candidates: [URL] = []
        candidates.append(Bundle.main.bundleURL.appendingPathComponent("courier"))
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("courier"))
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        candidates.append(root.appendingPathComponent(".build/debug/courier"))
        candidates.append(root.appendingPathComponent(".build/release/courier"))
        let found = candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
        return try #require(found, "courier binary not found; build it first or set COURIER_BIN")
    }

    /// Runs `courier arguments`, with stdin from `stdin` (or /dev/null), in `directory`; stdin is
    /// a regular file unless `pipeStdin`, when the bytes are written into a pipe as it reads.
    /// Waits at most `limit` seconds, then kills the process and fails, so a hang cannot stall the suite.
    /// With `shell`, `/bin/sh` starts it after setting its umask and redirections.
    ///
    /// The wait happens on a thread of its own: Swift's cooperative pool has one thread per core
    /// (two here), and a test polling a subprocess on it held one of them for the whole run,
    /// starving the deadline and timeout tests running beside it in the parallel suite.
    static func run(
        _ arguments: [String], stdin: Data? = nil, pipeStdin: Bool = false, environment: [String: String] = [:],
        directory: URL? = nil, shell: Shell? = nil, limit: Double = 120
    ) async throws -> Result {
        try await offThePool {
            try runBlocking(
                arguments, stdin: stdin, pipeStdin: pipeStdin, environment: environment, directory: directory,
                shell: shell, limit: limit)
        }
    }

    /// Opens `path` for reading (a FIFO: blocks until a writer opens it) and reads to its end.
    static func readAll(_ path: String) -> Data {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return Data() }
        defer { close(descriptor) }
        var bytes = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return bytes }
            bytes.append(contentsOf: buffer[0..<count])
        }
    }

    /// Runs `work` on a new thread and waits for it without holding a cooperative thread.
    static func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Swift.Result { try work() }) }
        }
    }

    /// ``run(_:stdin:pipeStdin:environment:directory:shell:limit:)``, blocking the calling thread.
    private static func runBlocking(
        _ arguments: [String], stdin: Data?, pipeStdin: Bool, environment: [String: String],
        directory: URL?, shell: Shell?, limit: Double
    ) throws -> Result {
        let process = ChildProcess()
        process.executableURL = try executable()
        process.arguments = arguments
        if let shell, let courier = process.executableURL {
            let umask = shell.umask.map { "umask \($0); " } ?? ""
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "\(umask)exec \"$0\" \"$@\" \(shell.redirections)", courier.path] + arguments
        }
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "COURIER_FORCE_TTY")
        // The developer's own ~/.netrc must not add credentials to the tests' requests.
        env["NETRC"] = "/dev/null"
        for (key, value) in environment { env[key] = value }
        process.environment = env
        if let directory { process.currentDirectoryURL = directory }

        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("courier-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outURL = scratch.appendingPathComponent("out")
        let errURL = scratch.appendingPathComponent("err")
        let inURL = scratch.appendingPathComponent("in")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        if let stdin { try stdin.write(to: inURL) }
        let outHandle = try FileHandle(forWritingTo: outURL)
        let errHandle = try FileHandle(forWritingTo: errURL)
        let inHandle = stdin == nil ? FileHandle(forReadingAtPath: "/dev/null") : try FileHandle(forReadingFrom: inURL)
        process.standardOutput = outHandle
        process.standardError = errHandle
        let pipe = Pipe()
        process.standardInput = pipeStdin ? pipe : inHandle
        try process.run()
        if pipeStdin {
            let writer = pipe.fileHandleForWriting
            let bytes = stdin ?? Data()
            Thread.detachNewThread {
                // A broken pipe (courier exited early) must not kill the test process.
                signal(SIGPIPE, SIG_IGN)
                try? writer.write(contentsOf: bytes)
                try? writer.close()
            }
        }
        let deadline = Date().addingTimeInterval(limit)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
            Issue.record("courier \(arguments) did not finish within \(limit) s")
        }
        process.waitUntilExit()
        try outHandle.close()
        try errHandle.close()
        let result = Result(
            status: process.terminationStatus, stdout: try Data(contentsOf: outURL),
            stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
        reportSanitizerFindings(in: result.stderr, arguments: arguments)
        return result
    }

    /// Fails the test on a sanitizer report from a sanitized `courier` (`.ci/sanitizers.sh`), and
    /// copies the report to this process's standard error. The subprocess exits with the
    /// sanitizer's code, but its report went to a captured stream, and a test that expects a
    /// failing exit status would not notice it at all.
    private static func reportSanitizerFindings(in stderr: String, arguments: [String]) {
        let markers = ["WARNING: ThreadSanitizer", "ERROR: AddressSanitizer", "ERROR: LeakSanitizer"]
        guard markers.contains(where: stderr.contains) else { return }
        FileHandle.standardError.write(Data("courier \(arguments) under a sanitizer:\n\(stderr)\n".utf8))
        Issue.record("courier \(arguments) reported under a sanitizer (its report is on standard error above)")
    }

    /// Runs `body` with a fresh test server's base URL and a scratch directory, then stops the
    /// server and removes the directory, whatever happens.
    static func withServer(_ body: (_ base: String, _ directory: URL) async throws -> Void) async throws {
        let server = try await TestServer.start()
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            try await body(server.baseURL.absoluteString, directory)
            try await server.shutdown()
        } catch {
            try? await server.shutdown()
            throw error
        }
    }

    /// A character device like `/dev/null` (1, 3), made with `mknod` in `directory`; nil (the
    /// case is skipped) where the process may not make one. Never `/dev/null` itself: as root, a
    /// bug that replaced it would break the machine.
    static func makeNullDevice(in directory: URL, named name: String = "mynull") -> URL? {
        let node = directory.appendingPathComponent(name)
        guard mknod(node.path, S_IFCHR | 0o666, dev_t((1 << 8) | 3)) == 0 else {
            print("skipped: mknod needs root (\(String(cString: strerror(errno))))")
            return nil
        }
        return node
    }

    /// A fresh scratch directory for files a test creates.
    static func scratchDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
