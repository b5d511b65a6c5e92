import Courier
import HTTPTypes
import NIOCore
import OpenAPIRuntime

/// A Courier ``/CourierCore/StreamedResponse`` as OpenAPIRuntime's response and body.
enum OpenAPIResponseConversion {
    /// The head as an `HTTPResponse`, and the body still streaming as a `.single` `HTTPBody`;
    /// nil for a response that has no body by definition (to HEAD; 1xx, 204, 304), which is
    /// read to its end here so that its connection is free for reuse.
    /// - Throws: ``/CourierCore/CourierError`` from reading a body that should be empty.
    static func response(_ streamed: StreamedResponse, method: HTTPRequest.Method) async throws
        -> (HTTPResponse, HTTPBody?)
    {
        let head = streamed.head
        let response = HTTPResponse(status: head.status, headerFields: head.headerFields)
        let status = head.statusCode
        if method == .head || (100..<200).contains(status) || status == 204 || status == 304 {
            for try await _ in streamed.body {}
            return (response, nil)
        }
        // A decoded body (the transport decompresses) has a length the header does not state.
        var length = HTTPBody.Length.unknown
        if let declared = head.expectedContentLength, !hasContentCoding(head.headerFields) {
            length = .known(declared)
        }
        let body = HTTPBody(ResponseBodyBytes(body: streamed.body), length: length, iterationBehavior: .single)
        return (response, body)
    }

    /// True when `Content-Encoding` names a coding other than identity.
    private static func hasContentCoding(_ fields: HTTPFields) -> Bool {
        fields.contains { $0.name == .contentEncoding && $0.value.lowercased() != "identity" }
    }
}

/// A streamed response body as `HTTPBody` chunks: each `ByteBuffer` copied once into an
/// `ArraySlice`, pulled one at a time, so the transport's backpressure reaches the reader.
struct ResponseBodyBytes: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>

    let body: StreamedResponse.Body

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: body.makeAsyncIterator()) }

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: StreamedResponse.Body.AsyncIterator

        mutating func next() async throws -> ArraySlice<UInt8>? {
            guard let buffer = try await base.next() else { return nil }
            return ArraySlice(buffer.readableBytesView)
        }
    }
}
