import Foundation
import NIOConcurrencyHelpers

/// Keeps the URL of each unfinished upload under its file's fingerprint, so that the same
/// upload started again (by a new process, after a crash or a Ctrl-C) appends to the upload the
/// server already holds instead of creating a new one. An upload removes its entry when it
/// completes, and when the server no longer knows it.
public protocol ResumableUploadStore: Sendable {
    /// The upload URL kept for `fingerprint`, or nil.
    /// - Throws: the store's error when it cannot be read.
    func uploadURL(for fingerprint: ResumableUploadFingerprint) async throws -> URL?
    /// Keeps `uploadURL` for `fingerprint`, replacing what was kept.
    /// - Throws: the store's error when it cannot be written.
    func save(_ uploadURL: URL, for fingerprint: ResumableUploadFingerprint) async throws
    /// Forgets `fingerprint`; nothing when it is unknown.
    /// - Throws: the store's error when it cannot be written.
    func remove(_ fingerprint: ResumableUploadFingerprint) async throws
}

/// A store that lives as long as the value: uploads resume within the process only.
public final class InMemoryResumableUploadStore: ResumableUploadStore {
    private let entries = NIOLockedValueBox<[ResumableUploadFingerprint: URL]>([:])

    /// An empty store.
    public init() {}

    /// The URL kept for `fingerprint`, or nil. Never throws.
    public func uploadURL(for fingerprint: ResumableUploadFingerprint) async throws -> URL? {
        entries.withLockedValue { $0[fingerprint] }
    }

    /// Keeps `uploadURL`. Never throws.
    public func save(_ uploadURL: URL, for fingerprint: ResumableUploadFingerprint) async throws {
        entries.withLockedValue { $0[fingerprint] = uploadURL }
    }

    /// Forgets `fingerprint`. Never throws.
    public func remove(_ fingerprint: ResumableUploadFingerprint) async throws {
        entries.withLockedValue { _ = $0.removeValue(forKey: fingerprint) }
    }

    /// How many uploads the store holds.
    public var count: Int { entries.withLockedValue { $0.count } }
}

/// A store of one small JSON file per upload in a directory (made 0700 when missing; the files
/// 0600, since an upload URL is often all it takes to append to or delete an upload).
/// ``standard(environment:)`` is the CLI's: `$XDG_STATE_HOME/courier/uploads`, by default
/// `~/.local/state/courier/uploads`.
public struct FileResumableUploadStore: ResumableUploadStore {
    /// The directory the entries live in.
    public let directory: URL

    private struct Entry: Codable {
        var fingerprint: ResumableUploadFingerprint
        var uploadURL: String
    }

    /// A store in `directory`, made on the first save.
    public init(directory: URL) {
        self.directory = directory
    }

    /// The store under `$XDG_STATE_HOME/courier/uploads` (a relative or empty value is ignored,
    /// as the XDG specification says), else `~/.local/state/courier/uploads`.
    public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment)
        -> FileResumableUploadStore
    {
        let base: URL
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            base = URL(fileURLWithPath: state, isDirectory: true)
        } else {
            let home =
                environment["HOME"].map { URL(fileURLWithPath: $0, isDirectory: true) }
                ?? FileManager.default.homeDirectoryForCurrentUser
            base = home.appendingPathComponent(".local/state", isDirectory: true)
        }
        return FileResumableUploadStore(
            directory: base.appendingPathComponent("courier/uploads", isDirectory: true))
    }

    private func file(for fingerprint: ResumableUploadFingerprint) -> URL {
        directory.appendingPathComponent(fingerprint.key + ".json")
    }

    /// The URL kept for `fingerprint`; nil when there is none, or when the entry is for another
    /// fingerprint or does not parse (then it is as good as absent, and the next save replaces it).
    /// - Throws: ``CourierError`` `.resumableUploadStoreFailed` when the entry exists but cannot be read.
    public func uploadURL(for fingerprint: ResumableUploadFingerprint) async throws -> URL? {
        let path = file(for: fingerprint)
        guard FileManager.default.fileExists(atPath: path.path) else { return nil }
        let data: Data
        do {
            data = try Data(contentsOf: path)
        } catch {
            throw CourierError(
                .resumableUploadStoreFailed, "cannot read \(path.path): \(error)", offendingInput: path.path,
                underlyingError: error)
        }
        guard let entry = try? JSONDecoder().decode(Entry.self, from: data), entry.fingerprint == fingerprint
        else { return nil }
        return URL(string: entry.uploadURL)
    }

    /// Writes the entry (0600, replaced atomically), making the directory (0700) when missing.
    /// - Throws: ``CourierError`` `.resumableUploadStoreFailed` quoting the path.
    public func save(_ uploadURL: URL, for fingerprint: ResumableUploadFingerprint) async throws {
        let path = file(for: fingerprint)
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let data = try JSONEncoder().encode(Entry(fingerprint: fingerprint, uploadURL: uploadURL.absoluteString))
            let temporary = directory.appendingPathComponent(".\(fingerprint.key).\(UInt32.random(in: 0...UInt32.max))")
            guard
                FileManager.default.createFile(
                    atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600])
            else {
                throw CocoaError(.fileWriteUnknown)
            }
            guard rename(temporary.path, path.path) == 0 else {
                let code = errno
                unlink(temporary.path)
                throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
            }
        } catch {
            throw CourierError(
                .resumableUploadStoreFailed, "cannot write \(path.path): \(error)", offendingInput: path.path,
                underlyingError: error)
        }
    }

    /// Deletes the entry, if any.
    /// - Throws: ``CourierError`` `.resumableUploadStoreFailed` when it exists and cannot be deleted.
    public func remove(_ fingerprint: ResumableUploadFingerprint) async throws {
        let path = file(for: fingerprint)
        guard unlink(path.path) == 0 || errno == ENOENT else {
            let code = errno
            throw CourierError(
                .resumableUploadStoreFailed, "cannot remove \(path.path): \(String(cString: strerror(code)))",
                offendingInput: path.path, underlyingError: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO))
        }
    }
}
