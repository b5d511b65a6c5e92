import AsyncHTTPClient
import Courier
import Crypto
import Foundation
import NIOCore

/// The streamed-response rows (issue 14): a large body read as it arrives, through Courier's
/// `SessionManager.stream(_:)` and through AsyncHTTPClient's own streaming API, each counting
/// the bytes and dropping them, as `curl -s URL > /dev/null` does. With `--sha256 1` (the
/// driver's untimed check) the body is hashed as well, and the digest reported.
enum StreamedBodies {
    /// Courier: `stream(_:)`, then the body's chunks.
    static func courier(options: Options) async throws -> Measurement {
        let url = try CourierSession.url(try options.string("url"))
        let expected = try options.int("length")
        let hashing = options.flag("sha256")
        let transport = AsyncHTTPClientTransport(configuration: try CourierSession.bodyTransportConfiguration(options))
        let manager = SessionManager(transport: transport)
        do {
            let (elapsed, outcome) = try await measureAsync { () async throws -> (Int, Int, String?) in
                let response = try await manager.stream(Request(url: url))
                var hash = hashing ? SHA256() : nil
                var received = 0
                for try await chunk in response.body {
                    received += chunk.readableBytes
                    if hash != nil { chunk.withUnsafeReadableBytes { hash?.update(bufferPointer: $0) } }
                }
                return (response.head.statusCode, received, hash.map { hex($0.finalize()) })
            }
            try await manager.shutdown()
            try await transport.shutdown()
            return measurement(elapsed, status: outcome.0, received: outcome.1, expected: expected, sha256: outcome.2)
        } catch {
            try? await manager.shutdown()
            try? await transport.shutdown()
            throw error
        }
    }

    /// The peer: AsyncHTTPClient's `execute(_:timeout:)` and its response body sequence.
    static func asyncHTTPClient(options: Options) async throws -> Measurement {
        let url = try options.string("url")
        let expected = try options.int("length")
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            let (elapsed, outcome) = try await measureAsync { () async throws -> (Int, Int) in
                let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(600))
                var received = 0
                for try await chunk in response.body { received += chunk.readableBytes }
                return (Int(response.status.code), received)
            }
            try await client.shutdown()
            return measurement(elapsed, status: outcome.0, received: outcome.1, expected: expected, sha256: nil)
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    private static func measurement(_ elapsed: Double, status: Int, received: Int, expected: Int, sha256: String?)
        -> Measurement
    {
        Measurement(
            seconds: elapsed, operations: 1, bytes: received, correct: status == 200 && received == expected,
            detail: "status \(status), \(received) of \(expected) bytes", sha256: sha256)
    }

    private static func hex(_ digest: SHA256.Digest) -> String {
        digest.map { String(format: "%02x", $0) }.joined()
    }
}

/// The event-stream parsing row: `--size` bytes of events parsed by Courier's
/// `ServerSentEventParser`, in `--chunk` byte chunks. The events are a block of about `--block`
/// bytes (made before the clock starts, and cut into chunks once) fed again and again, so that
/// the process holds a few MiB and its peak RSS shows the parser's own memory, not the corpus's.
/// The block is the one `peers/sse_parse.py` makes for its peer parser, byte for byte
/// (``SSECorpus``); both sides check the number of events and of data bytes they got.
enum SSEParse {
    static func courier(options: Options) throws -> Measurement {
        let size = try options.int("size", default: 100_000_000)
        let corpus = SSECorpus(size: try options.int("block", default: 4 << 20))
        let repeats = max(1, (size + corpus.bytes.count - 1) / corpus.bytes.count)
        let chunkSize = try options.int("chunk", default: 65_536)
        var chunks: [ByteBuffer] = []
        var offset = 0
        while offset < corpus.bytes.count {
            let end = min(offset + chunkSize, corpus.bytes.count)
            chunks.append(ByteBuffer(bytes: corpus.bytes[offset..<end]))
            offset = end
        }
        let (elapsed, outcome) = try measure { () throws -> (events: Int, dataBytes: Int, lastID: String) in
            var parser = ServerSentEventParser()
            var events = 0
            var dataBytes = 0
            for _ in 0..<repeats {
                for chunk in chunks {
                    try parser.parse(chunk) { event in
                        events += 1
                        dataBytes += event.data.utf8.count
                    }
                }
            }
            parser.finish()
            return (events, dataBytes, parser.lastEventID)
        }
        let expectedEvents = corpus.events * repeats
        let expectedData = corpus.dataBytes * repeats
        let correct =
            outcome.events == expectedEvents && outcome.dataBytes == expectedData
            && outcome.lastID == String(corpus.events)
        return Measurement(
            seconds: elapsed, operations: outcome.events, bytes: corpus.bytes.count * repeats, correct: correct,
            detail:
                "\(outcome.events) events (expected \(expectedEvents)), \(outcome.dataBytes) data bytes (expected \(expectedData)), last id \(outcome.lastID)"
        )
    }
}

/// Events in the shapes streaming APIs send: a type, an id, a JSON `data` line, and every
/// fourth event a second `data` line and a comment before it. Lines end in LF. Kept identical
/// to `make_corpus` in `peers/sse_parse.py`.
struct SSECorpus {
    var bytes: [UInt8] = []
    var events = 0
    var dataBytes = 0

    init(size: Int) {
        bytes.reserveCapacity(size + 256)
        let filler = "The quick brown fox jumps over the lazy dog; streaming tokens arrive."
        while bytes.count < size {
            events += 1
            let index = events
            var text = ""
            if index % 4 == 0 { text += ": keep-alive \(index)\n" }
            let first = "{\"index\":\(index),\"delta\":\"\(filler)\"}"
            text += "event: delta\nid: \(index)\ndata: \(first)\n"
            var data = first
            if index % 4 == 0 {
                let second = "second line of event \(index)"
                text += "data: \(second)\n"
                data += "\n" + second
            }
            text += "\n"
            bytes.append(contentsOf: text.utf8)
            dataBytes += data.utf8.count
        }
    }
}
