import Courier
import CourierTesting
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import Testing

@testable import CourierTestServer

/// The test server's routes answered in process, through a `ScriptedTransport`: the same
/// endpoints, JSON and fault counters as ``TestServer``, with no socket. For session logic
/// (redirects, retries, hooks, auth, resume) where the bytes on the wire do not matter; the
/// tests of framing, connections and timing stay on the loopback server.
///
/// A body arrives in chunks of ``chunkSize`` with no pause between them: a streamed body's
/// pauses are added to the head's delay, and one that pauses for longer than a test runs (a
/// drip without end) goes silent after the bytes it sent by then, so only the session's
/// deadline or a cancel ends it; a server that never answers never sends a head.
final class ScriptedTestServer: Sendable {
    let transport: ScriptedTransport
    private let state: ServerState

    init() {
        let state = ServerState(logRequests: false, scheme: "http")
        self.state = state
        transport = ScriptedTransport { sent in Self.answer(sent, state: state) }
    }

    /// `path` (with its query) on `host`; every host is this one server, so two hosts are two origins.
    func url(_ path: String, host: String = "scripted.test") -> URL {
        // The paths are the tests' own literals.
        URL(string: "http://\(host)\(path)")!
    }

    /// `http://scripted.test/`, as ``TestServer/baseURL``.
    var baseURL: URL { url("/") }

    /// What the server saw: requests received and served, the last request head (no connections).
    var stats: TestServerStats { state.stats }

    /// Starts the counts of ``stats`` again.
    func resetStats() { state.resetStats() }

    /// The counters of one `/cache/resource` (process-wide, as the test server's).
    func cacheStats(id: String) -> CacheResourceStats { CacheResources.shared.stats(id) }

    /// What the `/auth` endpoints saw of `realm` (realms are shared by every server).
    func authStats(realm: String) -> AuthRealmStats { AuthRealms.shared.stats(realm) }

    /// A pause this long or longer is a body that never ends within a test.
    private static let never = Duration.seconds(600)

    private static func answer(_ sent: ScriptedTransport.Sent, state: ServerState) -> ScriptedTransport.Reply {
        let url = sent.request.url
        var target = url.path.isEmpty ? "/" : url.path
        if let query = url.query { target += "?" + query }
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: url.port.map { "\(url.host ?? ""):\($0)" } ?? (url.host ?? ""))
        for field in sent.request.headerFields where field.name != .contentLength {
            headers.add(name: field.name.rawName, value: field.value)
        }
        // What a transport puts on the wire for a body: its length (or 0 for an empty POST, PUT, PATCH).
        let method = NIOHTTP1.HTTPMethod(rawValue: sent.request.method.rawValue)
        if !sent.body.isEmpty || [.post, .put, .patch].contains(sent.request.method) {
            headers.add(name: "Content-Length", value: String(sent.body.count))
        }
        let head = HTTPRequestHead(version: .http1_1, method: method, uri: target, headers: headers)
        state.requestReceived(RecordedRequestHead(head))
        defer { state.requestServed() }
        let request = ServerRequest(head: head, remoteAddress: nil, localAddress: nil, server: state)
        let consumer = Router().route(request)
        var plan = consumer.answerBeforeBody
        if plan == nil, !sent.body.isEmpty, case .answerEarly(let early) = consumer.consume(ByteBuffer(data: sent.body))
        {
            plan = early
        }
        // In chunks, as a network hands over a large body: progress moves between them.
        let answer = reply(plan ?? consumer.finish(), bodiless: sent.request.method == .head)
        return answer.inChunks(of: chunkSize)
    }

    /// The most bytes of a response body in one chunk.
    static let chunkSize = 16 * 1024

    /// The reply for `plan`; `bodiless` for a response to HEAD, whose body a server never sends
    /// (its head keeps the `Content-Length` a GET would get).
    private static func reply(_ plan: ResponsePlan, bodiless: Bool) -> ScriptedTransport.Reply {
        func response(_ spec: ResponseHeadSpec, _ body: ByteBuffer) -> ScriptedTransport.Reply {
            var headers = spec.headers.map { ($0.name, $0.value) }
            guard bodiless else { return .status(Int(spec.status.code), headers: headers, body: Data(buffer: body)) }
            headers.append(("Content-Length", String(body.readableBytes)))
            return .status(Int(spec.status.code), headers: headers)
        }
        switch plan {
        case .complete(let spec, let body):
            return response(spec, body)
        case .delayed(let pause, let plan):
            let inner = reply(plan, bodiless: bodiless)
            return inner.delayed(by: inner.delay + .nanoseconds(pause.nanoseconds))
        case .streamed(let spec, _, let source):
            var body = ByteBuffer()
            var pauses = Duration.zero
            while pauses < never {
                switch source.nextStep() {
                case .bytes(var bytes): body.writeBuffer(&bytes)
                case .pause(let pause): pauses += .nanoseconds(pause.nanoseconds)
                case .end: return response(spec, body).delayed(by: pauses)
                case .abort: return response(spec, body).breakingOff(after: body.readableBytes).delayed(by: pauses)
                }
            }
            // Still sending when a test would have ended: the bytes so far, then silence.
            return response(spec, body).stallingBody(after: body.readableBytes)
        case .raw, .end:
            // As a transport reports a connection closed before the head: the session may resend.
            var failure = CourierError(.connectionFailed, "the scripted server closed the connection without an answer")
            failure.unansweredExchange = .connectionClosed
            return .failure(failure)
        case .stall, .awaiting:
            return .status(200).delayed(by: never)
        }
    }
}

/// ``withSession``'s twin over a ``ScriptedTestServer``: a session manager on its transport whose
/// downloads go to a fresh directory, torn down afterwards.
@discardableResult
func withScriptedSession<R>(
    configure: (inout SessionManager.Configuration) -> Void = { _ in },
    interceptor: (any RequestInterceptor)? = nil,
    eventMonitors: [any EventMonitor] = [],
    _ body: (ScriptedTestServer, SessionManager, URL) async throws -> R
) async throws -> R {
    let server = ScriptedTestServer()
    return try await withTemporaryDirectory(named: "courier-scripted") { directory in
        var configuration = SessionManager.Configuration()
        configuration.temporaryDirectory = directory
        configure(&configuration)
        let manager = SessionManager(
            configuration: configuration, transport: server.transport, interceptor: interceptor,
            eventMonitors: eventMonitors)
        let outcome: Result<R, any Error>
        do {
            outcome = .success(try await body(server, manager, directory))
        } catch {
            outcome = .failure(error)
        }
        try? await manager.shutdown()
        return try outcome.get()
    }
}
