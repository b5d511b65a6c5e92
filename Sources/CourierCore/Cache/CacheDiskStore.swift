import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The on-disk part of an ``HTTPCache``: one file per URL (its latest variant) in a directory,
/// written to a temporary file and renamed into place, so a reader sees a whole file or none.
/// A file that does not decode is removed and counts as a miss. Past the capacity, the least
/// recently used files are removed.
final class CacheDiskStore: Sendable {
    let directory: URL
    let capacity: Int
    private let index: NIOLockedValueBox<Index>

    private struct Index: Sendable {
        var files: [String: (size: Int, lastUse: Date)] = [:]
        var byteCount = 0
    }

    private static let fileExtension = "cache"
    /// A temporary file older than this was left by a process that stopped mid-write.
    private static let abandonedTemporaryAge: TimeInterval = 600

    /// Opens (making it if needed) `directory` and indexes the files already there.
    /// - Throws: ``CourierError`` `.cacheDirectoryUnusable` when it cannot be made or listed.
    init(directory: URL, capacity: Int) throws {
        self.directory = directory
        self.capacity = max(0, capacity)
        let manager = FileManager.default
        var index = Index()
        do {
            try manager.createDirectory(at: directory, withIntermediateDirectories: true)
            let names = try manager.contentsOfDirectory(atPath: directory.path)
            for name in names {
                let path = directory.appendingPathComponent(name).path
                let attributes = try? manager.attributesOfItem(atPath: path)
                let size = (attributes?[.size] as? NSNumber)?.intValue ?? 0
                let modified = attributes?[.modificationDate] as? Date ?? Date.distantPast
                if name.hasSuffix(".\(Self.fileExtension)") {
                    index.files[name] = (size, modified)
                    index.byteCount += size
                } else if name.hasPrefix(".tmp-"), Date().timeIntervalSince(modified) > Self.abandonedTemporaryAge {
                    try? manager.removeItem(atPath: path)
                }
            }
        } catch {
            throw CourierError(
                .cacheDirectoryUnusable, "the cache directory \(directory.path) cannot be made or read: \(error)",
                offendingInput: directory.path, underlyingError: error)
        }
        self.index = NIOLockedValueBox(index)
    }

    /// The stored entry for `key`, or nil: none, another key's (a hash collision), or a file
    /// that is truncated or corrupt (then removed).
    func read(key: String) -> CachedResponse? {
        let name = Self.fileName(for: key)
        let known = index.withLockedValue { index -> Bool in
            guard index.files[name] != nil else { return false }
            index.files[name]?.lastUse = Date()
            return true
        }
        guard known else { return nil }
        let url = directory.appendingPathComponent(name)
        guard let data = try? Data(contentsOf: url) else {
            forget(name)
            return nil
        }
        guard let entry = CachedResponse.decodedFromDisk(data) else {
            remove(name)
            return nil
        }
        return entry.key == key ? entry : nil
    }

    /// Writes `entry` as the file for its key: to a temporary file first, then renamed over the
    /// old one. A failure leaves the old file (or none) and is otherwise ignored: the response
    /// was delivered, only its reuse is lost.
    func write(_ entry: CachedResponse) {
        guard let data = try? entry.encodedForDisk(), data.count <= capacity else {
            remove(key: entry.key)
            return
        }
        let name = Self.fileName(for: entry.key)
        let temporary = directory.appendingPathComponent(".tmp-\(UUID().uuidString)")
        do {
            try data.write(to: temporary)
            try Self.moveAtomically(temporary, to: directory.appendingPathComponent(name))
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            return
        }
        let victims = index.withLockedValue { index -> [String] in
            if let old = index.files[name] { index.byteCount -= old.size }
            index.files[name] = (data.count, Date())
            index.byteCount += data.count
            return Self.evictions(&index, capacity: capacity, keeping: name)
        }
        for victim in victims { try? FileManager.default.removeItem(at: directory.appendingPathComponent(victim)) }
    }

    /// Removes the file for `key`, if any.
    func remove(key: String) {
        let name = Self.fileName(for: key)
        guard index.withLockedValue({ $0.files[name] != nil }) else { return }
        remove(name)
    }

    /// Removes every entry file.
    func removeAll() {
        let names = index.withLockedValue { index -> [String] in
            defer { index = Index() }
            return Array(index.files.keys)
        }
        for name in names { try? FileManager.default.removeItem(at: directory.appendingPathComponent(name)) }
    }

    /// Bytes of entry files, as indexed.
    var byteCount: Int { index.withLockedValue { $0.byteCount } }

    private func remove(_ name: String) {
        forget(name)
        try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
    }

    private func forget(_ name: String) {
        index.withLockedValue { index in
            if let old = index.files.removeValue(forKey: name) { index.byteCount -= old.size }
        }
    }

    /// The least recently used files to remove to get back to 90% of the capacity.
    private static func evictions(_ index: inout Index, capacity: Int, keeping name: String) -> [String] {
        guard index.byteCount > capacity else { return [] }
        let target = capacity - capacity / 10
        var victims: [String] = []
        for (candidate, file) in index.files.sorted(by: { $0.value.lastUse < $1.value.lastUse }) {
            guard index.byteCount > target else { break }
            if candidate == name { continue }
            index.files[candidate] = nil
            index.byteCount -= file.size
            victims.append(candidate)
        }
        return victims
    }

    /// rename(2): atomic within a file system, replacing the destination.
    private static func moveAtomically(_ source: URL, to destination: URL) throws {
        guard rename(source.path, destination.path) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: destination.path])
        }
    }

    /// A file name for `key`: its FNV-1a hash in hex. Two keys with one hash share a file; the
    /// key stored inside tells them apart.
    static func fileName(for key: String) -> String {
        let hash = CachedResponse.checksum(key.utf8)
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex + "." + fileExtension
    }
}
