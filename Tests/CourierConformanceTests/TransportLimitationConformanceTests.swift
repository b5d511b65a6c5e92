import Courier
import Foundation
import HTTPTypes
import NIOCore
import Testing

/// Cases every transport should pass and FoundationNetworking (URLSession on Linux) cannot:
/// each is run against every transport and, for URLSession on Linux, marked a known issue with
/// the cause. They fail loudly the day FoundationNetworking stops having the limit.
@Suite("Transport conformance: platform limits", .timeLimit(.minutes(3)))
struct TransportLimitationConformanceTests {
    @Test("a GET may carry a body", arguments: TransportKind.allCases)
    func getWithBody(_ kind: TransportKind) async throws {
        try await Harness.with(kind) { harness in
            try await withKnownIssue(
                """
                FoundationNetworking's _HTTPURLProtocol.configureEasyHandle fails any GET whose body is \
                not .none ("GET method must not have a body", NSURLErrorDataLengthExceedsMaximum); the \
                transport refuses it up front with .unsupportedBody
                """
            ) {
                let request = Request(method: .get, url: harness.url("/anything"), body: .data(Data("query".utf8)))
                let (_, body) = try await harness.exchange(request)
                #expect(try jsonObject(body)["data"] as? String == "query")
            } when: {
                kind.isFoundationNetworking
            }
        }
    }

    @Test("repeated response fields arrive as separate fields", arguments: TransportKind.allCases)
    func repeatedResponseFields(_ kind: TransportKind) async throws {
        try await Harness.with(kind) { harness in
            let (head, _) = try await harness.exchange(
                Request(url: harness.url("/response-headers?X-Repeated=first&X-Repeated=second")))
            let name = try #require(HTTPField.Name("X-Repeated"))
            withKnownIssue(
                """
                HTTPURLResponse.allHeaderFields is a dictionary: FoundationNetworking joins repeated \
                fields into one value ("first, second"); only Set-Cookie is split again by the transport
                """
            ) {
                #expect(head.headerFields[values: name] == ["first", "second"])
            } when: {
                kind.isFoundationNetworking
            }
        }
    }

    @Test("a streamed body without Content-Type goes out without one", arguments: TransportKind.allCases)
    func noInventedContentType(_ kind: TransportKind) async throws {
        try await Harness.with(kind) { harness in
            let chunks = [ByteBuffer(string: "one "), ByteBuffer(string: "two")]
            let request = Request(
                method: .post, url: harness.url("/anything"), body: .stream(length: nil) { chunks.async })
            let (_, body) = try await harness.exchange(request)
            let document = try jsonObject(body)
            #expect(document["data"] as? String == "one two" || document["form"] != nil)
            // FoundationNetworking adds "Content-Type: application/x-www-form-urlencoded" to a POST
            // with a body stream or httpBody and none of its own; URLSessionTransport sends bodies
            // with uploadTask(with:from:) and uploadTask(with:fromFile:), which add none.
            #expect(header("Content-Type", in: document) == nil)
        }
    }

    @Test("a decoded body is marked as decoded, so no download of it is resumed", arguments: TransportKind.network)
    func decodedBodiesAreMarked(_ kind: TransportKind) async throws {
        try await Harness.with(kind) { harness in
            for (path, decoded) in [("/gzip", true), ("/deflate", true), ("/get", false)] {
                let response = try await harness.transport.send(
                    Request(url: harness.url(path)), context: ExchangeContext())
                #expect(response.bodyIsDecoded == decoded, "\(path)")
                var body = Data()
                for try await chunk in response.body { body.append(contentsOf: chunk.readableBytesView) }
                #expect(body.first == UInt8(ascii: "{"), "\(path): the body as JSON, decoded")
            }
        }
    }

    @Test(
        "a decompression bomb is stopped past the ratio-free size at the ratio limit", arguments: TransportKind.network)
    func decompressionBomb(_ kind: TransportKind) async throws {
        try await Harness.with(kind) { harness in
            await withKnownIssue(
                """
                libcurl decodes gzip and deflate itself (FoundationNetworking sets CURLOPT_ACCEPT_ENCODING) \
                with no ratio limit: the 16 MiB of zeros arrive whole
                """
            ) {
                await expectCode(.decompressionLimitExceeded) {
                    // Read and dropped, never gathered: a transport without a limit delivers it all.
                    let response = try await harness.transport.send(
                        Request(url: harness.url("/gzip-bomb?size=16777216")), context: ExchangeContext())
                    for try await _ in response.body {}
                }
            } when: {
                kind.isFoundationNetworking
            }
        }
    }
}
