#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Unbuffered writes of bytes to stdout and stderr, retrying short writes and EINTR.
///
/// Bodies go through here unchanged, so `--print=B > file` holds exactly the body bytes.
enum StandardStreams {
    /// Writes `bytes` to stdout.
    /// - Throws: ``CLIError`` when stdout is closed (a broken pipe) or fails.
    static func writeOut<Bytes: Collection>(_ bytes: Bytes) throws where Bytes.Element == UInt8 {
        try write(bytes, to: 1)
    }

    /// Writes `text` to stdout.
    static func writeOut(_ text: String) throws { try write(Array(text.utf8), to: 1) }

    /// Writes `text` to stdout, ignoring failures (help piped into `head`).
    static func writeOutIgnoringErrors(_ text: String) { try? write(Array(text.utf8), to: 1) }

    /// Points stdout at `path` (created or truncated), as `> path` would: `--output` without
    /// `--download` saves whatever would have been printed, as httpie's does.
    /// - Throws: ``CLIError`` (usage) when the file cannot be opened for writing.
    static func redirectOut(toFile path: String) throws {
        // 0666: a new file gets the umask's mode, as with the shell's `>` (0644 ignored a umask
        // of 002); an existing one is written through and keeps its own.
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else {
            throw CLIError.usage(
                "--output \"\(path)\": cannot open it for writing: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        guard dup2(descriptor, 1) >= 0 else {
            throw CLIError.usage("--output \"\(path)\": cannot write to it: \(String(cString: strerror(errno)))")
        }
    }

    /// Writes `text` to stderr, ignoring failures (there is nowhere left to report them).
    static func writeError(_ text: String) { try? write(Array(text.utf8), to: 2) }

    private static func write<Bytes: Collection>(_ bytes: Bytes, to descriptor: Int32) throws
    where Bytes.Element == UInt8 {
        let done: Bool? = try bytes.withContiguousStorageIfAvailable { buffer in
            try writeAll(UnsafeRawBufferPointer(buffer), to: descriptor)
            return true
        }
        if done == nil {
            let copy = Array(bytes)
            try copy.withUnsafeBytes { try writeAll($0, to: descriptor) }
        }
    }

    static func writeAll(_ buffer: UnsafeRawBufferPointer, to descriptor: Int32) throws {
        guard let code = DescriptorWrites.writeAll(buffer, to: descriptor) else { return }
        if code == EPIPE {
            throw CLIError.failure("output closed before everything was written (broken pipe)", .brokenPipe)
        }
        if code == EBADF, StandardDescriptors.closedAtStart.contains(descriptor) {
            throw CLIError.failure(
                "cannot write output: \(descriptor == 1 ? "stdout" : "stderr") was closed when courier started")
        }
        throw CLIError.failure("cannot write output: \(String(cString: strerror(code)))")
    }
}
