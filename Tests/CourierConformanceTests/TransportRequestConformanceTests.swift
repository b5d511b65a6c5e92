import Courier
import CourierDigest
import CourierTestServer
import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore
import Testing

/// What every transport must send and deliver: methods, header fields both ways, every body kind
/// byte for byte with its framing, empty bodies, large bodies, upload progress. Each case runs
/// against every transport; cases about the wire run against the network transports only.
@Suite("Transport conformance: requests and responses", .timeLimit(.minutes(3)))
struct TransportRequestConformanceTests {
    @Test("every method reaches the server as sent", arguments: TransportKind.allCases)
    func methods(_ kind: TransportKind) async throws {
        try await Harness.with(kind) { harness in
            for method in [HTTPMethod.get, .post, .put, .patch, .delete, .options] {
                let (head, body) = try await harness.exchange(Request(method: method, url: harness.url("/anything")))
                #expect(head.statusCode == 200)
                // The server's phrase, or (URLSession does not pass it on) the standard one; a
                // scripted reply has the phrase its script gives, none here.
                if kind != .scripted { #expect(head.status.reasonPhrase == "OK") }
                #expect(try jsonObject(body)["method"] as? String == method.rawValue)
            }
            let (head, body) = try await harness.exchange(Request(method: .head, url: harness.url("/anything")))
            #expect(head.statusCode == 200)
            #expect(body.isEmpty)
        }
    }

    @Test("header fields go out and come back as sent", arguments: TransportKind.allCases)
    func headerFields(_ kind: TransportKind) async throws {
        try await Harness.with(kind) { harness in
            var request = Request(url: harness.url("/anything"))
            try request.setValue("a value, with commas; and \"quotes\"", forHTTPHeaderField: "X-Courier-Probe")
            try request.setValue("ümlaut-free ascii", forHTTPHeaderField: "X-Second")
            try request.setValue("a=1; b=2", forHTTPHeaderField: "Cookie")
            let (_, body) = try await harness.exchange(request)
            let document = try jsonObject(body)
            #expect(header("X-Courier-Probe", in: document) == "a value, with commas; and \"quotes\"")
            #expect(header("X-Second", in: document) == "ümlaut-free ascii")
            #expect(header("Cookie", in: document) == "a=1; b=2")

            let (head, _) = try await harness.exchange(
                Request(url: harness.url("/response-headers?X-Answer=forty%20two&Content-Type=text/plain")))
            #expect(head.value(forHTTPHeaderField: "X-Answer") == "forty two")
            #expect(head.value(forHTTPHeaderField: "x-answer") == "forty two")
            #expect(head.value(forHTTPHeaderField: "Content-Type")?.hasPrefix("text/plain") == true)
        }
    }

    /// A body of every kind, with the bytes it must deliver.
    static func bodies(in directory: URL) throws -> [(name: String, body: RequestBody, bytes: Data)] {
        let bytes = pattern(count: 300_000, seed: 3)
        let file = directory.appendingPathComponent("body.bin")
        try bytes.write(to: file)
        let chunks = stride(from: 0, to: bytes.count, by: 70_000).map {
            ByteBuffer(bytes: bytes[$0..<min($0 + 70_000, bytes.count)])
        }
        var form = try MultipartFormData(boundary: "conformance-boundary")
        form.append(Data("field value".utf8), name: "field")
        try form.append(fileURL: file, name: "file", fileName: "body.bin", mimeType: "application/octet-stream")
        let formBytes = try form.encode()
        return [
            ("bytes", .data(bytes), bytes),
            ("whole file", try .file(file), bytes),
            ("file region", try .file(file, offset: 1000, length: 5000), bytes.subdata(in: 1000..<6000)),
            ("stream of known length", .stream(length: Int64(bytes.count)) { chunks.async }, bytes),
            ("stream of unknown length", .stream(length: nil) { chunks.async }, bytes),
            ("one-shot stream", .oneShotStream(length: nil, chunks.async), bytes),
            ("multipart form", .source(form), formBytes),
        ]
    }

    @Test("every body kind arrives byte for byte, framed by its length", arguments: TransportKind.allCases)
    func bodyKinds(_ kind: TransportKind) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await Harness.with(kind) { harness in
            for (name, body, bytes) in try Self.bodies(in: directory) {
                let request = Request(method: .post, url: harness.url("/upload"), body: body)
                let (head, data) = try await harness.exchange(request)
                #expect(head.statusCode == 200, "\(name)")
                let document = try jsonObject(data)
                #expect(document["bytes"] as? Int == bytes.count, "\(name)")
                #expect(document["sha256"] as? String == sha256Hex(bytes), "\(name)")
                guard kind != .scripted else { continue }
                // Framing: Content-Length when the length is known, chunked only when it is not.
                if let length = body.contentLength {
                    #expect(document["content_length"] as? String == String(length), "\(name)")
                    #expect(document["transfer_encoding"] is NSNull, "\(name)")
                } else {
                    withKnownIssue(
                        """
                        URLSessionTransport cannot stream a body of unknown length: FoundationNetworking \
                        frames a body stream with chunked and Content-Length together and ends it when \
                        hasBytesAvailable is false (FoundationNetworkingEvidenceTests), and a stream that \
                        waits instead stalls every URLSession of the process. It sends a temporary copy \
                        with Content-Length.
                        """
                    ) {
                        #expect(document["content_length"] is NSNull, "\(name)")
                        #expect(document["transfer_encoding"] as? String == "chunked", "\(name)")
                    } when: {
                        kind == .urlSession
                    }
                }
            }
        }
    }

    @Test("empty bodies: none for GET, Content-Length 0 for POST, empty responses", arguments: TransportKind.allCases)
    func emptyBodies(_ kind: TransportKind) async throws {
        try await Harness.with(kind) { harness in
            let (_, data) = try await harness.exchange(Request(method: .post, url: harness.url("/upload")))
            let document = try jsonObject(data)
            #expect(document["bytes"] as? Int == 0)
            if kind != .scripted {
                #expect(document["content_length"] as? String == "0")
                #expect(document["transfer_encoding"] is NSNull)
            }
            let (head, body) = try await harness.exchange(Request(url: harness.url("/status/204")))
            #expect(head.statusCode == 204)
            #expect(body.isEmpty)
            let (_, none) = try await harness.exchange(Request(url: harness.url("/bytes/0")))
            #expect(none.isEmpty)
        }
    }

    @Test("upload progress only moves forward and ends at the body's length", arguments: TransportKind.allCases)
    func uploadProgress(_ kind: TransportKind) async throws {
        let bytes = pattern(count: 6_000_000, seed: 9)
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("progress.bin")
        try bytes.write(to: file)
        try await Harness.with(kind) { harness in
            for body in [RequestBody.data(bytes), try .file(file)] {
                let reports = NIOLockedValueBox<[Int64]>([])
                let context = ExchangeContext(uploadProgress: { sent in reports.withLockedValue { $0.append(sent) } })
                let (_, data) = try await harness.exchange(
                    Request(method: .put, url: harness.url("/upload"), body: body), context: context)
                #expect(try jsonObject(data)["bytes"] as? Int == bytes.count)
                let values = reports.withLockedValue { $0 }
                #expect(!values.isEmpty)
                #expect(zip(values, values.dropFirst()).allSatisfy { $0 <= $1 }, "\(values)")
                #expect(values.last == Int64(bytes.count))
            }
        }
    }

    @Test(
        "large bodies stream both ways with every byte intact (64 MiB up; 256 MiB down, 16 MiB over URLSession)",
        arguments: TransportKind.network)
    func largeBodies(_ kind: TransportKind) async throws {
        try await Harness.with(kind) { harness in
            // Up: a stream of unknown length, produced on demand (never whole in memory).
            let chunk = ByteBuffer(bytes: pattern(count: 1 << 20, seed: 5))
            let count = 64
            let body = RequestBody.stream(length: nil) {
                AsyncStreamOfChunks(chunk: chunk, count: count)
            }
            var expected = SHA256()
            for _ in 0..<count { chunk.withUnsafeReadableBytes { expected.update(bufferPointer: $0) } }
            let (_, data) = try await harness.exchange(Request(method: .post, url: harness.url("/upload"), body: body))
            let document = try jsonObject(data)
            #expect(document["bytes"] as? Int == count << 20)
            #expect(document["sha256"] as? String == hex(expected.finalize()))

            // Down: hashed as it arrives. FoundationNetworking cannot pause a transfer, so what the
            // reader has not taken yet sits in memory: URLSession gets a smaller body, so that this
            // suite does not swell the memory of the test process that other suites measure.
            let length = kind.isFoundationNetworking ? 16 << 20 : 256 << 20
            let response = try await harness.transport.send(
                Request(url: harness.url("/stream-bytes/\(length)?seed=4&chunk_size=65536")), context: ExchangeContext()
            )
            var hasher = SHA256()
            var received = 0
            for try await part in response.body {
                received += part.readableBytes
                part.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
            }
            #expect(received == length)
            var reference = SHA256()
            for offset in stride(from: 0, to: length, by: 1 << 20) {
                reference.update(
                    data: TestServer.expectedBytes(count: min(1 << 20, length - offset), seed: 4, offset: offset))
            }
            #expect(hex(hasher.finalize()) == hex(reference.finalize()))
        }
    }
}

/// `count` copies of `chunk`, made as they are asked for.
struct AsyncStreamOfChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let chunk: ByteBuffer
    let count: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        let chunk: ByteBuffer
        var remaining: Int
        mutating func next() async -> ByteBuffer? {
            guard remaining > 0 else { return nil }
            remaining -= 1
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(chunk: chunk, remaining: count) }
}

/// An array's elements as an async sequence.
extension Array where Element == ByteBuffer {
    var async: AsyncStreamOfArray { AsyncStreamOfArray(elements: self) }
}

struct AsyncStreamOfArray: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let elements: [ByteBuffer]

    struct AsyncIterator: AsyncIteratorProtocol {
        var rest: ArraySlice<ByteBuffer>
        mutating func next() async -> ByteBuffer? { rest.popFirst() }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(rest: elements[...]) }
}

/// Deterministic bytes that are not a short period.
func pattern(count: Int, seed: UInt8) -> Data {
    var bytes = [UInt8](repeating: 0, count: count)
    var state = UInt32(seed) &* 2_654_435_761
    for index in 0..<count {
        state = state &* 1_103_515_245 &+ 12345
        bytes[index] = UInt8(truncatingIfNeeded: state >> 16)
    }
    return Data(bytes)
}

func hex(_ digest: some Sequence<UInt8>) -> String { digest.hexString }

func sha256Hex(_ data: Data) -> String { hex(SHA256.hash(data: data)) }

func temporaryDirectory() throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "courier-conformance-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}
