import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A private directory for one exchange's temporary files: the session's download file
/// (its `temporaryDirectory`), the body that file becomes, and a partial download kept on an
/// interrupt. Removed when the exchange ends, and by ``InterruptWatch`` when a signal ends the
/// process at once, so no temporary file outlives the process.
struct ScratchDirectory: Sendable {
    let url: URL

    /// Makes `.courier-UUID` inside `directory` when it is given and writable, so a download
    /// is renamed into place rather than copied; otherwise inside the temporary directory.
    /// - Throws: ``CLIError`` when neither can hold it.
    static func make(near directory: URL?) throws -> ScratchDirectory {
        let name = ".courier-\(UUID().uuidString)"
        var candidates = [FileManager.default.temporaryDirectory]
        if let directory { candidates.insert(directory, at: 0) }
        var lastError: (any Error)?
        for parent in candidates {
            let url = parent.appendingPathComponent(name)
            do {
                try FileManager.default.createDirectory(
                    at: url, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
                return ScratchDirectory(url: url)
            } catch {
                lastError = error
            }
        }
        throw CLIError.failure(
            "cannot create a scratch directory: \(lastError.map { "\($0.localizedDescription)" } ?? "unknown error")")
    }

    /// Where the session moves a finished body.
    var bodyFile: URL { url.appendingPathComponent("body") }
    /// A second name for a partial download, made on an interrupt.
    var keptFile: URL { url.appendingPathComponent("kept") }

    /// Gives the file the session is writing a second name (``keptFile``) so that its bytes
    /// survive the cleanup that cancelling the session does; the session's writes until it
    /// stops land in the same file. Returns false when there is no file yet.
    @discardableResult
    func keepPartialFile() -> Bool {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: url.path) else { return false }
        // The finished body when there is one, else the session's file in progress.
        let candidates = names.filter { $0 != "kept" }.sorted { a, _ in a == "body" }
        for name in candidates {
            let source = url.appendingPathComponent(name).path
            if link(source, keptFile.path) == 0 || rename(source, keptFile.path) == 0 { return true }
        }
        return false
    }

    /// Deletes the directory and whatever is left in it.
    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
