import AsyncHTTPClient
import Foundation
import NIOCore

/// A reference for the upload row, not a peer: the same one-file multipart body sent by
/// AsyncHTTPClient directly, the file part as a NIO `FileRegion` (sendfile), which is the
/// ceiling a Courier upload over plain HTTP could reach on this machine.
enum RawAsyncHTTPClientUpload {
    static func run(options: Options) async throws -> Measurement {
        let base = try options.string("url")
        let path = try options.string("path")
        let fileURL = URL(fileURLWithPath: path)
        let boundary = "courier.bench.boundary.0123456789abcdef"
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            let (elapsed, outcome) = try await measureAsync { () -> (Int, HTTPClient.Response) in
                let fileSize = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
                let head = ByteBuffer(
                    string:
                        "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(fileURL.lastPathComponent)\"\r\n"
                        + "Content-Type: application/octet-stream\r\n\r\n")
                let tail = ByteBuffer(string: "\r\n--\(boundary)--\r\n")
                let length = head.readableBytes + fileSize + tail.readableBytes
                let handle = try openForSendfile(path)
                defer { close(handle) }
                let body = HTTPClient.Body.stream(contentLength: Int64(length)) { writer in
                    writer.write(.byteBuffer(head))
                        .flatMap {
                            writer.write(
                                .fileRegion(FileRegion(fileHandle: handle, readerIndex: 0, endIndex: fileSize)))
                        }
                        .flatMap { writer.write(.byteBuffer(tail)) }
                }
                let request = try HTTPClient.Request(
                    url: base + "upload", method: .POST,
                    headers: ["Content-Type": "multipart/form-data; boundary=\(boundary)"], body: body)
                return (length, try await client.execute(request: request).get())
            }
            try await client.shutdown()
            let (length, response) = outcome
            let sink = response.body.map { String(buffer: $0) } ?? ""
            return Measurement(
                seconds: elapsed, operations: 1, bytes: length, correct: response.status == .ok,
                detail: "status \(response.status.code), \(length) body bytes", extra: ["sink": sink])
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    // Opening a file blocks; a few microseconds once per run, outside any event loop.
    private static func openForSendfile(_ path: String) throws -> NIOFileHandle {
        try NIOFileHandle(_deprecatedPath: path)
    }

    private static func close(_ handle: NIOFileHandle) {
        try? handle.close()
    }
}
