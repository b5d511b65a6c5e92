import Foundation
import HTTPTypes
import NIOConcurrencyHelpers

/// A private HTTP cache (RFC 9111) for a ``SessionManager``: set it as
/// ``SessionManager/Configuration/cache``.
///
/// Responses to GET requests are kept in memory up to ``memoryCapacity`` bytes (least recently
/// used first out), and, when made with a directory, also on disk up to ``diskCapacity`` bytes,
/// so they outlive the process. A fresh stored response answers a request without the network;
/// a stale one is revalidated with `If-None-Match`/`If-Modified-Since`, and a `304` refreshes its
/// fields and hands the caller the stored body with status 200. Freshness comes from
/// `Cache-Control: max-age`, `Expires` and `Date`/`Age` (§4.2), with a heuristic (10% of the
/// time since `Last-Modified`, at most a day) only for responses without explicit freshness
/// whose status allows one (§4.2.2). `s-maxage` is for shared caches and not used for freshness
/// (§5.2.2.10). `no-store`, `no-cache`, `must-revalidate`, `private` and `Vary` are honoured;
/// responses to requests with `Authorization` are stored only when the response says `public`,
/// `s-maxage` or `must-revalidate` (§3.5). Only complete responses are stored: a body cut short,
/// longer or shorter than its `Content-Length`, or bigger than ``maximumEntrySize`` is not.
///
/// A cached response goes through the session as a network one does: cookies, redirects,
/// the interceptor's retrier, hooks, validation and serializers all see it. How each request
/// uses the cache is its ``Request/cachePolicy``.
///
/// Cost: a hit is a dictionary lookup under a lock and a copy-free hand-over of the stored
/// bytes; a stored response costs its body plus its fields in memory. Disk writes happen on
/// the task that received the response, once its body has ended; files are written to a
/// temporary name and renamed into place, and a file that is truncated or corrupt is removed
/// and counts as a miss. The disk keeps the latest variant of each URL, memory up to four.
public final class HTTPCache: Sendable {
    /// The most bytes kept in memory.
    public let memoryCapacity: Int
    /// The largest response stored, body and fields: an eighth of the larger capacity.
    public let maximumEntrySize: Int
    /// The clock that ages responses; tests inject a fixed one.
    let clock: @Sendable () -> Date

    private let memory: NIOLockedValueBox<CacheMemoryStore>
    private let disk: CacheDiskStore?

    /// A cache in memory only.
    /// - Parameters:
    ///   - memoryCapacity: the most bytes held (default 32 MiB); the least recently used go first.
    ///   - clock: the current time; inject a fixed one in tests.
    public init(memoryCapacity: Int = 32 << 20, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.memoryCapacity = max(0, memoryCapacity)
        self.maximumEntrySize = self.memoryCapacity / 8
        self.clock = clock
        self.memory = NIOLockedValueBox(CacheMemoryStore(capacity: self.memoryCapacity))
        self.disk = nil
    }

    /// A cache in memory and in `directory` (made if missing), which keeps responses across
    /// processes and managers: at most `memoryCapacity` bytes in memory (default 32 MiB) and
    /// `diskCapacity` bytes on disk (default 256 MiB). Two caches should not share a directory.
    /// - Parameters:
    ///   - memoryCapacity: the most bytes held in memory.
    ///   - directory: where entries are kept; made if missing.
    ///   - diskCapacity: the most bytes kept in `directory`.
    ///   - clock: the current time; inject a fixed one in tests.
    /// - Throws: ``CourierError`` `.cacheDirectoryUnusable` when the directory cannot be made or read.
    public init(
        memoryCapacity: Int = 32 << 20, directory: URL, diskCapacity: Int = 256 << 20,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        self.memoryCapacity = max(0, memoryCapacity)
        self.maximumEntrySize = max(self.memoryCapacity, diskCapacity) / 8
        self.clock = clock
        self.memory = NIOLockedValueBox(CacheMemoryStore(capacity: self.memoryCapacity))
        self.disk = try CacheDiskStore(directory: directory, capacity: diskCapacity)
    }

    /// The directory of the disk part; nil for a cache in memory only.
    public var directory: URL? { disk?.directory }
    /// The most bytes kept on disk; 0 for a cache in memory only.
    public var diskCapacity: Int { disk?.capacity ?? 0 }
    /// Bytes held in memory now.
    public var currentMemoryUsage: Int { memory.withLockedValue { $0.byteCount } }
    /// Bytes of entry files on disk now.
    public var currentDiskUsage: Int { disk?.byteCount ?? 0 }

    /// Forgets every stored response, in memory and on disk.
    public func removeAll() {
        memory.withLockedValue { $0.removeAll() }
        disk?.removeAll()
    }

    /// Forgets the stored responses for `url` (every variant), in memory and on disk.
    public func removeCachedResponses(for url: URL) {
        remove(key: CacheStorage.key(url))
    }

    // MARK: Internals

    /// The most recent stored response for `key` that `Vary` lets answer a request with
    /// `requestFields`: from memory, else from disk (then kept in memory too).
    func lookup(key: String, requestFields: HTTPFields) -> CachedResponse? {
        let variants = memory.withLockedValue { $0.variants(for: key) }
        if !variants.isEmpty {
            return variants.first { $0.matches(requestFields) }
        }
        guard let disk, let entry = disk.read(key: key) else { return nil }
        memory.withLockedValue { $0.insert(entry) }
        return entry.matches(requestFields) ? entry : nil
    }

    /// Keeps `entry` in memory and on disk.
    func store(_ entry: CachedResponse) {
        memory.withLockedValue { $0.insert(entry) }
        disk?.write(entry)
    }

    func remove(key: String) {
        memory.withLockedValue { $0.remove(key: key) }
        disk?.remove(key: key)
    }
}
