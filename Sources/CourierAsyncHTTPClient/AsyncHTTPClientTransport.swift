import AsyncHTTPClient
import CourierCore
import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix

/// The default `Transport`: AsyncHTTPClient 1.37's delegate API, with its own redirect
/// following, read timeout and request deadline turned off (the session owns the deadline and
/// stops the exchange through `ExchangeCancellation`; `StreamingResponseDelegate` keeps the
/// one idle-read timer).
///
/// Owns its `HTTPClient`s. ``shutdown()`` closes them and waits; a transport dropped without it
/// shuts them down in the background when it goes away, so it leaks no connection and never
/// trips AsyncHTTPClient's check for a client freed un-shut. ``shared`` is one that is never
/// shut down, for code that wants no lifetime to manage. A body whose length is known goes out
/// with `Content-Length` (multipart forms and files always are), and chunked only when the
/// length is unknown. Over plain HTTP, a body with file parts (`RequestBody.segments`) goes
/// out with sendfile(2) (see `FileRegionBody`); every other body is written from memory or
/// streams in the chunks that `RequestBody.makeChunks()` produces, one write at a time, so
/// memory stays bounded by a few chunks whatever the body size.
///
/// It resends nothing: a failure before the response head that leaves the request safe to send
/// again carries `CourierError.unansweredExchange`, and the session decides.
public final class AsyncHTTPClientTransport: Transport {
    /// The configuration this transport was made with.
    public let configuration: Configuration
    /// The one client: every request may ride HTTP/2 where the server offers it, with or without
    /// a body, however its response is read (`HTTP2StreamGuard` keeps AsyncHTTPClient's
    /// HTTP/2 handler safe from early answers; a slow reader holds its stream's flow-control
    /// window, see `StreamingResponseDelegate`).
    let client: HTTPClient
    /// The transports of ``Configuration/proxy``'s servers; the clients above go direct.
    let proxyRoutes: ProxyRoutes?
    /// Connection facts for the clients' requests (see ``ConnectionLedger``).
    let connectionLedger: ConnectionLedger
    /// Set as ``shutdown()`` begins, before either client is told.
    private let shutDown = NIOLockedValueBox(false)
    /// The parsed URL of the last request, reused while the URL stays the same.
    let requestTemplates = RequestTemplateCache()

    /// True for ``shared``, which refuses ``shutdown()``.
    private let isShared: Bool

    /// True once ``shutdown()`` has begun.
    var isShutDown: Bool { shutDown.withLockedValue { $0 } }

    /// Makes a transport with its own `HTTPClient`s on the shared NIO event loop group.
    ///
    /// Call ``shutdown()`` to close its connections and wait for that; or just drop it, and they
    /// are closed in the background once no request is using it.
    public convenience init(configuration: Configuration = Configuration()) {
        self.init(configuration: configuration, isShared: false)
    }

    init(configuration: Configuration, isShared: Bool) {
        self.isShared = isShared
        self.configuration = configuration
        self.proxyRoutes = configuration.proxy.map { ProxyRoutes(proxies: $0, base: configuration) }
        let connectionLedger = ConnectionLedger()
        self.connectionLedger = connectionLedger
        self.client = HTTPClient(
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            configuration: configuration.makeClientConfiguration(connectionLedger: connectionLedger))
    }

    deinit {
        // Dropped without shutdown(): AsyncHTTPClient traps in debug builds when a client it was
        // never told to shut down is freed, and otherwise keeps its connections open. It is told
        // without waiting; its shutdown holds it alive until its connections are closed.
        // (shared is a global, never freed; after shutdown() there is nothing left to do.)
        guard !isShutDown else { return }
        client.shutdown(queue: .global()) { _ in }
    }

    /// Closes all connections and waits until they are closed; requests still running fail with
    /// `.cancelled` or `.transportFailed`, and later sends with `.transportFailed`.
    /// - Throws: `CourierError` `.transportFailed` when AsyncHTTPClient reports an unclean
    ///   shutdown; `.shutdownUnsupported` on ``shared``, which stays up.
    public func shutdown() async throws {
        guard !isShared else {
            throw CourierError(
                .shutdownUnsupported,
                "AsyncHTTPClientTransport.shared serves the whole process and is never shut down; make a transport of your own to control its lifetime"
            )
        }
        shutDown.withLockedValue { $0 = true }
        var failure: (any Error)?
        do {
            try await client.shutdown()
        } catch let error as HTTPClientError where error == .alreadyShutdown {
        } catch {
            failure = error
        }
        do { try await proxyRoutes?.shutdown() } catch { failure = failure ?? error }
        if let failure {
            throw CourierError(.transportFailed, "the HTTP client did not shut down cleanly", underlyingError: failure)
        }
    }

    /// A default deadline from ``Configuration/requestTimeout`` and the pool's
    /// ``Configuration/maximumConnectionsPerHost``; every exchange registers its
    /// cancel action with its context as soon as it exists.
    public var capabilities: TransportCapabilities {
        TransportCapabilities(
            defaultTimeout: configuration.requestTimeout.map { .nanoseconds($0.nanoseconds) },
            maximumConnectionsPerHost: max(1, configuration.maximumConnectionsPerHost))
    }

    /// Sends `request`; see `Transport.send(_:context:)`.
    /// - Throws: `CourierError` as the protocol describes, with
    ///   `CourierError.unansweredExchange` set when the request may go out again.
    public func send(_ request: Request, context: ExchangeContext) async throws -> TransportResponse {
        if let proxyRoutes, let server = proxyRoutes.proxies.server(for: request.url) {
            return try await proxyRoutes.send(request, context: context, through: server)
        }
        let url = request.url
        let delegate: StreamingResponseDelegate
        let task: HTTPClient.Task<Void>
        var fileBody: FileRegionBody?
        let pump: BodyPump?
        do {
            let body: HTTPClient.Body?
            (body, fileBody, pump) = try Self.body(of: request, uploadProgress: context.uploadProgress)
            delegate = StreamingResponseDelegate(
                uploadProgress: context.uploadProgress, idleReadTimeout: configuration.readTimeout,
                sendsBody: body != nil, recorder: context.recorder, connectionLedger: connectionLedger,
                bufferedByteLimit: context.readAheadLimit)
            // The codings the transport decodes (RFC 9110 §12.5.3), none when decoding is off, so
            // that no server is invited to send bytes the caller would then receive encoded.
            let acceptEncoding = configuration.decompressesResponses ? "gzip, deflate" : nil
            let outgoing = try requestTemplates.request(
                url: url, method: NIOHTTP1.HTTPMethod(rawValue: request.method.rawValue),
                headers: Self.headers(from: request.headerFields, acceptEncoding: acceptEncoding), body: body)
            task = client.execute(
                request: outgoing, delegate: delegate,
                eventLoop: context.readsBodyIncrementally
                    ? .indifferent : connectionLedger.eventLoopPreference(for: outgoing),
                deadline: nil)
        } catch {
            fileBody?.close()
            throw Self.courierError(from: error, url: url)
        }
        fileBody?.attach(to: task, isRequestSent: { delegate.isRequestSent })
        if let pump { task.futureResult.whenComplete { _ in pump.end() } }
        context.cancellation.onCancel { delegate.cancel(task) }
        if isShutDown {
            // A client that is shutting down hands back a task that has already failed without
            // telling its delegate; the delegate watches the task itself otherwise (see
            // `StreamingResponseDelegate.didSendRequestHead`).
            task.futureResult.whenFailure { delegate.fail($0) }
        }
        let exchange = DelegatedExchange(task: task, delegate: delegate, url: url)
        let responseHead: HTTPResponseHead
        do {
            responseHead = try await delegate.head(task: task)
        } catch {
            task.cancel()
            var failure = Self.courierError(from: error, url: url)
            let cancelledByCourier = delegate.wasCancelledByCourier || isShutDown || Task.isCancelled
            failure.unansweredExchange = UnansweredExchange(error, cancelledByCourier: cancelledByCourier)
            throw failure
        }
        let (status, version) = (responseHead.status, responseHead.version)
        let head = ResponseHead(
            status: HTTPResponse.Status(code: Int(status.code), reasonPhrase: status.reasonPhrase),
            headerFields: Self.fields(from: responseHead.headers), url: url,
            httpVersion: HTTPProtocolVersion(major: version.major, minor: version.minor))
        let chunks = BodyChunks(
            makeIterator: {
                let reader = BodyReader(exchange: exchange)
                return BodyChunks.AsyncIterator { try await reader.next() }
            },
            // ``Configuration/writesDownloadsOnEventLoop``: only for a body read as it arrives.
            fileWriter: configuration.writesDownloadsOnEventLoop && context.readsBodyIncrementally ? exchange : nil)
        // The delegate alone, not the exchange: a kept raise must not keep an exchange whose
        // body was dropped from being cancelled.
        let raiseReadAhead: @Sendable (Int) -> Void = { [delegate] in delegate.raiseBufferedByteLimit(to: $0) }
        // Courier decodes rather than AsyncHTTPClient: its decoder is a handler in every
        // connection's pipeline that every response passes through, coded or not, at about 5% of
        // the instructions of a small GET; here a response without a coding costs one look at
        // its header fields.
        guard configuration.decompressesResponses else {
            return TransportResponse(head: head, body: chunks, raiseReadAhead: raiseReadAhead)
        }
        return TransportResponse(
            head: head, decoding: chunks, ratioLimit: configuration.decompressionRatioLimit,
            ratioFreeSize: configuration.decompressionRatioFreeSize, raiseReadAhead: raiseReadAhead)
    }

    /// The body AsyncHTTPClient sends, and the open files of a sendfile body or the task of a
    /// streamed one (each ended with the exchange); nil for no body at all.
    ///
    /// POST, PUT and PATCH without a body still say so with `Content-Length: 0`. Over plain HTTP
    /// a body with file regions goes out with sendfile (TLS encrypts in user space, so there is
    /// nothing to gain there). Bytes in memory go out in one write unless upload progress is
    /// wanted; every other body streams, one chunk written before the next is asked for.
    static func body(of request: Request, uploadProgress: (@Sendable (Int64) -> Void)?) throws
        -> (HTTPClient.Body?, FileRegionBody?, BodyPump?)
    {
        let body = request.body
        if body.isEmpty {
            switch request.method {
            case .post, .put, .patch: return (.byteBuffer(ByteBuffer()), nil, nil)
            default: return (nil, nil, nil)
            }
        }
        // Bytes in memory first: they have no file region, and asking costs an array.
        if let bytes = body.bufferedBytes, uploadProgress == nil || bytes.readableBytes <= BodyPump.sliceSize {
            return (.byteBuffer(bytes), nil, nil)
        }
        if let segments = sendfileSegments(of: request) {
            let fileBody = try FileRegionBody(segments: segments)
            return (fileBody.makeBody(), fileBody, nil)
        }
        let pump = BodyPump()
        return (pump.body(try body.makeChunks(), length: body.contentLength), nil, pump)
    }

    /// The body's segments when it can go out with sendfile: plain HTTP (TLS encrypts in user
    /// space, so there is nothing to gain) and at least one file region; nil otherwise.
    static func sendfileSegments(of request: Request) -> [BodySegment]? {
        // The body first: most requests have none, and asking the URL for its scheme costs more.
        guard let segments = request.body.segments else { return nil }
        let hasFile = segments.contains { segment in
            if case .file(_, _, let length) = segment { return length > 0 }
            return false
        }
        guard hasFile, request.url.scheme?.lowercased() == "http" else { return nil }
        return segments
    }

    /// Headers that the body decides are left to AsyncHTTPClient, which derives them from the body's
    /// length; `acceptEncoding` is added when the request has no `Accept-Encoding` of its own.
    static func headers(from fields: HTTPFields, acceptEncoding: String? = nil) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.reserveCapacity(fields.count + 1)
        var cookiePairs: [String] = []
        var acceptEncoding = acceptEncoding
        for field in fields where field.name != .contentLength && field.name != .transferEncoding {
            if field.name == .cookie {
                cookiePairs.append(field.value)
                continue
            }
            if field.name == .acceptEncoding { acceptEncoding = nil }
            headers.add(name: field.name.rawName, value: field.value)
        }
        // HTTPFields stores a `Cookie` value set through its subscript as one field per pair
        // (HTTP/2 crumbs); HTTP/1.1 allows a single `Cookie` line (RFC 6265 §5.4), and servers
        // that fold repeated lines with "," misread the pairs.
        if !cookiePairs.isEmpty {
            headers.add(name: "Cookie", value: cookiePairs.joined(separator: "; "))
        }
        if let acceptEncoding { headers.add(name: "Accept-Encoding", value: acceptEncoding) }
        return headers
    }

    private static func fields(from headers: HTTPHeaders) -> HTTPFields {
        var fields = HTTPFields()
        fields.reserveCapacity(headers.count)
        for (name, value) in headers {
            if let fieldName = fieldName(name) { fields.append(HTTPField(name: fieldName, value: value)) }
        }
        return fields
    }

    /// Names most responses carry, spelled as servers usually send them; their lowercased forms
    /// are literals, so a matching name costs no allocation.
    private static let commonFieldNames: [HTTPField.Name] = [
        .contentType, .contentLength, .server, .date, .connection, .transferEncoding, .contentEncoding, .eTag,
        .lastModified, .location, .cacheControl, .setCookie, .vary, .acceptRanges,
    ]

    /// The field name for `name`: a shared common name when the spelling matches exactly (so the
    /// raw spelling the server sent is kept), else a validated new one; nil for an invalid name.
    static func fieldName(_ name: String) -> HTTPField.Name? {
        for candidate in commonFieldNames where candidate.rawName == name { return candidate }
        return HTTPField.Name(name)
    }

    /// Maps AsyncHTTPClient, NIO and cancellation errors onto Courier's codes, keeping the original.
    static func courierError(from error: any Error, url: URL) -> CourierError {
        if let error = error as? CourierError { return error }
        if let tls = CourierError.tlsFailure(error, url: url) { return tls }
        let target = url.absoluteString
        if error is CancellationError {
            return CourierError(.cancelled, "the request to \(target) was cancelled", offendingInput: target)
        }
        if let status = error as? InvalidResponseStatus {
            let digits = String(status.code)
            let code = String(repeating: "0", count: max(0, 3 - digits.count)) + digits
            return CourierError(
                .transportFailed,
                "the server answered \(target) with status code \(code), which is not an HTTP status (100-599)",
                offendingInput: code, underlyingError: error)
        }
        let (code, message) = describe(error, target: target, url: url)
        return CourierError(code, message, offendingInput: target, underlyingError: error)
    }

    /// The code and message for `error`, which ended the request to `target`: one row per failure
    /// that AsyncHTTPClient, NIO or the transport's own handlers report.
    private static func describe(_ error: any Error, target: String, url: URL) -> (CourierError.Code, String) {
        switch error {
        case let error as HTTPClientError:
            // Qualified names: a bare `.cancelled` here would match `CourierError.Code.cancelled`
            // through CourierError's `~=` and never be true for an HTTPClientError.
            switch error {
            case HTTPClientError.cancelled, HTTPClientError.requestStreamCancelled:
                return (.cancelled, "the request to \(target) was cancelled")
            case HTTPClientError.connectTimeout, HTTPClientError.readTimeout, HTTPClientError.writeTimeout,
                HTTPClientError.deadlineExceeded, HTTPClientError.tlsHandshakeTimeout,
                HTTPClientError.httpProxyHandshakeTimeout, HTTPClientError.socksHandshakeTimeout,
                HTTPClientError.getConnectionFromPoolTimeout:
                return (.timedOut, "the request to \(target) timed out (\(error.shortDescription))")
            case HTTPClientError.remoteConnectionClosed:
                return (
                    .connectionFailed, "the server closed the connection to \(target) before the response was complete"
                )
            case HTTPClientError.bodyLengthMismatch:
                return (.bodyLengthMismatch, "the body sent to \(target) did not match its declared length")
            // Refused before any I/O, as AsyncHTTPClient builds the request: no check before every send.
            case HTTPClientError.emptyScheme, HTTPClientError.unsupportedScheme(url.scheme ?? ""):
                let named = url.scheme.map { "the scheme \"\($0)\"" } ?? "no scheme"
                return (.unsupportedScheme, "\(target) has \(named); Courier speaks http and https")
            case HTTPClientError.emptyHost:
                return (.unsupportedScheme, "\(target) names no host to connect to")
            default:
                return (.transportFailed, "the request to \(target) failed: \(error.shortDescription)")
            }
        case let reset as NIOHTTP2Errors.StreamClosed:
            return (
                .connectionFailed,
                "the server reset the HTTP/2 stream of \(target) before the response was complete (\(reset.errorCode.rfcName))"
            )
        case let mismatch as NoCommonProtocol:
            return (
                .connectionFailed,
                "\(target) shares no protocol with this request: \(mismatch); allow HTTP/2 with AsyncHTTPClientTransport.Configuration.\(mismatch.remedy)"
            )
        case let leftOut as HTTP2StreamLeftOutByGoAway:
            return (
                .connectionFailed,
                "the server retired the HTTP/2 connection before processing the request to \(target) (\(leftOut))"
            )
        case is HTTP2StreamNeverOpened:
            return (.connectionFailed, "the HTTP/2 connection to \(target) closed before the request was sent")
        case let cut as HTTP2EarlyAnswerCut:
            return (.connectionFailed, "the server answered \(target) before the upload ended, then \(cut.description)")
        case let broken as HTTP2ConnectionBroken:
            return (.transportFailed, "the connection to \(target) was closed: \(broken.reason)")
        case let parser as HTTPParserError where parser == .invalidEOFState:
            return (.connectionFailed, "the server closed the connection to \(target) in the middle of the response")
        case let parser as HTTPParserError where url.scheme?.lowercased() == "https":
            // HTTP2OnlyServerDetector names the protocols when it sees the server's first bytes;
            // bytes that arrive before it is in place reach the decoder instead.
            return (
                .transportFailed,
                "the request to \(target) failed: the answer was not HTTP/1.1 (\(parser)); a server that speaks only HTTP/2 answers so when the request offers only HTTP/1.1 (ALPN)"
            )
        case is NIOConnectionError, is IOError, is ChannelError:
            return (.connectionFailed, ConnectionFailureText.message(for: error, url: url))
        default:
            return (.transportFailed, "the request to \(target) failed: \(error)")
        }
    }
}

/// A request sent through the delegate API and its response stream. Dropping the last reference
/// before the response has ended cancels the request, as dropping an async response body does.
private final class DelegatedExchange: ResponseBodyFileWriter {
    let task: HTTPClient.Task<Void>
    let delegate: StreamingResponseDelegate
    /// The request's URL, for the body's errors; kept here so that the body's iterator closure
    /// captures the exchange alone (one reference needs no context allocated).
    let url: URL

    init(task: HTTPClient.Task<Void>, delegate: StreamingResponseDelegate, url: URL) {
        self.task = task
        self.delegate = delegate
        self.url = url
    }

    deinit {
        if !delegate.isComplete { task.cancel() }
    }

    func writeRemainingBody(to file: ResponseBodyFile) async throws {
        try await delegate.writeRemainingBody(to: file, task: task)
    }
}

/// One iterator's reading of an exchange's body, which remembers an end that came with the last
/// part (no second turn of the delegate's lock); the iterator closure's one capture, its context.
private final class BodyReader {
    let exchange: DelegatedExchange
    private var ended = false

    init(exchange: DelegatedExchange) {
        self.exchange = exchange
    }

    /// The next chunk, or nil at the end.
    /// - Throws: the exchange's failure as a `CourierError`.
    func next() async throws -> ByteBuffer? {
        if ended { return nil }
        var endsHere = false
        do {
            let part = try await exchange.delegate.nextBodyPart(ended: &endsHere, task: exchange.task)
            ended = endsHere
            return part
        } catch {
            throw AsyncHTTPClientTransport.courierError(from: error, url: exchange.url)
        }
    }
}

/// The task that writes a streamed body, one chunk handed to the connection before the next is
/// asked for; ended with the exchange, so that a source that waits for ever is not waited on after.
final class BodyPump: Sendable {
    /// The most bytes one write hands to the connection, so that upload progress moves in steps
    /// of at most this (slices share storage: nothing is copied).
    static let sliceSize = 1 << 20

    private struct State {
        var task: Task<Void, Never>?
        var isEnded = false
    }

    private let state = NIOLockedValueBox(State())

    /// A body that writes `chunks` from a task of this pump's.
    func body(_ chunks: BodyChunks, length: Int64?) -> HTTPClient.Body {
        .stream(contentLength: length) { writer in
            let written = MultiThreadedEventLoopGroup.singleton.any().makePromise(of: Void.self)
            let task = Task {
                do {
                    for try await var chunk in chunks {
                        while chunk.readableBytes > Self.sliceSize, let slice = chunk.readSlice(length: Self.sliceSize)
                        {
                            try await writer.write(.byteBuffer(slice)).get()
                        }
                        try await writer.write(.byteBuffer(chunk)).get()
                    }
                    written.succeed(())
                } catch {
                    written.fail(error)
                }
            }
            let isEnded = self.state.withLockedValue { state in
                state.task = task
                return state.isEnded
            }
            if isEnded { task.cancel() }
            return written.futureResult
        }
    }

    /// Cancels the writing task, once the exchange is over.
    func end() {
        state.withLockedValue { state in
            state.isEnded = true
            defer { state.task = nil }
            return state.task
        }?.cancel()
    }
}
