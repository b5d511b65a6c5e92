import NIOCore
import NIOHTTP1

/// What a body consumer wants after a chunk.
enum BodyVerdict {
    case proceed
    /// Answer now, before the body has ended; the connection closes after the answer.
    case answerEarly(ResponsePlan)
}

/// Receives a request's body as it arrives and decides the response when it ends.
protocol RequestBodyConsumer: AnyObject {
    /// An answer to send as soon as the head is in, without waiting for the body (a 413 for a
    /// declared length over the cap, a fault that cuts the connection before any body byte).
    var answerBeforeBody: ResponsePlan? { get }
    func consume(_ chunk: ByteBuffer) -> BodyVerdict
    func finish() -> ResponsePlan
}

extension RequestBodyConsumer {
    var answerBeforeBody: ResponsePlan? { nil }
}

/// Answers as soon as the head is in; the connection closes after the answer, since the
/// body that may follow is not read.
final class ImmediateAnswer: RequestBodyConsumer {
    private let plan: ResponsePlan

    init(_ plan: ResponsePlan) { self.plan = plan }

    var answerBeforeBody: ResponsePlan? { plan }
    func consume(_ chunk: ByteBuffer) -> BodyVerdict { .answerEarly(plan) }
    func finish() -> ResponsePlan { plan }
}

/// Ignores the body (counting it) and answers with a fixed plan.
final class DiscardingBody: RequestBodyConsumer {
    private let respond: (Int) -> ResponsePlan
    private var received = 0

    init(_ respond: @escaping (_ bodyBytes: Int) -> ResponsePlan) { self.respond = respond }
    convenience init(_ plan: ResponsePlan) { self.init { _ in plan } }

    func consume(_ chunk: ByteBuffer) -> BodyVerdict {
        received += chunk.readableBytes
        return .proceed
    }

    func finish() -> ResponsePlan { respond(received) }
}

/// Collects the body up to a cap; over the cap the answer is 413 and the connection closes.
final class BufferedBody: RequestBodyConsumer {
    /// The default cap on a buffered request body.
    static let defaultLimit = 64 * 1024 * 1024

    private let limit: Int
    private let respond: (ByteBuffer) -> ResponsePlan
    private var buffer = ByteBuffer()

    init(
        limit: Int = BufferedBody.defaultLimit, expectedLength: Int?, _ respond: @escaping (ByteBuffer) -> ResponsePlan
    ) {
        self.limit = limit
        self.respond = respond
        if let expectedLength, expectedLength <= limit {
            buffer.reserveCapacity(expectedLength)
        }
    }

    func consume(_ chunk: ByteBuffer) -> BodyVerdict {
        guard buffer.readableBytes + chunk.readableBytes <= limit else {
            return .answerEarly(
                .error(
                    .payloadTooLarge,
                    "the request body exceeds the server's buffering limit of \(limit) bytes; use /upload for large bodies"
                ))
        }
        if buffer.readableBytes == 0 && buffer.capacity == 0 {
            buffer = chunk
        } else {
            var incoming = chunk
            buffer.writeBuffer(&incoming)
        }
        return .proceed
    }

    func finish() -> ResponsePlan { respond(buffer) }
}
