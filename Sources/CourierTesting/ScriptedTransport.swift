import Courier
import Foundation
import HTTPTypes
import NIOCore

/// A ``/CourierCore/Transport`` that answers from a script instead of a network, for testing code
/// built on Courier: give it to a `SessionManager` or an `HTTPSessionManager`, and every request
/// they send is answered by the script, with no socket, no server and no waiting.
///
/// ```swift
/// let transport = ScriptedTransport { sent in
///     switch sent.request.url.path {
///     case "/login": return .redirect(to: "/home")
///     case "/home": return .json(#"{"name":"Ada"}"#)
///     default: return .status(404)
///     }
/// }
/// let manager = HTTPSessionManager(baseURL: URL(string: "http://api.test/"), transport: transport)
/// let user = try await manager.get("login", as: User.self)
/// #expect(transport.sent.map(\.request.url.path) == ["/login", "/home"])
/// ```
///
/// It behaves as a transport must: it reads each request body as a server would (so a redirect
/// or retry that cannot replay its body fails as it would for real), reports upload progress,
/// and stops a delayed reply as soon as the exchange is cancelled, through its context or its
/// Swift task. It keeps no clock: the session's deadline stops it through its context, as it
/// stops every transport, and a stop at or past the deadline it was told is `.timedOut`.
/// Everything it was sent is kept in ``sent``. Safe to use from any task.
public final class ScriptedTransport: Transport {
    /// One request as the transport received it.
    public struct Sent: Sendable {
        /// The request, with the headers the session added (cookies, resume ranges).
        public var request: Request
        /// The body bytes, read in full.
        public var body: Data
        /// The exchange's deadline, as the session worked it out; nil for none.
        public var deadline: NIODeadline?
        /// The read-ahead the session asked for (``/CourierCore/ExchangeContext/readAheadLimit``); nil
        /// for the transport's own.
        public var readAheadLimit: Int?
        /// The highest limit the session raised the read-ahead to once the response head was in
        /// (``/CourierCore/TransportResponse/raiseReadAhead``); nil when it never did.
        public var raisedReadAheadLimit: Int?
    }

    /// What the transport does with one request: answer after an optional delay, or fail.
    public struct Reply: Sendable {
        enum Outcome: Sendable {
            case response(
                status: Int, headers: [(String, String)], body: Data, failsAfter: Int?, failure: CourierError?)
            case failure(CourierError)
        }

        var outcome: Outcome
        /// How long the response head takes to arrive.
        public var delay: Duration = .zero
        /// The most body bytes one chunk holds; nil for the whole body in one chunk.
        public var chunkSize: Int?
        /// Whether the body, once its bytes are delivered, waits until the exchange is stopped.
        var stallsBody = false

        /// A response with this status, headers and body; `Content-Length` is added unless given.
        public static func status(_ status: Int, headers: [(String, String)] = [], body: Data = Data()) -> Reply {
            Reply(outcome: .response(status: status, headers: headers, body: body, failsAfter: nil, failure: nil))
        }

        /// A response whose body is `text` as UTF-8, with a `Content-Type` of `contentType`.
        public static func text(
            _ text: String, status: Int = 200, contentType: String = "text/plain; charset=utf-8",
            headers: [(String, String)] = []
        ) -> Reply {
            .status(status, headers: [("Content-Type", contentType)] + headers, body: Data(text.utf8))
        }

        /// A JSON response (`application/json`) whose body is `json`, as written.
        public static func json(_ json: String, status: Int = 200, headers: [(String, String)] = []) -> Reply {
            .text(json, status: status, contentType: "application/json", headers: headers)
        }

        /// A redirect to `location` (resolved against the request's URL by the session).
        public static func redirect(_ status: Int = 302, to location: String) -> Reply {
            .status(status, headers: [("Location", location)])
        }

        /// The exchange fails before a response arrives, with `error`.
        public static func failure(_ error: CourierError) -> Reply {
            Reply(outcome: .failure(error))
        }

        /// The exchange fails before a response arrives, with a scripted error of this code
        /// (`.connectionFailed`, `.timedOut`, …).
        public static func failure(_ code: CourierError.Code) -> Reply {
            .failure(CourierError(code, "a scripted \(code) failure"))
        }

        /// The same reply, arriving after `delay`.
        public func delayed(by delay: Duration) -> Reply {
            var reply = self
            reply.delay = delay
            return reply
        }

        /// The same reply, its body handed to the session in chunks of at most `size` bytes (at
        /// least 1), as a network delivers a large one: progress moves, and a hook can stop or
        /// pause the transfer between chunks.
        public func inChunks(of size: Int) -> Reply {
            var reply = self
            reply.chunkSize = max(1, size)
            return reply
        }

        /// The same response, whose body goes silent after `count` bytes: it then waits until the
        /// exchange is stopped (a cancel, the session's deadline), as a server that stops sending
        /// does, and fails with `.cancelled`, or `.timedOut` at or past the deadline.
        public func stallingBody(after count: Int) -> Reply {
            var reply = breakingOff(after: count)
            guard case .response(let status, let headers, let body, let failsAfter, _) = reply.outcome else {
                return self
            }
            reply.outcome = .response(
                status: status, headers: headers, body: body, failsAfter: failsAfter, failure: nil)
            reply.stallsBody = true
            return reply
        }

        /// The same response, whose body breaks off after `count` bytes with `error` (by default
        /// `.connectionFailed`, as a server closing the connection mid-body).
        public func breakingOff(after count: Int, with error: CourierError? = nil) -> Reply {
            guard case .response(let status, let headers, let body, _, _) = outcome else { return self }
            var reply = self
            let failure = error ?? CourierError(.connectionFailed, "the scripted body broke off after \(count) bytes")
            reply.outcome = .response(
                status: status, headers: headers, body: body, failsAfter: max(0, count), failure: failure)
            return reply
        }
    }

    /// Chooses the reply to a request; it sees the request and its body as received.
    public typealias Script = @Sendable (Sent) -> Reply

    /// What the transport tells sessions about itself. By default no default deadline, and
    /// exchanges stopped through their context, as the default transport's are.
    public let capabilities: TransportCapabilities
    private let script: Script
    private let state = Locked(State())

    private struct State {
        var sent: [Sent] = []
        var isShutDown = false
    }

    /// A transport that asks `script` for every reply.
    public init(
        capabilities: TransportCapabilities = TransportCapabilities(),
        script: @escaping Script
    ) {
        self.capabilities = capabilities
        self.script = script
    }

    /// A transport that gives `replies` in order, one per request; a request past the last
    /// fails with `.transportFailed`.
    public convenience init(
        capabilities: TransportCapabilities = TransportCapabilities(),
        replies: [Reply]
    ) {
        let queue = Locked(replies[...])
        self.init(capabilities: capabilities) { sent in
            queue.withLock { $0.popFirst() }
                ?? .failure(CourierError(.transportFailed, "no reply scripted for \(sent.request.url.absoluteString)"))
        }
    }

    /// Every request sent so far, in order.
    public var sent: [Sent] { state.withLock { $0.sent } }

    /// Answers `request` from the script; see ``/CourierCore/Transport/send(_:context:)``.
    /// - Throws: the scripted ``/CourierCore/CourierError``; `.cancelled` when the exchange is
    ///   cancelled during its delay, `.timedOut` when that happens at or past the context's
    ///   deadline; the body's own error when it cannot be read (a one-shot body read twice);
    ///   `.transportFailed` after ``shutdown()``.
    public func send(_ request: Request, context: ExchangeContext) async throws -> TransportResponse {
        if state.withLock({ $0.isShutDown }) {
            throw CourierError(.transportFailed, "the scripted transport was shut down")
        }
        context.recorder?.requestHeadSent()
        let body = try await Self.read(request.body, reporting: context.uploadProgress)
        // A script has no connection: the recorder hears of the bytes and instants only.
        context.recorder?.requestSent(bodyBytes: Int64(body.count))
        let sent = Sent(
            request: request, body: body, deadline: context.deadline, readAheadLimit: context.readAheadLimit)
        let index = state.withLock { state in
            state.sent.append(sent)
            return state.sent.count - 1
        }
        let reply = script(sent)
        try await Self.wait(reply.delay, context: context, url: request.url)
        switch reply.outcome {
        case .failure(let error):
            throw error
        case .response(let status, let headers, let body, let failsAfter, let failure):
            var fields = HTTPFields()
            for (name, value) in headers {
                if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
            }
            if fields[.contentLength] == nil { fields[.contentLength] = String(body.count) }
            let head = ResponseHead(status: HTTPResponse.Status(code: status), headerFields: fields, url: request.url)
            let raiseReadAhead: @Sendable (Int) -> Void = { [state] limit in
                state.withLock { state in
                    let raised = state.sent[index].raisedReadAheadLimit
                    if limit > (raised ?? state.sent[index].readAheadLimit ?? 0) {
                        state.sent[index].raisedReadAheadLimit = limit
                    }
                }
            }
            return TransportResponse(
                head: head,
                body: Self.chunks(
                    body, size: reply.chunkSize, failsAfter: failsAfter, with: failure,
                    stallingFor: reply.stallsBody ? context : nil, url: request.url),
                raiseReadAhead: raiseReadAhead)
        }
    }

    /// Later sends fail with `.transportFailed`; what was sent stays readable.
    public func shutdown() async throws {
        state.withLock { $0.isShutDown = true }
    }

    private static func read(_ body: RequestBody, reporting progress: (@Sendable (Int64) -> Void)?) async throws -> Data
    {
        if body.isEmpty { return Data() }
        var data = Data()
        for try await chunk in try body.makeChunks() {
            data.append(contentsOf: chunk.readableBytesView)
            progress?(Int64(data.count))
        }
        return data
    }

    /// Waits out a reply's delay, for as long as the exchange lives: a cancel through the context
    /// or the Swift task ends it with `.cancelled`, or `.timedOut` at or past the deadline (the
    /// session's timer stops an exchange through its context; this transport keeps no clock).
    private static func wait(_ delay: Duration, context: ExchangeContext, url: URL) async throws {
        if delay > .zero {
            let sleeper = Task { try await Task.sleep(for: delay) }
            // A cancel that came before this registration is honoured here, at once.
            context.cancellation.onCancel { sleeper.cancel() }
            _ = try? await withTaskCancellationHandler {
                try await sleeper.value
            } onCancel: {
                sleeper.cancel()
            }
        }
        guard context.cancellation.isCancelled || Task.isCancelled else { return }
        if let deadline = context.deadline, NIODeadline.now() >= deadline {
            throw CourierError(
                .timedOut, "the scripted exchange with \(url.absoluteString) was stopped at its deadline")
        }
        throw CourierError(.cancelled, "the scripted exchange with \(url.absoluteString) was cancelled")
    }

    /// The body's chunks; with `stallingFor`, the end waits until that exchange is stopped.
    private static func chunks(
        _ body: Data, size: Int?, failsAfter: Int?, with failure: CourierError?, stallingFor exchange: ExchangeContext?,
        url: URL
    ) -> BodyChunks {
        let delivered = failsAfter.map { body.prefix($0) } ?? body
        let size = size ?? max(1, delivered.count)
        return BodyChunks(makeNext: {
            let offset = Locked<Int?>(0)
            return {
                // nil once the body (and its failure, if any) has been delivered.
                guard let start = offset.withLock({ $0 }) else { return nil }
                if start < delivered.count {
                    let end = min(delivered.count, start + size)
                    offset.withLock { $0 = end }
                    return ByteBuffer(bytes: delivered[(delivered.startIndex + start)..<(delivered.startIndex + end)])
                }
                offset.withLock { $0 = nil }
                if let failure, failsAfter != nil { throw failure }
                // A year: only a stop ends it within any test.
                if let exchange { try await wait(.seconds(365 * 86_400), context: exchange, url: url) }
                return nil
            }
        })
    }
}

/// A value behind a lock, for the little shared state of a scripted transport.
final class Locked<Value>: @unchecked Sendable {
    // Every access goes through `withLock`.
    private var value: Value
    private let lock = NSLock()

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
