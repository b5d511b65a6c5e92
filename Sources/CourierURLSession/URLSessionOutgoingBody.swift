import Courier
import Foundation
import NIOCore
import NIOFoundationCompat

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How a ``Courier/RequestBody`` goes out on a URLSession task.
///
/// FoundationNetworking frames a body correctly only when it knows the length up front, that is
/// for `Data` and for a whole file (`uploadTask(with:fromFile:)`): it sends a body stream chunked
/// whatever the request says, together with the request's own `Content-Length` when there is one,
/// which servers reject (RFC 9112 §6.3); and it takes a stream's `hasBytesAvailable == false` as
/// the end of the body, so a producer slower than the network has its body cut short. A stream
/// that instead waits in `read` until its producer catches up works, but it waits on the work
/// queue that every URLSession of the process shares (a fresh session's `dataTask(with:)` was seen
/// blocked behind it), so one slow producer stalls all URLSession traffic, and deadlocks it when
/// the producer needs a thread of Swift's cooperative pool that a URLSession call is holding.
///
/// So every body goes out with its length: as `Data` when it is in memory or small, straight
/// from its file when it is one whole file, and otherwise from a temporary copy written first
/// (a body of unknown length included: it is read to its end before the request goes out).
enum URLSessionOutgoingBody {
    /// No body at all.
    case none
    /// Bytes in memory, sent with `Content-Length`.
    case data(Data)
    /// A whole file, sent with `Content-Length`; deleted after the exchange when `isTemporary`.
    case file(URL, isTemporary: Bool)

    /// The way `request`'s body goes out.
    /// - Throws: ``Courier/CourierError`` `.unsupportedBody` for a GET with a body on Linux
    ///   (FoundationNetworking refuses one); the body's own error (`.bodyNotReplayable`,
    ///   `.invalidFile`, `.bodyLengthMismatch`); `.fileWriteFailed` when a temporary copy cannot
    ///   be written; `.cancelled` when the task is cancelled while a copy is being written.
    static func prepare(
        _ request: Request, inMemoryLimit: Int, temporaryDirectory: URL
    ) async throws -> URLSessionOutgoingBody {
        let body = request.body
        if body.isEmpty {
            switch request.method {
            case .post, .put, .patch: return .data(Data())
            default: return .none
            }
        }
        #if canImport(FoundationNetworking)
            if request.method == .get {
                throw CourierError(
                    .unsupportedBody,
                    "URLSession on Linux (FoundationNetworking) refuses a GET with a body; use AsyncHTTPClientTransport to send one",
                    offendingInput: request.url.absoluteString)
            }
        #endif
        if let bytes = body.bufferedBytes { return .data(Data(bytes.readableBytesView)) }
        if let segments = body.segments, segments.count == 1, case .file(let path, 0, let length) = segments[0],
            let size = fileSize(path), size == length
        {
            return .file(URL(fileURLWithPath: path), isTemporary: false)
        }
        if let length = body.contentLength, length <= Int64(inMemoryLimit) {
            return .data(try await collect(body.makeChunks(), expected: Int(length)))
        }
        return .file(try await spool(body.makeChunks(), into: temporaryDirectory), isTemporary: true)
    }

    private static func fileSize(_ path: String) -> Int64? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let size = attributes[.size] as? NSNumber
        else { return nil }
        return size.int64Value
    }

    private static func collect(_ chunks: BodyChunks, expected: Int) async throws -> Data {
        var data = Data()
        data.reserveCapacity(expected)
        for try await chunk in chunks {
            try Task.checkCancellation()
            data.append(contentsOf: chunk.readableBytesView)
        }
        return data
    }

    /// Writes the body to a new file in `directory` and returns its URL; the file is removed
    /// again when writing fails.
    private static func spool(_ chunks: BodyChunks, into directory: URL) async throws -> URL {
        let url = directory.appendingPathComponent("courier-urlsession-body-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CourierError(
                .fileWriteFailed, "cannot create a temporary copy of the request body at \(url.path)",
                offendingInput: url.path)
        }
        do {
            let handle = try FileHandle(forWritingTo: url)
            defer { try? handle.close() }
            for try await chunk in chunks {
                if Task.isCancelled {
                    throw CourierError(.cancelled, "the request was cancelled while its body was being prepared")
                }
                try handle.write(contentsOf: chunk.readableBytesView)
            }
            return url
        } catch let error as CourierError {
            try? FileManager.default.removeItem(at: url)
            throw error
        } catch {
            try? FileManager.default.removeItem(at: url)
            throw CourierError(
                .fileWriteFailed, "cannot write a temporary copy of the request body to \(url.path): \(error)",
                offendingInput: url.path, underlyingError: error)
        }
    }
}
