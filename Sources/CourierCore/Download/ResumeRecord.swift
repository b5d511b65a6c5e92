import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The record kept beside a partial download so that another process (after a crash, a kill, a
/// reboot) can continue it with `Range` and `If-Range`, as `curl -C -` and `wget -c` do: where the
/// bytes came from and the validators (see ``ResumeData/init(partialFile:)``).
///
/// A record rather than an extended attribute: user xattrs are missing on tmpfs before Linux
/// 6.6, on many network and FAT file systems, and are dropped by `cp` and `rsync` without `-X`,
/// while a record works wherever the partial file does and a user can see and delete it. The
/// partial file's own length is the count of bytes kept, so nothing is updated while bytes
/// arrive and a process killed at any moment leaves a consistent pair.
///
/// It lives at `.NAME.courier-resume` beside the partial file `NAME`: a hidden name that a
/// user does not type by accident and that no other download's file takes (an earlier
/// version used `NAME.courier`, which `-o data` would have taken from a user's
/// `data.courier`; such old records are ignored). It is created private (0600) and holds the
/// URL without its query, fragment or user-info, since a query often carries a token and a
/// validator needs neither; a later request is matched to it by scheme, host, port and path
/// (``sameResource(_:_:)``), and the validator in `If-Range` makes the server start over when
/// another query names another representation. A file at that path that does not parse as a
/// record is never replaced or removed.
struct ResumeRecord: Codable, Sendable, Hashable {
    /// The value of ``format`` in every record: what tells a record from a user's file.
    static let currentFormat = "courier-resume/1"
    /// The format of a split download's record (``missing`` set): versions that know only
    /// ``currentFormat`` ignore it, since its partial file has holes and its length says nothing.
    static let splitFormat = "courier-resume/2"
    /// Records are a few hundred bytes; anything larger is not one.
    private static let maximumSize = 64 << 10

    /// Always ``currentFormat``.
    var format: String
    /// The URL the bytes came from, without query, fragment or user-info.
    var url: URL
    /// The response's `ETag`.
    var entityTag: String?
    /// The response's `Last-Modified`.
    var lastModified: String?
    /// A split download's complete length (see `SegmentedDownload`).
    var length: Int64?
    /// A split download's byte ranges not yet in the partial file; nil for a plain download,
    /// whose partial file's length is what it has.
    var missing: [Range<Int64>]?

    /// A record of `url` (redacted here) and the validators; nil when `url` has no host.
    init?(url: URL, entityTag: String?, lastModified: String?) {
        guard let redacted = Self.redacted(url) else { return nil }
        self.format = Self.currentFormat
        self.url = redacted
        self.entityTag = entityTag
        self.lastModified = lastModified
    }

    /// A record of the validators of `head`, from `url`; nil when it has none or `url` has no host.
    init?(from head: ResponseHead, url: URL) {
        let entityTag = head.value(forHTTPHeaderField: "ETag")
        let lastModified = head.value(forHTTPHeaderField: "Last-Modified")
        guard entityTag != nil || lastModified != nil else { return nil }
        self.init(url: url, entityTag: entityTag, lastModified: lastModified)
    }

    /// `.NAME.courier-resume` beside `file`; a name too long for that (file names are at most
    /// 255 bytes) is shortened and a hash of the whole name added, so two long names do not share one.
    static func location(for file: URL) -> URL {
        let name = file.lastPathComponent
        var stem = name
        if name.utf8.count > 200 {
            var prefix = Substring(name)
            while prefix.utf8.count > 160 { prefix = prefix.dropLast() }
            stem = "\(prefix)-\(String(fnv1a(name), radix: 16))"
        }
        return file.deletingLastPathComponent().appendingPathComponent(".\(stem).courier-resume")
    }

    /// The record at `location`, or nil when there is none, or what is there is not a regular
    /// file holding a record of this format.
    static func read(at location: URL) -> ResumeRecord? {
        var info = stat()
        guard lstat(location.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG,
            info.st_size <= maximumSize,
            let data = FileManager.default.contents(atPath: location.path),
            let record = try? JSONDecoder().decode(ResumeRecord.self, from: data),
            record.format == currentFormat || (record.format == splitFormat && record.missing != nil)
        else { return nil }
        return record
    }

    /// Writes the record to `location`, atomically (a private temporary file renamed over it).
    /// - Throws: ``CourierError`` `.downloadFailed` when it cannot be written, or when something
    ///   that is not a record is at `location` (it is left as it was).
    func write(to location: URL) throws {
        var info = stat()
        if lstat(location.path, &info) == 0, Self.read(at: location) == nil {
            throw CourierError(
                .downloadFailed,
                "\(location.path) exists and is not a Courier resume record; it was left as it was",
                offendingInput: location.path)
        }
        let staged = URL(fileURLWithPath: location.path + ".\(UUID().uuidString.prefix(8)).tmp")
        do {
            let data = try JSONEncoder().encode(self)
            // O_EXCL: never write through a file or link that someone else put at this name.
            let descriptor = open(staged.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { throw Self.posixError() }
            let written = data.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
            let closed = close(descriptor)
            guard written == data.count, closed == 0 else { throw Self.posixError() }
            guard rename(staged.path, location.path) == 0 else { throw Self.posixError() }
        } catch {
            unlink(staged.path)
            throw CourierError(
                .downloadFailed, "cannot write the resume record \(location.path)", offendingInput: location.path,
                underlyingError: error)
        }
    }

    /// Removes the record at `location`, only if it is one.
    static func remove(at location: URL) {
        if read(at: location) != nil { unlink(location.path) }
    }

    /// `url` without query, fragment, user or password; nil when it has no host.
    static func redacted(_ url: URL) -> URL? {
        guard var parts = URLComponents(url: url, resolvingAgainstBaseURL: true), parts.host != nil else {
            return nil
        }
        parts.query = nil
        parts.fragment = nil
        parts.user = nil
        parts.password = nil
        return parts.url
    }

    /// Whether `a` and `b` have the same scheme, host, port (the scheme's default when absent)
    /// and path; queries, fragments and user-info are not compared.
    static func sameResource(_ a: URL, _ b: URL) -> Bool {
        guard let first = URLComponents(url: a, resolvingAgainstBaseURL: true)?.percentEncodedPath,
            let second = URLComponents(url: b, resolvingAgainstBaseURL: true)?.percentEncodedPath
        else { return false }
        return RedirectPolicy.sameOrigin(a, b) && (first.isEmpty ? "/" : first) == (second.isEmpty ? "/" : second)
    }

    private static func posixError() -> POSIXError {
        POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }

    /// A stable 64-bit FNV-1a hash (Swift's `hashValue` changes from one process to the next).
    private static func fnv1a(_ text: String) -> UInt64 {
        text.utf8.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }
}
