import Courier
import CourierDigest
import CourierTestServer
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import Testing

@testable import CourierCore

/// The process's resident memory now, from /proc (Linux); nil elsewhere.
func residentBytes() -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

@Suite("Session: stream(_:), its adapters and the reconnecting event source", .timeLimit(.minutes(3)))
struct StreamTests {
    /// A server and a manager on a transport of its own (so connection counts are this test's).
    static func withStreaming<R>(_ body: (TestServer, SessionManager) async throws -> R) async throws -> R {
        let transport = AsyncHTTPClientTransport()
        let server = try await TestServer.start()
        let manager = SessionManager(transport: transport)
        do {
            let result = try await body(server, manager)
            try await transport.shutdown()
            try await server.shutdown()
            return result
        } catch {
            try? await transport.shutdown()
            try? await server.shutdown()
            throw error
        }
    }

    @Test("events from /sse, split a byte per chunk, with the head first")
    func serverSentEvents() async throws {
        try await Self.withStreaming { server, manager in
            let response = try await manager.stream(
                Request(url: server.url("/sse?count=3&event=tick&split=byte&retry=40")))
            #expect(response.head.statusCode == 200)
            #expect(response.head.mimeType == "text/event-stream")
            var events: [ServerSentEvent] = []
            for try await event in response.serverSentEvents() { events.append(event) }
            #expect(events == (1...3).map { ServerSentEvent(type: "tick", data: "event \($0)", lastEventID: "\($0)") })
        }
    }

    @Test("NDJSON through jsonLines(of:), and a broken line named by number")
    func ndjson() async throws {
        struct Item: Decodable, Equatable { let id: Int; let name: String }
        try await Self.withStreaming { server, manager in
            var items: [Item] = []
            for try await item in try await manager.stream(Request(url: server.url("/ndjson?count=4&crlf=1")))
                .jsonLines(of: Item.self)
            {
                items.append(item)
            }
            #expect(items == (1...4).map { Item(id: $0, name: "item \($0)") })

            let broken = try await manager.stream(Request(url: server.url("/ndjson?count=4&invalid_at=3")))
            let error = await #expect(throws: CourierError.self) {
                for try await _ in broken.jsonLines(of: Item.self) {}
            }
            #expect(error?.code == .invalidJSONLine)
            #expect(error?.message.contains("line 3") == true)
        }
    }

    @Test("lines(), after a redirect, with cookies applied as for any task")
    func linesAfterRedirect() async throws {
        try await Self.withStreaming { server, manager in
            _ = try await manager.data(for: Request(url: server.url("/cookies/set?flavour=oat")))
            let target = "/ndjson?count=2".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let response = try await manager.stream(Request(url: server.url("/redirect-to?url=\(target)")))
            #expect(response.head.url.path == "/ndjson")
            var lines: [String] = []
            for try await line in response.lines() { lines.append(line) }
            #expect(lines == ["{\"id\":1,\"name\":\"item 1\"}", "{\"id\":2,\"name\":\"item 2\"}"])
            #expect(server.stats.lastRequestHead?.value("Cookie") == "flavour=oat")
        }
    }

    @Test("any status comes back; validate() rejects it; a second iterator is an error")
    func validation() async throws {
        try await Self.withStreaming { server, manager in
            let missing = try await manager.stream(Request(url: server.url("/status/404")))
            #expect(missing.head.statusCode == 404)
            let error = #expect(throws: CourierError.self) { try missing.validate() }
            #expect(error?.code == .unacceptableStatusCode)
            let json = try await manager.stream(Request(url: server.url("/json")))
            let typeError = #expect(throws: CourierError.self) {
                try json.validate(contentTypes: ["text/event-stream"])
            }
            #expect(typeError?.code == .unacceptableContentType)
            for try await _ in json.body {}
            var second = json.body.makeAsyncIterator()
            let again = await #expect(throws: CourierError.self) { _ = try await second.next() }
            #expect(again?.code == .responseBodyAlreadyConsumed)
        }
    }

    @Test("gzip decoded while streaming; a bomb fails the stream with a typed error")
    func decompressionWhileStreaming() async throws {
        try await Self.withStreaming { server, manager in
            var body = Data()
            for try await chunk in try await manager.stream(Request(url: server.url("/gzip"))).body {
                body.append(contentsOf: chunk.readableBytesView)
            }
            #expect(String(decoding: body, as: UTF8.self).contains("\"gzipped\""))
            // Past a ratio-free size lowered from 1 GiB to 1 MiB, so that the test stays small.
            var configuration = AsyncHTTPClientTransport.Configuration()
            configuration.decompressionRatioFreeSize = 1 << 20
            let transport = AsyncHTTPClientTransport(configuration: configuration)
            let bombs = SessionManager(transport: transport)
            let bomb = try await bombs.stream(Request(url: server.url("/gzip-bomb?size=67108864")))
            let error = await #expect(throws: CourierError.self) {
                for try await _ in bomb.body {}
            }
            #expect(error?.code == .decompressionLimitExceeded)
            try await transport.shutdown()
        }
    }

    @Test("1 GiB read through stream(_:) in constant memory, every byte checked")
    func oneGibibyte() async throws {
        let length = 1 << 30
        try await Self.withStreaming { server, manager in
            let response = try await manager.stream(
                Request(url: server.url("/stream-bytes/\(length)?seed=5&chunk_size=65536")))
            let baseline = residentBytes()
            var peak = baseline ?? 0
            var received = 0
            var hash = SHA256()
            var chunks = 0
            for try await chunk in response.body {
                chunk.withUnsafeReadableBytes { hash.update(bufferPointer: $0) }
                received += chunk.readableBytes
                chunks += 1
                if chunks % 256 == 0, let now = residentBytes() { peak = max(peak, now) }
            }
            #expect(received == length)
            var expected = SHA256()
            let piece = 1 << 20
            for offset in stride(from: 0, to: length, by: piece) {
                expected.update(data: TestServer.expectedBytes(count: piece, seed: 5, offset: offset))
            }
            #expect(hash.finalize() == expected.finalize())
            if let baseline {
                // The body is 1 GiB; holding even a quarter of it would show here.
                #expect(peak - baseline < 256 << 20, "resident memory grew by \((peak - baseline) >> 20) MiB")
            }
        }
    }

    @Test("dropping a stream mid-body, or cancelling its reader, leaves no connection busy")
    func cancellationMidStream() async throws {
        try await Self.withStreaming { server, manager in
            let url = server.url("/stream-bytes/\(1 << 30)")
            do {
                let response = try await manager.stream(Request(url: url))
                var read = 0
                for try await chunk in response.body {
                    read += chunk.readableBytes
                    if read > 1 << 20 { break }
                }
            }
            let afterDrop = try await server.stats(when: { $0.connectionsOpen == 0 })
            #expect(afterDrop.connectionsOpen == 0)
            #expect(try await manager.data(for: Request(url: server.url("/get"))).response.statusCode == 200)

            let reader = Task {
                let response = try await manager.stream(Request(url: url))
                var read = 0
                for try await chunk in response.body {
                    read += chunk.readableBytes
                    if read > 1 << 20 { withUnsafeCurrentTask { $0?.cancel() } }
                }
                return read
            }
            let error = await #expect(throws: CourierError.self) { _ = try await reader.value }
            #expect(error?.code == .cancelled)
            let afterCancel = try await server.stats(when: { $0.connectionsOpen <= 1 })
            #expect(afterCancel.connectionsOpen <= 1)  // at most the idle keep-alive one from /get
            #expect(try await manager.data(for: Request(url: server.url("/get"))).response.statusCode == 200)
        }
    }

    @Test("the event source reconnects after drops, waits retry, sends Last-Event-ID, stops on 204")
    func eventSourceReconnects() async throws {
        try await Self.withStreaming { server, manager in
            var options = ServerSentEventSource.Options()
            options.reconnectionTime = .seconds(10)  // the stream's retry: 20 (ms) must win
            options.maximumReconnectionsWithoutEvent = 5
            let waits = NIOLockedValueBox<[Duration]>([])
            options.sleeper = { duration in waits.withLockedValue { $0.append(duration) } }
            let source = manager.eventSource(
                for: Request(url: server.url("/sse?count=6&drop_after=2&retry=20")), options: options)
            var events: [ServerSentEvent] = []
            var iterator = source.makeAsyncIterator()
            while let event = try await iterator.next() { events.append(event) }
            #expect(iterator.reconnectionTime == 20)
            #expect(iterator.lastEventID == "6")
            #expect(events.map(\.data) == (1...6).map { "event \($0)" })
            #expect(events.map(\.lastEventID) == (1...6).map { "\($0)" })
            let heads = server.stats.recentRequestHeads.filter { $0.uri.hasPrefix("/sse") }
            #expect(heads.map { $0.value("Last-Event-ID") } == [nil, "2", "4", "6"])
            #expect(waits.withLockedValue { $0 } == [.milliseconds(20), .milliseconds(20), .milliseconds(20)])
            #expect(
                heads.allSatisfy {
                    $0.value("Accept") == "text/event-stream" && $0.value("Cache-Control") == "no-cache"
                })
        }
    }

    @Test("the event source fails on a response that is not an event stream, and ends on 204")
    func eventSourceStops() async throws {
        try await Self.withStreaming { server, manager in
            let error = await #expect(throws: CourierError.self) {
                for try await _ in manager.eventSource(for: Request(url: server.url("/json"))) {}
            }
            #expect(error?.code == .unacceptableContentType)
            let statusError = await #expect(throws: CourierError.self) {
                for try await _ in manager.eventSource(for: Request(url: server.url("/status/500"))) {}
            }
            #expect(statusError?.code == .unacceptableStatusCode)
            var count = 0
            for try await _ in manager.eventSource(for: Request(url: server.url("/status/204"))) { count += 1 }
            #expect(count == 0)
        }
    }
}
