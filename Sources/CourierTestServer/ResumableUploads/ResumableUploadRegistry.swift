import CourierDigest
import NIOConcurrencyHelpers
import NIOCore

/// The uploads of `/files/`, shared by every connection of one server: each upload's length,
/// offset and running SHA-256 (the bytes themselves are not kept, so any size fits; an upload
/// created with `hash=0` keeps no digest, for the benchmarks' timed runs, where hashing would
/// cost the 2-core machine more than sending), and the faults asked for when it was created.
final class ResumableUploadRegistry: Sendable {
    /// The faults an upload was created with (query items of the creation URL).
    struct Faults {
        /// Cut a request that carries data after this many of its body bytes.
        var cutAfter: Int?
        /// How many requests to cut (default 1).
        var cutsLeft = 1
        /// How a cut ends the connection.
        var ending: ConnectionEnding = .close
        /// Answer the next append with this status once, before reading its body.
        var failOnce: Int?
        /// Make the upload expire (410) at its first cut.
        var expiresAtCut = false
        /// Never answer an append once its body is in (until the client goes, or 30 s).
        var holdsAnswer = false
        /// Report an offset this much too low once, in the first offset retrieval after a cut.
        var lie: Int64?
        /// The draft's `max-append-size`, announced in `Upload-Limit`; a longer append is a 413.
        var appendLimit: Int64?
    }

    struct Upload {
        let id: String
        let isDraft: Bool
        let length: Int64
        let metadata: String?
        var offset: Int64 = 0
        var hasher = SHA256()
        /// Whether `hasher` takes the bytes in (not for `hash=0`).
        let hashes: Bool
        var isComplete = false
        var isExpired = false
        var faults: Faults
        var appends = 0
        var cuts = 0
    }

    private struct Guarded {
        var uploads: [String: Upload] = [:]
        var nextID = 1
        var creations = 0
        var bytesReceived: Int64 = 0
        var expirations = 0
    }

    private let guarded = NIOLockedValueBox(Guarded())

    /// Records a new upload and returns its id.
    func create(length: Int64, metadata: String?, isDraft: Bool, hashes: Bool = true, faults: Faults) -> String {
        guarded.withLockedValue { state in
            let id = String(state.nextID, radix: 16) + "-" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
            state.nextID += 1
            state.creations += 1
            state.uploads[id] = Upload(
                id: id, isDraft: isDraft, length: length, metadata: metadata, hashes: hashes, faults: faults)
            return id
        }
    }

    func upload(_ id: String) -> Upload? { guarded.withLockedValue { $0.uploads[id] } }

    /// Changes the upload `id` under the lock; nil when there is none.
    @discardableResult
    func update<T>(_ id: String, _ change: (inout Upload) -> T) -> T? {
        guarded.withLockedValue { state in
            guard var upload = state.uploads[id] else { return nil }
            let result = change(&upload)
            state.uploads[id] = upload
            return result
        }
    }

    /// Appends `bytes` to `id`, counting them.
    func append(_ id: String, _ bytes: ByteBuffer) {
        guarded.withLockedValue { state in
            state.bytesReceived += Int64(bytes.readableBytes)
            // In place, not copied out of the dictionary and back for every chunk.
            guard state.uploads[id] != nil else { return }
            if state.uploads[id]?.hashes == true {
                bytes.withUnsafeReadableBytes { state.uploads[id]?.hasher.update(bufferPointer: $0) }
            }
            state.uploads[id]?.offset += Int64(bytes.readableBytes)
        }
    }

    /// Marks `id` expired; the server's first expiry is the only one that `expire=1` asks for.
    func expire(_ id: String) {
        guarded.withLockedValue { state in
            guard var upload = state.uploads[id] else { return }
            upload.isExpired = true
            state.uploads[id] = upload
            state.expirations += 1
        }
    }

    /// Whether any upload has expired yet.
    var hasExpired: Bool { guarded.withLockedValue { $0.expirations > 0 } }

    func remove(_ id: String) { guarded.withLockedValue { _ = $0.uploads.removeValue(forKey: id) } }

    /// Uploads created since the server started, and body bytes received for them in all.
    var totals: (creations: Int, bytesReceived: Int64) {
        guarded.withLockedValue { ($0.creations, $0.bytesReceived) }
    }
}
