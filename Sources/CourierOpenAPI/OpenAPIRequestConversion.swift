import Courier
import Foundation
import HTTPTypes
import NIOCore
import OpenAPIRuntime

/// An OpenAPIRuntime request (head, `HTTPBody`, base URL) as a Courier ``/CourierCore/Request``.
enum OpenAPIRequestConversion {
    /// A known-length `.multiple` body up to this size is read into one buffer before sending:
    /// the same single copy as streaming it, and the transport then sends plain bytes (no
    /// stream writer) and replays them without iterating the body again.
    static let smallBodyLimit: Int64 = 16 << 10

    /// The base URL's path followed by the request's path, with the request's query.
    /// - Throws: ``/CourierCore/CourierError`` `.invalidURL` when the request has no path or the two do not
    ///   form a URL.
    static func url(for request: HTTPRequest, baseURL: URL) throws -> URL {
        let path = request.path ?? ""
        guard var joined = URLComponents(url: baseURL, resolvingAgainstBaseURL: true),
            let target = URLComponents(string: path), path.hasPrefix("/")
        else { throw invalidURL(path, baseURL: baseURL) }
        var basePath = joined.percentEncodedPath
        // "https://host/v1/" and "/users" make "/v1/users", not "/v1//users".
        if basePath.hasSuffix("/") { basePath.removeLast() }
        joined.percentEncodedPath = basePath + target.percentEncodedPath
        joined.percentEncodedQuery = target.percentEncodedQuery
        joined.fragment = nil
        guard let url = joined.url else { throw invalidURL(path, baseURL: baseURL) }
        return url
    }

    private static func invalidURL(_ path: String, baseURL: URL) -> CourierError {
        CourierError(
            .invalidURL,
            "the operation's path \(path.debugDescription) does not form a URL with the server URL \(baseURL.absoluteString)",
            offendingInput: path)
    }

    /// The body as a ``/CourierCore/RequestBody``: replayable for `.multiple`, one-shot for `.single`, with
    /// its length when known (checked as it is read).
    /// - Throws: the body's own error while a small body is read ahead (see ``smallBodyLimit``).
    static func body(_ body: HTTPBody?) async throws -> RequestBody {
        guard let body else { return .empty }
        var length: Int64?
        if case .known(let count) = body.length { length = count }
        switch body.iterationBehavior {
        case .multiple:
            if let length, length <= smallBodyLimit {
                return .byteBuffer(try await collect(body, length: length))
            }
            return .stream(length: length) { HTTPBodyChunks(body: body) }
        case .single:
            return .oneShotStream(length: length, HTTPBodyChunks(body: body))
        }
    }

    /// Reads a small body whose length is known into one buffer, checking the length.
    /// - Throws: ``/CourierCore/CourierError`` `.bodyLengthMismatch` when the body yields more or fewer bytes.
    private static func collect(_ body: HTTPBody, length: Int64) async throws -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: Int(length))
        for try await chunk in body {
            guard buffer.readableBytes + chunk.count <= length else {
                throw CourierError(
                    .bodyLengthMismatch, "the request body yielded more than its \(length) declared bytes")
            }
            buffer.writeBytes(chunk)
        }
        guard buffer.readableBytes == length else {
            throw CourierError(
                .bodyLengthMismatch, "the request body ended after \(buffer.readableBytes) of \(length) declared bytes")
        }
        return buffer
    }

    /// A duration in seconds, for ``/CourierCore/Request/timeoutInterval``.
    static func seconds(_ duration: Duration) -> TimeInterval {
        let parts = duration.components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}

/// An `HTTPBody` as the `ByteBuffer` chunks a ``/CourierCore/RequestBody`` stream yields: each chunk copied
/// once, empty chunks skipped; one iterator of the body per sequence iterator.
struct HTTPBodyChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    let body: HTTPBody

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: body.makeAsyncIterator()) }

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: HTTPBody.AsyncIterator

        mutating func next() async throws -> ByteBuffer? {
            while let chunk = try await base.next() {
                if !chunk.isEmpty { return ByteBuffer(bytes: chunk) }
            }
            return nil
        }
    }
}
