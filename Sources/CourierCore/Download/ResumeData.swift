import Foundation

/// What is needed to continue a cancelled download: the URL, the bytes already on disk,
/// the validator (ETag or Last-Modified) and the partial file.
///
/// Resuming sends `Range: bytes=N-` with `If-Range: <validator>`. A `206` whose
/// `Content-Range` starts at N is appended to the partial file; a `200` (the server ignored the
/// range, or the resource changed) starts the file over. Resume data exists only when the
/// server sent a validator, since without one a range could splice two versions together, and
/// when the transport did not decode the body from a content coding (gzip, deflate), since a
/// range counts the coded bytes; a resumed request asks for `Accept-Encoding: identity`.
public struct ResumeData: Sendable, Hashable, Codable {
    /// The URL that produced the partial file (after redirects).
    public var url: URL
    /// Bytes in the partial file.
    public var bytesWritten: Int64
    /// The response's `ETag`, preferred as the `If-Range` validator.
    public var entityTag: String?
    /// The response's `Last-Modified`, used when there is no strong ETag.
    public var lastModified: String?
    /// The partial file's path.
    public var partialFileURL: URL
    /// For a split download (``SessionManager/download(_:to:connections:partialFile:options:progress:)``):
    /// the complete length; nil for a plain one.
    public var totalLength: Int64?
    /// For a split download: the byte ranges not yet in the partial file, which has holes
    /// there (``bytesWritten`` counts the bytes it has); nil for a plain download, whose
    /// partial file holds the first ``bytesWritten`` bytes.
    public var missingRanges: [Range<Int64>]?

    /// Makes resume data; `totalLength` and `missingRanges` only for a split download.
    public init(
        url: URL, bytesWritten: Int64, entityTag: String?, lastModified: String?, partialFileURL: URL,
        totalLength: Int64? = nil, missingRanges: [Range<Int64>]? = nil
    ) {
        self.url = url
        self.bytesWritten = bytesWritten
        self.entityTag = entityTag
        self.lastModified = lastModified
        self.partialFileURL = partialFileURL
        self.totalLength = totalLength
        self.missingRanges = missingRanges
    }

    /// The resume data as bytes (JSON), to store and pass back to ``init(data:)``.
    /// - Throws: ``CourierError`` `.invalidResumeData` if encoding fails.
    public func encoded() throws -> Data {
        do {
            return try JSONEncoder().encode(self)
        } catch {
            throw CourierError(.invalidResumeData, "cannot encode resume data", underlyingError: error)
        }
    }

    /// Decodes resume data made by ``encoded()``.
    /// - Throws: ``CourierError`` `.invalidResumeData` for bytes that are not resume data.
    public init(data: Data) throws {
        do {
            self = try JSONDecoder().decode(ResumeData.self, from: data)
        } catch {
            throw CourierError(
                .invalidResumeData, "the \(data.count) bytes given are not Courier resume data", underlyingError: error)
        }
    }

    /// The `If-Range` value: a strong ETag, else Last-Modified (RFC 9110 §13.1.5 forbids weak tags there).
    public var ifRangeValidator: String? {
        if let entityTag, !entityTag.hasPrefix("W/") { return entityTag }
        return lastModified
    }

    /// How a response to a resumed request is written.
    enum Continuation: Equatable {
        /// Append to the partial file from `bytesWritten`.
        case append
        /// Truncate the partial file and write the whole body.
        case restart
        /// The partial file already is the whole representation; the body is not written.
        case alreadyComplete
    }

    /// Decides from the response head whether the body continues the partial file.
    ///
    /// A `206` must start at `bytesWritten` (RFC 9110 §14.4); a `416` whose `Content-Range`
    /// (`bytes */N`) says the representation is exactly `bytesWritten` long means the cancel
    /// came after the last byte; any other status starts the file over.
    /// - Throws: ``CourierError`` `.invalidResumeData` when a 206 covers a different range, or a
    ///   416 says the representation has another length.
    func continuation(for response: ResponseHead) throws -> Continuation {
        let value = response.value(forHTTPHeaderField: "Content-Range")
        let contentRange = value.flatMap(ContentRange.init)
        switch response.statusCode {
        case 206:
            guard let range = contentRange?.range, range.lowerBound == bytesWritten else {
                throw CourierError(
                    .invalidResumeData,
                    "asked \(url.absoluteString) for bytes from \(bytesWritten), but the server answered Content-Range: \(value ?? "(none)")",
                    offendingInput: value ?? "(none)", response: response)
            }
            return .append
        case 416:
            guard case .unsatisfied(let length) = contentRange, length == bytesWritten else {
                throw CourierError(
                    .invalidResumeData,
                    "asked \(url.absoluteString) for bytes from \(bytesWritten), but the server refused the range (416, Content-Range: \(value ?? "(none)"))",
                    offendingInput: value ?? "(none)", response: response)
            }
            return .alreadyComplete
        default:
            return .restart
        }
    }
}
