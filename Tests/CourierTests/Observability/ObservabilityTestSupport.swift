import Courier
import CourierTestServer
import Foundation
import Logging
import NIOConcurrencyHelpers
import Tracing

/// A manager with a transport of its own (so connection reuse is its own) against a fresh test
/// server; both are torn down after `body`.
func withObservedSession<R>(
    configure: (inout SessionManager.Configuration) -> Void = { _ in },
    interceptor: (any RequestInterceptor)? = nil,
    _ body: (TestServer, SessionManager) async throws -> R
) async throws -> R {
    let server = try await TestServer.start()
    var configuration = SessionManager.Configuration()
    configuration.sleeper = { _ in }
    configure(&configuration)
    let transport = AsyncHTTPClientTransport()
    let manager = SessionManager(configuration: configuration, transport: transport, interceptor: interceptor)
    do {
        let result = try await body(server, manager)
        try await manager.shutdown()
        try await transport.shutdown()
        try await server.shutdown()
        return result
    } catch {
        try? await manager.shutdown()
        try? await transport.shutdown()
        try? await server.shutdown()
        throw error
    }
}

/// The test server's address for `pathAndQuery`.
func serverURL(_ server: TestServer, _ pathAndQuery: String) -> URL {
    URL(string: "http://127.0.0.1:\(server.port)\(pathAndQuery)")!
}

// MARK: An in-memory tracer

/// The trace and span a test span belongs to, carried in a `ServiceContext`.
enum TestSpanContextKey: ServiceContextKey {
    typealias Value = TestSpanContext
}

struct TestSpanContext: Sendable, Hashable {
    var traceID: String
    var spanID: String
}

extension ServiceContext {
    var testSpanContext: TestSpanContext? {
        get { self[TestSpanContextKey.self] }
        set { self[TestSpanContextKey.self] = newValue }
    }
}

/// Records every span it starts; injects W3C `traceparent`.
final class RecordingTracer: Tracer, Sendable {
    private let state = NIOLockedValueBox<(spans: [RecordingSpan], next: Int)>(([], 1))

    /// Every span started so far, in start order.
    var spans: [RecordingSpan] { state.withLockedValue { $0.spans } }

    func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> RecordingSpan {
        let parentContext = context()
        let parent = parentContext.testSpanContext
        let span = state.withLockedValue { state -> RecordingSpan in
            let spanID = String(format: "%016x", state.next)
            state.next += 1
            let traceID = parent?.traceID ?? String(format: "%032x", state.next * 7919)
            var context = parentContext
            context.testSpanContext = TestSpanContext(traceID: traceID, spanID: spanID)
            let span = RecordingSpan(
                operationName: operationName, kind: kind, context: context, parentSpanID: parent?.spanID)
            state.spans.append(span)
            return span
        }
        return span
    }

    func forceFlush() {}

    func extract<Carrier, Extract>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
    where Extract: Extractor, Extract.Carrier == Carrier {}

    func inject<Carrier, Inject>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
    where Inject: Injector, Inject.Carrier == Carrier {
        guard let span = context.testSpanContext else { return }
        injector.inject("00-\(span.traceID)-\(span.spanID)-01", forKey: "traceparent", into: &carrier)
    }
}

/// A span that keeps what it was told.
final class RecordingSpan: Span, Sendable {
    struct State {
        var operationName: String
        var attributes = SpanAttributes()
        var status: SpanStatus?
        var errors: [String] = []
        var ended = false
    }

    let kind: SpanKind
    let context: ServiceContext
    let parentSpanID: String?
    private let state: NIOLockedValueBox<State>

    init(operationName: String, kind: SpanKind, context: ServiceContext, parentSpanID: String?) {
        self.kind = kind
        self.context = context
        self.parentSpanID = parentSpanID
        self.state = NIOLockedValueBox(State(operationName: operationName))
    }

    var spanID: String? { context.testSpanContext?.spanID }
    var traceID: String? { context.testSpanContext?.traceID }
    var status: SpanStatus? { state.withLockedValue { $0.status } }
    var ended: Bool { state.withLockedValue { $0.ended } }
    var recordedErrors: [String] { state.withLockedValue { $0.errors } }

    var operationName: String {
        get { state.withLockedValue { $0.operationName } }
        set { state.withLockedValue { $0.operationName = newValue } }
    }

    var attributes: SpanAttributes {
        get { state.withLockedValue { $0.attributes } }
        set { state.withLockedValue { $0.attributes = newValue } }
    }

    var isRecording: Bool { !ended }

    func setStatus(_ status: SpanStatus) { state.withLockedValue { $0.status = status } }
    func addEvent(_ event: SpanEvent) {}
    func recordError<Instant: TracerInstant>(
        _ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant
    ) {
        state.withLockedValue { $0.errors.append(String(describing: error)) }
    }
    func addLink(_ link: SpanLink) {}
    func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
        state.withLockedValue { $0.ended = true }
    }

    /// Every attribute as `name → description`, for comparisons and secret searches.
    var attributeStrings: [String: String] {
        var result: [String: String] = [:]
        // SpanAttributes is no Sequence: forEach is its only way through.
        // swift-format-ignore: ReplaceForEachWithForLoop
        attributes.forEach { name, attribute in result[name] = Self.describe(attribute) }
        return result
    }

    private static func describe(_ attribute: SpanAttribute) -> String {
        switch attribute {
        case .string(let value): return value
        case .int64(let value): return String(value)
        case .int32(let value): return String(value)
        case .bool(let value): return String(value)
        case .double(let value): return String(value)
        default: return String(describing: attribute)
        }
    }
}

// MARK: A capturing log handler

/// Keeps every log line with its metadata.
struct CapturingLogHandler: LogHandler {
    struct Line: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: Logger.Metadata
    }

    final class Store: Sendable {
        private let lines = NIOLockedValueBox<[Line]>([])
        func append(_ line: Line) { lines.withLockedValue { $0.append(line) } }
        var all: [Line] { lines.withLockedValue { $0 } }
    }

    let store: Store
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        store.append(Line(level: event.level, message: event.message.description, metadata: merged))
    }
}
