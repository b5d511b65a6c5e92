import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// The delegate-API path: bodies with file regions (sendfile), and bodies wholly in memory.
///
/// The delegate API is the only one that can write a `FileRegion`. For responses it also reads
/// ahead: ``StreamingResponseDelegate`` keeps up to a mebibyte of body waiting for the reader,
/// so a small body is usually whole by the time it is read, and a large download keeps the
/// socket busy while the reader writes to disk, where the async API's body stream (watermarks
/// 1 and 1) pauses the socket after every chunk. Streamed request bodies (TLS file uploads,
/// body streams, throttled forms) stay on the async API.
extension AsyncHTTPClientTransport {
    /// Largest in-memory body that goes out in one write when upload progress is wanted; larger
    /// ones stream in slices so progress moves (see `UploadProgressChunks`).
    static let singleWriteProgressLimit = UploadProgressChunks.sliceSize

    /// The body when it is wholly in memory (an empty buffer for POST, PUT and PATCH without a
    /// body; `.some(nil)` for no body at all); nil when it must stream.
    static func wholeBodyBytes(of request: Request, uploadProgress: (@Sendable (Int64) -> Void)?) -> ByteBuffer?? {
        let body = request.body
        if body.isEmpty {
            // A POST, PUT or PATCH without a body still says so with Content-Length: 0.
            switch request.method {
            case .post, .put, .patch: return .some(ByteBuffer())
            default: return .some(nil)
            }
        }
        guard let bytes = body.bufferedBytes else { return nil }
        if uploadProgress != nil, bytes.readableBytes > singleWriteProgressLimit { return nil }
        return .some(bytes)
    }

    /// Sends `request` through the delegate API and gives the response the same streaming shape
    /// as the async API. `makeBody` makes the body for each attempt; its `FileRegionBody`, when
    /// there is one, is watched and closed with that attempt.
    ///
    /// An exchange that fails before its response head in a way ``UnansweredExchange`` says is
    /// safe goes out again on another connection (the pool no longer picks one that is closed or
    /// received GOAWAY), at most ``UnansweredExchange/maximumResends`` times.
    func sendThroughDelegate(
        _ request: Request, via client: HTTPClient, deadline: NIODeadline?,
        uploadProgress: (@Sendable (Int64) -> Void)?, cancellation: ExchangeCancellation,
        recorder: ExchangeRecorder? = nil, readAheadLimit: Int? = nil, lendsFiles: Bool = false,
        makeBody: () throws -> (HTTPClient.Body?, FileRegionBody?)
    ) async throws -> TransportResponse {
        let url = request.url
        let mayResend = request.body.isReplayable
        var budget = ResendBudget()
        while true {
            let (body, fileBody) = try makeBody()
            let delegate = StreamingResponseDelegate(
                uploadProgress: uploadProgress, idleReadTimeout: configuration.readTimeout, sendsBody: body != nil,
                recorder: recorder, connectionLedger: connectionLedger, bufferedByteLimit: readAheadLimit)
            let task: HTTPClient.Task<Void>
            do {
                let outgoing = try requestTemplates.request(
                    url: url, method: NIOHTTP1.HTTPMethod(rawValue: request.method.rawValue),
                    headers: Self.headers(from: request.headerFields, acceptEncoding: acceptEncoding), body: body)
                task = client.execute(
                    request: outgoing, delegate: delegate, eventLoop: .indifferent, deadline: deadline)
            } catch {
                fileBody?.close()
                throw Self.courierError(from: error, url: url)
            }
            fileBody?.attach(to: task, isRequestSent: { delegate.isRequestSent })
            cancellation.onCancel {
                delegate.noteCancelledByCourier()
                task.cancel()
            }
            if isShutDown {
                // A client that is shutting down hands back a task that has already failed
                // without telling its delegate; the delegate watches the task itself otherwise
                // (see `StreamingResponseDelegate.didSendRequestHead`).
                task.futureResult.whenFailure { delegate.fail($0) }
            }
            let exchange = DelegatedExchange(task: task, delegate: delegate)

            let responseHead: HTTPResponseHead
            do {
                responseHead = try await delegate.head(onCancel: {
                    delegate.noteCancelledByCourier()
                    task.cancel()
                })
            } catch  where mayResend {
                guard let unanswered = UnansweredExchange(error, cancelledByCourier: wasCancelledByCourier(delegate)),
                    unanswered.allowsResend(of: request.method), budget.spend(on: unanswered)
                else {
                    task.cancel()
                    throw Self.courierError(from: error, url: url)
                }
                // A moment for the pool to learn that the connection is going away, so the resend
                // is not handed to it, or to its equally retiring sibling, again.
                do {
                    try await Task.sleep(for: UnansweredExchange.pause(beforeResend: budget.spent))
                } catch {
                    throw Self.courierError(from: error, url: url)
                }
                continue
            } catch {
                task.cancel()
                throw Self.courierError(from: error, url: url)
            }
            let head = Self.responseHead(
                status: responseHead.status, headers: responseHead.headers, url: url, version: responseHead.version)
            let chunks = BodyChunks(
                makeIterator: {
                    BodyChunks.AsyncIterator {
                        do {
                            return try await exchange.delegate.nextBodyPart(onCancel: { exchange.task.cancel() })
                        } catch {
                            throw Self.courierError(from: error, url: url)
                        }
                    }
                }, fileWriter: lendsFiles ? exchange : nil)
            // The delegate alone, not the exchange: a kept control must not keep an exchange
            // whose body was dropped from being cancelled.
            return self.response(
                head: head, body: chunks,
                readAhead: ReadAheadControl(raise: { [delegate] in delegate.raiseBufferedByteLimit(to: $0) }))
        }
    }
}

extension AsyncHTTPClientTransport {
    /// Whether Courier itself ended the exchange: a cancel through the delegate, the calling
    /// task's cancellation, or the transport's shutdown.
    func wasCancelledByCourier(_ delegate: StreamingResponseDelegate) -> Bool {
        delegate.wasCancelledByCourier || isShutDown || Task.isCancelled
    }
}

/// A request sent through the delegate API and its response stream. Dropping the last reference
/// before the response has ended cancels the request, as dropping an async response body does.
private final class DelegatedExchange: BodyFileWriting {
    let task: HTTPClient.Task<Void>
    let delegate: StreamingResponseDelegate

    init(task: HTTPClient.Task<Void>, delegate: StreamingResponseDelegate) {
        self.task = task
        self.delegate = delegate
    }

    deinit {
        if !delegate.isComplete { task.cancel() }
    }

    func writeRest(to sink: BodyFileSink) async throws {
        try await delegate.writeRest(to: sink, task: task)
    }
}
