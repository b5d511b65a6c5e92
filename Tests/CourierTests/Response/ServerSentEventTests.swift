import Courier
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import Testing

/// One event stream and what the WHATWG HTML standard (§9.2.5–§9.2.6) makes of it.
struct SSEVector: Sendable, CustomTestStringConvertible {
    let name: String
    let stream: [UInt8]
    let events: [ServerSentEvent]
    /// The parser's last event ID once the stream has ended.
    var lastEventID = ""
    /// The parser's reconnection time once the stream has ended.
    var reconnectionTime: Int?
    /// Where a known parser (mattt/EventSource 1.1.1) departs from the standard on this stream.
    var eventSourceDeviation: String?

    init(
        _ name: String, _ text: String, _ events: [ServerSentEvent], lastEventID: String = "",
        reconnectionTime: Int? = nil, eventSourceDeviation: String? = nil
    ) {
        self.init(
            name, bytes: Array(text.utf8), events, lastEventID: lastEventID, reconnectionTime: reconnectionTime,
            eventSourceDeviation: eventSourceDeviation)
    }

    init(
        _ name: String, bytes: [UInt8], _ events: [ServerSentEvent], lastEventID: String = "",
        reconnectionTime: Int? = nil, eventSourceDeviation: String? = nil
    ) {
        self.name = name
        self.stream = bytes
        self.events = events
        self.lastEventID = lastEventID
        self.reconnectionTime = reconnectionTime
        self.eventSourceDeviation = eventSourceDeviation
    }

    var testDescription: String { name }
}

private func event(_ data: String, type: String = "message", id: String = "", retry: Int? = nil) -> ServerSentEvent {
    ServerSentEvent(type: type, data: data, lastEventID: id, retry: retry)
}

/// The standard's own examples (§9.2.6, §9.2.7) and one vector per rule of the algorithm.
let sseVectors: [SSEVector] = [
    SSEVector(
        "§9.2.1 three messages, one on two lines",
        "data: This is the first message.\n\ndata: This is the second message, it\ndata: has two lines.\n\ndata: This is the third message.\n\n",
        [
            event("This is the first message."), event("This is the second message, it\nhas two lines."),
            event("This is the third message."),
        ]),
    SSEVector(
        "§9.2.1 event types", "event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\nevent: add\ndata: 113411\n\n",
        [event("73857293", type: "add"), event("2153", type: "remove"), event("113411", type: "add")]),
    SSEVector(
        "§9.2.6 comment, ids, id without a value resets, unterminated last event dropped",
        ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n",
        [event("first event", id: "1"), event("second event")],
        eventSourceDeviation: "dispatches the unterminated last event at the end of the stream"),
    SSEVector(
        "§9.2.6 empty data, a lone newline, unterminated empty data",
        "data\n\ndata\ndata\n\ndata:",
        [event(""), event("\n")],
        eventSourceDeviation:
            "joins data lines only after a non-empty one, so two empty data lines give \"\", not \"\\n\""),
    SSEVector(
        "§9.2.6 one space after the colon is dropped, so these two are the same",
        "data:test\n\ndata: test\n\n", [event("test"), event("test")]),
    SSEVector("only one leading space is dropped", "data:  two\n\n", [event(" two")]),
    SSEVector("a leading BOM is dropped", bytes: [0xEF, 0xBB, 0xBF] + Array("data: a\n\n".utf8), [event("a")]),
    SSEVector(
        "only the first BOM is dropped: the second starts a field name",
        bytes: [0xEF, 0xBB, 0xBF, 0xEF, 0xBB, 0xBF] + Array("data: a\n\ndata: b\n\n".utf8), [event("b")]),
    SSEVector(
        "a BOM after the start of the stream is part of the line",
        bytes: Array("data: a\n".utf8) + [0xEF, 0xBB, 0xBF] + Array("data: b\n\n".utf8), [event("a")],
        eventSourceDeviation: "drops a BOM at the start of every line, so it reads \"a\\nb\""),
    SSEVector(
        "bytes that only start like a BOM are kept",
        bytes: [0xEF, 0xBB] + Array("x\ndata: a\n\n".utf8), [event("a")]),
    SSEVector("CR line ends", "data: a\rdata: b\r\rdata: c\r\r", [event("a\nb"), event("c")]),
    SSEVector("CR LF line ends", "data: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n", [event("a\nb"), event("c")]),
    SSEVector("mixed line ends", "data: a\r\ndata: b\rdata: c\n\r\n", [event("a\nb\nc")]),
    SSEVector("LF CR is two line ends", "data: a\n\rdata: b\n\n", [event("a"), event("b")]),
    SSEVector("comments are ignored", ":comment\ndata: x\n: another one\n:\n\n", [event("x")]),
    SSEVector("a comment block dispatches nothing", ":\n\n: keep-alive\n\n", []),
    SSEVector("a field without a colon has an empty value", "data\n\n", [event("")]),
    SSEVector(
        "an event field without a value means message", "event\ndata: x\n\nevent:\ndata: y\n\n",
        [event("x"), event("y")]),
    SSEVector(
        "the type applies to one block", "event: a\ndata: 1\n\ndata: 2\n\n", [event("1", type: "a"), event("2")]),
    SSEVector("the last event field of a block wins", "event: a\nevent: b\ndata: 1\n\n", [event("1", type: "b")]),
    SSEVector("a colon in the value is kept", "data: a:b: c\n\n", [event("a:b: c")]),
    SSEVector("field names are case-sensitive", "Data: x\nDATA: y\n\n", []),
    SSEVector("unknown fields are ignored", "foo: bar\ndata: x\nx-data: y\n\n", [event("x")]),
    SSEVector(
        "an id containing NUL is ignored", "id: 1\ndata: a\n\nid: 2\u{0}x\ndata: b\n\n",
        [event("a", id: "1"), event("b", id: "1")], lastEventID: "1"),
    SSEVector(
        "the last event ID persists across events", "id: 1\ndata: a\n\ndata: b\n\nid: 2\ndata: c\n\n",
        [event("a", id: "1"), event("b", id: "1"), event("c", id: "2")], lastEventID: "2"),
    SSEVector(
        "an empty id field resets the last event ID", "id: 1\ndata: a\n\nid:\ndata: b\n\n",
        [event("a", id: "1"), event("b")]),
    SSEVector(
        "an id keeps spaces after the first", "id:  5 \ndata: a\n\n", [event("a", id: " 5 ")], lastEventID: " 5 "),
    SSEVector(
        "a block without data dispatches nothing but sets the last event ID", "id: 7\n\ndata: x\n\n",
        [event("x", id: "7")], lastEventID: "7",
        eventSourceDeviation: "dispatches an event with empty data for the block that has only an id"),
    SSEVector(
        "an event field alone dispatches nothing", "event: ping\n\ndata: x\n\n", [event("x")],
        eventSourceDeviation: "dispatches an event with empty data for the block that has only an event type"),
    SSEVector(
        "an id set in an unterminated block is not the last event ID", "id: 1\ndata: a\n\nid: 2\ndata: b\n",
        [event("a", id: "1")], lastEventID: "1",
        eventSourceDeviation: "dispatches the unterminated last event at the end of the stream"),
    SSEVector(
        "retry of ASCII digits", "retry: 1500\ndata: x\n\ndata: y\n\n", [event("x", retry: 1500), event("y")],
        reconnectionTime: 1500),
    SSEVector(
        "retry of zero", "retry: 0\ndata: x\n\n", [event("x", retry: 0)], reconnectionTime: 0,
        eventSourceDeviation: "ignores retry values that are not greater than zero"),
    SSEVector(
        "retry with a sign is ignored", "retry: +5\ndata: x\n\nretry: -5\ndata: y\n\n", [event("x"), event("y")],
        eventSourceDeviation: "reads retry with Int(_:), which accepts a leading +"),
    SSEVector(
        "retry that is not all digits is ignored",
        "retry: 15x\ndata: a\n\nretry:  5\ndata: b\n\nretry\ndata: c\n\nretry: 1.5\ndata: d\n\n",
        [event("a"), event("b"), event("c"), event("d")]),
    SSEVector(
        "retry in a block without data sets the reconnection time only", "retry: 250\n\ndata: x\n\n", [event("x")],
        reconnectionTime: 250),
    SSEVector(
        "multi-byte UTF-8", "event: ünïcode\ndata: héllo ✓ 😀\nid: ✓\n\n",
        [event("héllo ✓ 😀", type: "ünïcode", id: "✓")], lastEventID: "✓"),
    SSEVector(
        "invalid UTF-8 becomes U+FFFD", bytes: Array("data: a".utf8) + [0xFF, 0xC3] + Array("\n\n".utf8),
        [event("a\u{FFFD}\u{FFFD}")]),
    SSEVector(
        "an unterminated event is not dispatched", "data: a\n\ndata: b\n", [event("a")],
        eventSourceDeviation: "dispatches the unterminated last event at the end of the stream"),
    SSEVector(
        "an unterminated line is not dispatched", "data: a", [],
        eventSourceDeviation: "dispatches the unterminated last event at the end of the stream"),
    SSEVector("an empty stream", "", []),
    SSEVector("blank lines alone", "\n\n\r\n\r\r", []),
    SSEVector("a stream ending in CR dispatches", "data: a\r\r", [event("a")]),
]

@Suite("Server-sent events: WHATWG HTML §9.2 parsing")
struct ServerSentEventTests {
    /// Parses `chunks` in order, then ends the stream.
    static func parse(_ chunks: [ArraySlice<UInt8>]) throws -> (
        events: [ServerSentEvent], parser: ServerSentEventParser
    ) {
        var parser = ServerSentEventParser()
        var events: [ServerSentEvent] = []
        for chunk in chunks {
            try parser.parse(ByteBuffer(bytes: chunk)) { events.append($0) }
        }
        parser.finish()
        return (events, parser)
    }

    static func check(_ vector: SSEVector, _ chunks: [ArraySlice<UInt8>], split: String) throws {
        let (events, parser) = try parse(chunks)
        #expect(events == vector.events, "split \(split)")
        #expect(parser.lastEventID == vector.lastEventID, "split \(split)")
        #expect(parser.reconnectionTime == vector.reconnectionTime, "split \(split)")
    }

    @Test("whole stream in one chunk", arguments: sseVectors)
    func wholeStream(_ vector: SSEVector) throws {
        try Self.check(vector, [vector.stream[...]], split: "none")
    }

    @Test("split at every byte boundary", arguments: sseVectors)
    func everySplitPoint(_ vector: SSEVector) throws {
        let bytes = vector.stream
        for point in 0...bytes.count {
            try Self.check(vector, [bytes[..<point], bytes[point...]], split: "at \(point)")
        }
        // Two split points, with an empty chunk where they meet.
        for first in 0...bytes.count {
            for second in first...bytes.count {
                try Self.check(
                    vector, [bytes[..<first], bytes[first..<second], bytes[second...]], split: "at \(first), \(second)")
            }
        }
    }

    @Test("one byte per chunk", arguments: sseVectors)
    func oneBytePerChunk(_ vector: SSEVector) throws {
        try Self.check(vector, vector.stream.indices.map { vector.stream[$0...$0] }, split: "every byte")
    }

    @Test("nextEvent(from:) stops just past the blank line")
    func nextEventStopsAtDispatch() throws {
        var parser = ServerSentEventParser()
        var chunk = ByteBuffer(string: "data: a\n\ndata: b\n\ndata: c")
        #expect(try parser.nextEvent(from: &chunk) == event("a"))
        #expect(chunk.readableBytes == "data: b\n\ndata: c".utf8.count)
        #expect(try parser.nextEvent(from: &chunk) == event("b"))
        #expect(try parser.nextEvent(from: &chunk) == nil)
        #expect(chunk.readableBytes == 0)
        var rest = ByteBuffer(string: "\n\n")
        #expect(try parser.nextEvent(from: &rest) == event("c"))
    }

    @Test("a seeded last event ID carries over to events without an id")
    func seededLastEventID() throws {
        var parser = ServerSentEventParser(lastEventID: "41")
        var events: [ServerSentEvent] = []
        try parser.parse(ByteBuffer(string: "data: a\n\nid: 42\ndata: b\n\n")) { events.append($0) }
        #expect(events == [event("a", id: "41"), event("b", id: "42")])
    }

    @Test("an event past the limit is a typed error, whether split or not")
    func eventTooLarge() throws {
        let line = "data: " + String(repeating: "x", count: 100) + "\n"
        for chunked in [false, true] {
            var parser = ServerSentEventParser(maximumEventLength: 64)
            let error = #expect(throws: CourierError.self) {
                if chunked {
                    for byte in line.utf8 { try parser.parse(ByteBuffer(bytes: [byte])) { _ in } }
                } else {
                    try parser.parse(ByteBuffer(string: line)) { _ in }
                }
            }
            #expect(error?.code == .serverSentEventTooLarge)
        }
        // Many data lines that each fit still add up past the limit.
        var parser = ServerSentEventParser(maximumEventLength: 64)
        let error = #expect(throws: CourierError.self) {
            try parser.parse(ByteBuffer(string: String(repeating: "data: 0123456789\n", count: 10))) { _ in }
        }
        #expect(error?.code == .serverSentEventTooLarge)
    }

    @Test("ServerSentEvent defaults to the message type")
    func defaults() {
        let value = ServerSentEvent(data: "x")
        #expect(value.type == "message" && value.lastEventID == "" && value.retry == nil)
    }
}

// MARK: - A long realistic stream

@Suite("Server-sent events: a long realistic stream")
struct ServerSentEventCorpusTests {
    /// A stream like an LLM API's: JSON data, ids, comments as keep-alives, CR LF line ends.
    static func largeCorpus() -> (bytes: [UInt8], count: Int) {
        var text = ": stream start\r\n\r\n"
        for index in 0..<300 {
            if index % 7 == 0 { text += ": keep-alive\r\n\r\n" }
            if index % 3 == 0 { text += "event: delta\r\n" }
            text += "id: \(index)\r\n"
            text += "data: {\"index\": \(index), \"text\": \"tök \(index) ✓\"}\r\n"
            if index % 5 == 0 { text += "data: second line \(index)\r\n" }
            text += "\r\n"
        }
        return (Array(text.utf8), 300)
    }

    @Test("the same events in any chunking")
    func largeCorpusInAnyChunking() throws {
        let (bytes, count) = Self.largeCorpus()
        let courier = try ServerSentEventTests.parse([bytes[...]]).events
        #expect(courier.count == count)
        #expect(courier[3].type == "delta" && courier[3].lastEventID == "3")
        #expect(courier[5].data == "{\"index\": 5, \"text\": \"tök 5 ✓\"}\nsecond line 5")
        for size in [1, 2, 3, 7, 64, 1000] {
            let chunks = stride(from: 0, to: bytes.count, by: size).map { bytes[$0..<min($0 + size, bytes.count)] }
            #expect(try ServerSentEventTests.parse(chunks).events == courier, "chunks of \(size)")
        }
    }
}

// MARK: - Async sequence adapters

/// A sequence of chunks that counts how many the consumer has pulled.
struct CountingChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let chunks: [ByteBuffer]
    let pulled = NIOLockedValueBox(0)

    init(_ chunks: [String]) { self.chunks = chunks.map { ByteBuffer(string: $0) } }

    func makeAsyncIterator() -> Iterator { Iterator(chunks: chunks, pulled: pulled) }

    struct Iterator: AsyncIteratorProtocol {
        let chunks: [ByteBuffer]
        let pulled: NIOLockedValueBox<Int>
        var index = 0

        mutating func next() async throws -> ByteBuffer? {
            guard index < chunks.count else { return nil }
            defer { index += 1 }
            pulled.withLockedValue { $0 += 1 }
            return chunks[index]
        }
    }
}

@Suite("Streaming adapters: lines(), serverSentEvents(), jsonLines(of:)")
struct StreamingAdapterTests {
    @Test("serverSentEvents() pulls one chunk at a time")
    func serverSentEventsArePulled() async throws {
        let source = CountingChunks(["data: a\n\nda", "ta: b\n", "\ndata: c\n\n", "data: d\n\n"])
        var iterator = source.serverSentEvents().makeAsyncIterator()
        #expect(try await iterator.next() == event("a"))
        #expect(source.pulled.withLockedValue { $0 } == 1)
        #expect(try await iterator.next() == event("b"))
        #expect(source.pulled.withLockedValue { $0 } == 3)
        #expect(try await iterator.next() == event("c"))
        #expect(try await iterator.next() == event("d"))
        #expect(try await iterator.next() == nil)
        #expect(try await iterator.next() == nil)
    }

    @Test("serverSentEvents() exposes the reconnection state and drops an unterminated event")
    func reconnectionState() async throws {
        let source = CountingChunks(["retry: 20\nid: 9\n\n", "data: x\n\n", "id: 10\ndata: lost"])
        var iterator = source.serverSentEvents().makeAsyncIterator()
        #expect(try await iterator.next() == event("x", id: "9"))
        #expect(try await iterator.next() == nil)
        #expect(iterator.lastEventID == "9")
        #expect(iterator.reconnectionTime == 20)
    }

    @Test("lines() splits at CR, LF and CR LF across chunks, and keeps a last line without an end")
    func lines() async throws {
        let source = CountingChunks(["one\r", "\ntwo\rthree\n\nfo", "ur ✓", "\r", "", "\nfive"])
        var lines: [String] = []
        for try await line in source.lines() { lines.append(line) }
        #expect(lines == ["one", "two", "three", "", "four ✓", "five"])
    }

    @Test("lines() pulls one chunk at a time")
    func linesArePulled() async throws {
        let source = CountingChunks(["a\nb\n", "c\n"])
        var iterator = source.lines().makeAsyncIterator()
        #expect(try await iterator.next() == "a")
        #expect(try await iterator.next() == "b")
        #expect(source.pulled.withLockedValue { $0 } == 1)
    }

    @Test("lines() throws lineTooLong past its limit")
    func lineTooLong() async throws {
        let source = CountingChunks([
            "short\n", String(repeating: "x", count: 40), String(repeating: "y", count: 40), "\n",
        ])
        var seen: [String] = []
        let error = await #expect(throws: CourierError.self) {
            for try await line in source.lines(maximumLineLength: 64) { seen.append(line) }
        }
        #expect(error?.code == .lineTooLong)
        #expect(seen == ["short"])
    }

    struct Item: Decodable, Equatable { let id: Int; let name: String }

    @Test("jsonLines(of:) decodes NDJSON split anywhere, skipping blank lines, CR LF allowed")
    func jsonLines() async throws {
        let source = CountingChunks([
            "{\"id\":1,\"name\":\"a\"}\n{\"id\":", "2,\"name\":\"b\\r\"}\r\n\n  \n", "{\"id\":3,\"name\":\"c\"}",
        ])
        var items: [Item] = []
        for try await item in source.jsonLines(of: Item.self) { items.append(item) }
        #expect(items == [Item(id: 1, name: "a"), Item(id: 2, name: "b\r"), Item(id: 3, name: "c")])
    }

    @Test("jsonLines(of:) names the line that does not decode")
    func jsonLinesError() async throws {
        let source = CountingChunks(["{\"id\":1,\"name\":\"a\"}\n\n{\"id\":\"two\"}\n{\"id\":3,\"name\":\"c\"}\n"])
        var items: [Item] = []
        let error = await #expect(throws: CourierError.self) {
            for try await item in source.jsonLines(of: Item.self) { items.append(item) }
        }
        #expect(error?.code == .invalidJSONLine)
        #expect(error?.message.contains("line 3") == true)
        #expect(error?.offendingInput == "{\"id\":\"two\"}")
        #expect(items == [Item(id: 1, name: "a")])
    }
}
