import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// Collects a response for the raw peers on AsyncHTTPClient's delegate API (the API Courier's
/// transport uses). AsyncHTTPClient calls it on the task's event loop, one call at a time, so the
/// state needs no lock.
final class CollectingDelegate: HTTPClientResponseDelegate, @unchecked Sendable {
    struct Answer: Sendable {
        var status: HTTPResponseStatus = .ok
        var version: HTTPVersion = .http1_1
        var body = Data()
    }

    private var answer = Answer()

    func didReceiveHead(task: HTTPClient.Task<Answer>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        answer.status = head.status
        answer.version = head.version
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Answer>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        answer.body.append(contentsOf: buffer.readableBytesView)
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<Answer>) throws -> Answer { answer }
}
