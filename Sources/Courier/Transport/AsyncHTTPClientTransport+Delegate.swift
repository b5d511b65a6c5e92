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
    /// As on the async path, a request whose pooled keep-alive connection turned out to be closed
    /// before anything went out (`ioOnClosedChannel`) is sent once more on a fresh connection. A
    /// request whose HTTP/2 stream the server retired before answering (``RetiredStream``) is sent
    /// again, up to ``RetiredStream/maximumResends`` times; the pool no longer picks a connection
    /// that received GOAWAY, so the resend goes out on another one.
    func sendThroughDelegate(
        _ request: Request, via client: HTTPClient, deadline: NIODeadline?,
        uploadProgress: (@Sendable (Int64) -> Void)?, cancellation: ExchangeCancellation,
        makeBody: () throws -> (HTTPClient.Body?, FileRegionBody?)
    ) async throws -> TransportResponse {
        let url = request.url
        var mayResend = request.body.isReplayable
        var retiredResends = 0
        while true {
            let (body, fileBody) = try makeBody()
            let delegate = StreamingResponseDelegate(
                uploadProgress: uploadProgress, idleReadTimeout: configuration.readTimeout, sendsBody: body != nil)
            let task: HTTPClient.Task<Void>
            do {
                let outgoing = try HTTPClient.Request(
                    url: url, method: NIOHTTP1.HTTPMethod(rawValue: request.method.rawValue),
                    headers: Self.headers(from: request.headerFields), body: body)
                task = client.execute(
                    request: outgoing, delegate: delegate, eventLoop: .indifferent, deadline: deadline)
            } catch {
                fileBody?.close()
                throw Self.courierError(from: error, url: url)
            }
            fileBody?.attach(to: task)
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
            } catch let error as ChannelError where error == .ioOnClosedChannel && mayResend {
                mayResend = false
                continue
            } catch where retiredResends < RetiredStream.maximumResends && request.body.isReplayable
                && (RetiredStream(error)?.allowsResend(of: request.method) == true
                    || isUnsentOnAClosingConnection(error, delegate: delegate))
            {
                retiredResends += 1
                continue
            } catch {
                task.cancel()
                throw Self.courierError(from: error, url: url)
            }
            let head = Self.responseHead(status: responseHead.status, headers: responseHead.headers, url: url)
            return TransportResponse(
                head: head,
                body: BodyChunks(makeIterator: {
                    BodyChunks.AsyncIterator {
                        do {
                            return try await exchange.delegate.nextBodyPart(onCancel: { exchange.task.cancel() })
                        } catch {
                            throw Self.courierError(from: error, url: url)
                        }
                    }
                }))
        }
    }
}

extension AsyncHTTPClientTransport {
    /// True when AsyncHTTPClient reported `cancelled` for an exchange that nobody cancelled: the
    /// pool handed the request to an HTTP/2 connection just as a GOAWAY closed it, and the
    /// request failed before a stream was made, so nothing was written (1.37's
    /// `HTTP2Connection`: `executeRequest` and stream creation on a closing connection).
    func isUnsentOnAClosingConnection(_ error: any Error, delegate: StreamingResponseDelegate) -> Bool {
        guard let error = error as? HTTPClientError, error == .cancelled else { return false }
        return !delegate.wasCancelledByCourier && !isShutDown && !Task.isCancelled
    }
}

/// A request sent through the delegate API and its response stream. Dropping the last reference
/// before the response has ended cancels the request, as dropping an async response body does.
private final class DelegatedExchange: Sendable {
    let task: HTTPClient.Task<Void>
    let delegate: StreamingResponseDelegate

    init(task: HTTPClient.Task<Void>, delegate: StreamingResponseDelegate) {
        self.task = task
        self.delegate = delegate
    }

    deinit {
        if !delegate.isComplete { task.cancel() }
    }
}
