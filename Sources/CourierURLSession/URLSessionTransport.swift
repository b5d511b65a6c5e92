import Courier
import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A ``Courier/Transport`` on Foundation's `URLSession` (on Linux, FoundationNetworking):
/// the system's proxy and VPN settings, HTTP/3 and network policies on Apple platforms, and a
/// stack callers already trust, under the same ``Courier/SessionManager``.
///
/// ```swift
/// let manager = SessionManager(transport: URLSessionTransport())
/// ```
///
/// As every transport, it follows no redirects (the session does, and resends bodies on 307 and
/// 308, where FoundationNetworking would drop them), and the session's cookie storage, cache
/// and credentials are the only ones: URLSession's own are off. It keeps no deadline timer: the
/// session's stops the exchange through its context; cancelling through the context, cancelling the calling Swift task, or dropping
/// the response body stops the URLSession task. Upload progress comes
/// from `didSendBodyData`, never decreasing.
///
/// Request bodies always go out with `Content-Length`: in memory as `Data`; a whole file straight
/// from the file; any other body (a file region, a form, a stream, of known length or not) from
/// memory up to ``Configuration/inMemoryBodyLimit`` and from a temporary copy above it, because
/// FoundationNetworking cannot stream a body correctly (see `URLSessionOutgoingBody`). Response
/// bodies stream as they arrive; on Apple platforms a reader
/// that falls ``Configuration/bufferedResponseLimit`` bytes behind suspends the task, on Linux
/// the transfer cannot be paused and the buffer grows with the reader's lag.
///
/// Known limits on Linux (FoundationNetworking 6.3, libcurl): no custom trust evaluation (the
/// system's CA store decides; a ``Courier/ServerTrustPolicy`` does not apply), no GET with a
/// body, no way to suppress the `Accept: */*`, `Accept-Language` and `User-Agent` that
/// FoundationNetworking adds to a request without them, response decompression without a ratio
/// limit, and repeated response fields arrive joined.
public final class URLSessionTransport: Transport {
    /// The configuration this transport was made with.
    public let configuration: Configuration
    private let router = URLSessionEventRouter()
    private let session: URLSession
    private let isShutDown = NIOLockedValueBox(false)

    /// Whether a URLSession task can be suspended to stop reading: not on FoundationNetworking,
    /// whose `suspend()` takes a running transfer off libcurl's multi handle.
    static var canPauseReceiving: Bool {
        #if canImport(FoundationNetworking)
            return false
        #else
            return true
        #endif
    }

    /// Where every call into URLSession is made. FoundationNetworking's task factories, `resume`
    /// and `cancel` wait (`DispatchQueue.sync`) on a work queue shared by every URLSession of the
    /// process; made from a thread of Swift's cooperative pool (two threads on a two-core
    /// machine), such waits hold threads that the rest of the process needs while libcurl is busy.
    static let callQueue = DispatchQueue(label: "courier.urlsession.calls", attributes: .concurrent)

    /// Makes a transport with a URLSession of its own.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        self.session = URLSession(
            configuration: configuration.makeSessionConfiguration(), delegate: router, delegateQueue: nil)
    }

    deinit {
        // The session holds its delegate until it is invalidated.
        if !isShutDown.withLockedValue({ $0 }) { session.finishTasksAndInvalidate() }
    }

    /// A default deadline from ``Configuration/requestTimeout``; every exchange registers its
    /// cancel action with its context as soon as it exists.
    public var capabilities: TransportCapabilities {
        TransportCapabilities(defaultTimeout: configuration.requestTimeout)
    }

    /// Cancels every exchange in flight and closes the session; later sends fail with
    /// `.transportFailed`.
    /// - Throws: nothing today; declared by ``Courier/Transport``.
    public func shutdown() async throws {
        // Under the lock that task creation takes: FoundationNetworking traps when a task is
        // made on an invalidated session, and has no invalidateAndCancel() (NSUnimplemented).
        let first = isShutDown.withLockedValue { state -> Bool in
            defer { state = true }
            if !state { session.finishTasksAndInvalidate() }
            return !state
        }
        if first {
            router.stopAll(
                with: CourierError(.cancelled, "the URLSession transport was shut down while the request was running"))
        }
    }

    /// Sends `request`; see ``Courier/Transport/send(_:context:)``.
    /// - Throws: ``Courier/CourierError``: `.cancelled`, `.timedOut`, `.connectionFailed`,
    ///   `.serverTrustFailed`, `.tlsHandshakeFailed`, `.transportFailed` (a malformed response, a
    ///   shut-down transport), `.unsupportedScheme`, `.unsupportedBody` (a GET with a body on
    ///   Linux), or the body's own error.
    public func send(_ request: Request, context: ExchangeContext) async throws -> TransportResponse {
        let url = request.url
        let target = url.absoluteString
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", !(url.host ?? "").isEmpty
        else {
            throw CourierError(
                .unsupportedScheme,
                "\(target) is not an http or https URL with a host; URLSessionTransport speaks those",
                offendingInput: target)
        }
        if isShutDown.withLockedValue({ $0 }) {
            throw CourierError(.transportFailed, "the URLSession transport was shut down", offendingInput: target)
        }
        if context.cancellation.isCancelled || Task.isCancelled {
            throw Self.stopError(target: target, deadline: context.deadline)
        }

        let body: URLSessionOutgoingBody
        do {
            body = try await URLSessionOutgoingBody.prepare(
                request, inMemoryLimit: configuration.inMemoryBodyLimit,
                temporaryDirectory: configuration.temporaryDirectory)
        } catch {
            throw URLSessionErrors.courierError(from: error, url: url)
        }

        let urlRequest = makeURLRequest(request)
        // Made on the calling task rather than on `callQueue`: the task that reads the exchange
        // next wrote its fields itself, and the queue reaches it only through locks (the
        // router's, the exchange's). A continuation resumed before its task has suspended orders
        // the two sides only inside the concurrency runtime, where ThreadSanitizer does not see
        // it, and it reported the fields of an exchange made on the queue as raced.
        let exchange = makeExchange(body: body, url: url, context: context)
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            Self.callQueue.async {
                continuation.resume(
                    with: Result { try self.start(urlRequest, body: body, url: url, exchange: exchange) })
            }
        }
        // The session's timer owns the deadline and stops the exchange here, as a cancel does;
        // a stop that came before this registration is honoured at once.
        context.cancellation.onCancel {
            exchange.stop(with: Self.stopError(target: target, deadline: context.deadline))
        }

        let head = try await exchange.head()
        let owner = ExchangeOwner(exchange)
        // FoundationNetworking decodes every coding it accepts and keeps the header that names it.
        let decoded = head.headerFields[values: .contentEncoding].contains {
            $0.trimmingCharacters(in: .whitespaces).lowercased() != "identity"
        }
        return TransportResponse(
            head: head,
            body: BodyChunks(makeNext: {
                { try await owner.exchange.nextChunk() }
            }), bodyIsDecoded: decoded)
    }

    /// The error of an exchange stopped from outside: `.timedOut` at or past its deadline (the
    /// caller's timer stopped it), `.cancelled` before.
    private static func stopError(target: String, deadline: NIODeadline?) -> CourierError {
        if let deadline, NIODeadline.now() >= deadline {
            return CourierError(.timedOut, "the request to \(target) ran past its deadline", offendingInput: target)
        }
        return CourierError(.cancelled, "the request to \(target) was cancelled", offendingInput: target)
    }

    /// Makes, registers and resumes the task for `request`, answered through `exchange`; on
    /// ``callQueue`` only.
    /// - Throws: ``Courier/CourierError`` `.transportFailed` after ``shutdown()``.
    private func start(
        _ request: URLRequest, body: URLSessionOutgoingBody, url: URL, exchange: URLSessionExchange
    ) throws {
        let made = isShutDown.withLockedValue { shutDown -> URLSessionTask? in
            shutDown ? nil : makeTask(request, body: body)
        }
        guard let task = made else {
            if case .file(let file, true) = body { try? FileManager.default.removeItem(at: file) }
            throw CourierError(
                .transportFailed, "the URLSession transport was shut down", offendingInput: url.absoluteString)
        }
        router.register(exchange, for: task)
        exchange.attach(task)
        task.resume()
    }

    /// The task for `request` with `body`.
    private func makeTask(_ request: URLRequest, body: URLSessionOutgoingBody) -> URLSessionTask {
        switch body {
        case .none: return session.dataTask(with: request)
        case .data(let data): return session.uploadTask(with: request, from: data)
        case .file(let file, _): return session.uploadTask(with: request, fromFile: file)
        }
    }

    /// The exchange that answers a request with `body`; it deletes a temporary body file once it
    /// has ended.
    private func makeExchange(body: URLSessionOutgoingBody, url: URL, context: ExchangeContext) -> URLSessionExchange {
        var cleanup: (@Sendable () -> Void)?
        if case .file(let file, true) = body {
            cleanup = { @Sendable in _ = try? FileManager.default.removeItem(at: file) }
        }
        return URLSessionExchange(
            url: url, uploadProgress: context.uploadProgress, recorder: context.recorder,
            bufferedResponseLimit: configuration.bufferedResponseLimit, cleanup: cleanup)
    }

    /// The URLRequest for `request`: its method and fields (framing fields left to URLSession,
    /// which derives them from the body), no cookies or cache of URLSession's own, and the read
    /// timeout as URLSession's idle timeout.
    private func makeURLRequest(_ request: Request) -> URLRequest {
        var result = URLRequest(url: request.url)
        result.httpMethod = request.method.rawValue
        result.httpShouldHandleCookies = false
        result.cachePolicy = .reloadIgnoringLocalAndRemoteCacheData
        result.timeoutInterval = configuration.readTimeoutSeconds
        var cookiePairs: [String] = []
        for field in request.headerFields where field.name != .contentLength && field.name != .transferEncoding {
            if field.name == .cookie {
                cookiePairs.append(field.value)
            } else {
                result.addValue(field.value, forHTTPHeaderField: field.name.rawName)
            }
        }
        // One Cookie line (RFC 6265 §5.4), as the AsyncHTTPClient transport sends.
        if !cookiePairs.isEmpty { result.setValue(cookiePairs.joined(separator: "; "), forHTTPHeaderField: "Cookie") }
        return result
    }
}

/// Holds an exchange for its response body; dropped before the body ended, it stops the exchange.
private final class ExchangeOwner: Sendable {
    let exchange: URLSessionExchange

    init(_ exchange: URLSessionExchange) { self.exchange = exchange }

    deinit {
        if !exchange.isComplete {
            exchange.stop(
                with: CourierError(
                    .cancelled, "the response body from \(exchange.url.absoluteString) was dropped before its end",
                    offendingInput: exchange.url.absoluteString))
        }
    }
}
