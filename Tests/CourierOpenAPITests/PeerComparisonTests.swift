import Courier
import CourierOpenAPI
import CourierOpenAPIExample
import CourierTestServer
import Foundation
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import Testing

/// The same generated client over CourierClientTransport and over swift-openapi-async-http-client's
/// transport, against one server: what the server received for every operation, and what came back.
@Suite("CourierOpenAPI: the generated client over Courier and over OpenAPIAsyncHTTPClient", .timeLimit(.minutes(3)))
struct PeerComparisonTests {
    /// What a request carried, as far as the two transports are meant to agree: the method, the
    /// target (the run's own id taken out) and the headers the generated client sets or the body
    /// decides. Accept-Encoding and User-Agent are each transport's own.
    struct Received: Equatable, CustomStringConvertible {
        var method: String
        var uri: String
        var headers: [String: String]

        init(_ head: RecordedRequestHead, runID: String) {
            method = head.method
            uri = head.uri.replacingOccurrences(of: runID, with: "RUN")
            var headers: [String: String] = [:]
            for name in ["Content-Type", "Content-Length", "Transfer-Encoding", "Accept", "X-Request-Tag"] {
                if let value = head.value(name) { headers[name] = value }
            }
            self.headers = headers
        }

        var description: String { "\(method) \(uri) \(headers.sorted { $0.key < $1.key })" }
    }

    /// Runs the example's every operation over `transport`; what the server received and the lines.
    static func run(_ transport: any ClientTransport, on server: TestServer, runID: String) async
        -> (received: [Received], lines: [String])
    {
        server.resetStats()
        let lines = await ExampleTour.run(over: transport, serverURL: server.baseURL, runID: runID)
        return (server.stats.recentRequestHeads.map { Received($0, runID: runID) }, lines)
    }

    @Test("the server receives the same requests from both; Courier adds the redirect's resend and the retry")
    func sameRequests() async throws {
        try await withServer { server in
            let courier = await Self.run(ExampleTour.courierTransport(), on: server, runID: "courier")
            let peer = await Self.run(
                OpenAPIAsyncHTTPClient.AsyncHTTPClientTransport(), on: server, runID: "peer")

            // Courier's extra requests: the 307's resend to /upload and the flaky endpoint's retry,
            // each carrying the same body framing as the request before it.
            var courierReceived = courier.received
            let redirect = try #require(courierReceived.firstIndex { $0.uri.hasPrefix("/redirect-to") })
            try #require(redirect + 1 < courierReceived.count)
            let resend = courierReceived.remove(at: redirect + 1)
            #expect(resend.uri == "/upload")
            #expect(resend.method == "POST")
            #expect(resend.headers["Content-Length"] == "1048576")
            let retries = courierReceived.indices.filter { $0 > 0 && courierReceived[$0] == courierReceived[$0 - 1] }
            #expect(retries.count == 1)
            #expect(retries.first.map { courierReceived[$0].uri.hasPrefix("/fault/flaky") } == true)
            for index in retries.reversed() { courierReceived.remove(at: index) }

            #expect(courierReceived == peer.received)
            #expect(courierReceived.count == 9)

            // The same answers, but for the two operations only Courier completes.
            let differing: Set<String> = ["uploadThroughRedirect", "putFlaky"]
            let courierLines = courier.lines.filter { !differing.contains(String($0.prefix { $0 != ":" })) }
            let peerLines = peer.lines.filter { !differing.contains(String($0.prefix { $0 != ":" })) }
            #expect(courierLines == peerLines)
            #expect(courier.lines.contains("uploadThroughRedirect: 200 POST bytes=1048576"))
            #expect(peer.lines.contains("uploadThroughRedirect: error UnexpectedAnswer"))
            #expect(courier.lines.contains("putFlaky: 200 attempt=2 json.message=hello"))
            #expect(peer.lines.contains("putFlaky: 503 attempt=1"))
        }
    }
}
