import AsyncHTTPClient
import Courier
import Foundation
import NIOHTTP2
import Testing

@testable import CourierAsyncHTTPClient
@testable import CourierCore

/// AsyncHTTPClient errors keep their meaning as Courier codes.
@Suite struct TransportErrorMappingTests {
    @Test func asyncHTTPClientCancellationIsCancelled() throws {
        let url = try #require(URL(string: "http://127.0.0.1:9/x"))
        #expect(AsyncHTTPClientTransport.courierError(from: HTTPClientError.cancelled, url: url).code == .cancelled)
        #expect(
            AsyncHTTPClientTransport.courierError(from: HTTPClientError.deadlineExceeded, url: url).code == .timedOut)
    }
}

extension TransportErrorMappingTests {
    @Test func everyMappedAsyncHTTPClientErrorKeepsItsCode() throws {
        let url = try #require(URL(string: "http://127.0.0.1:9/x"))
        let cases: [(HTTPClientError, CourierError.Code)] = [
            (.cancelled, .cancelled), (.requestStreamCancelled, .cancelled), (.readTimeout, .timedOut),
            (.connectTimeout, .timedOut), (.remoteConnectionClosed, .connectionFailed),
            (.bodyLengthMismatch, .bodyLengthMismatch), (.invalidURL, .transportFailed),
        ]
        for (error, code) in cases {
            #expect(AsyncHTTPClientTransport.courierError(from: error, url: url).code == code, "\(error)")
        }
    }
}

extension TransportErrorMappingTests {
    /// A failed connection is said in words, with the host and port, from real failures: a port
    /// nothing listens on. (A name that does not resolve is not tried: that would ask a resolver.)
    @Test func connectionFailuresSayWhatHappened() async throws {
        let transport = AsyncHTTPClientTransport.shared
        for (text, expected) in [
            (
                "http://127.0.0.1:1/x",
                "cannot connect to http://127.0.0.1:1/x: the connection was refused (nothing listens at 127.0.0.1:1)"
            ),
            (
                "http://[::1]:1/",
                "cannot connect to http://[::1]:1/: the connection was refused (nothing listens at [::1]:1)"
            ),
        ] {
            let url = try #require(URL(string: text))
            do {
                _ = try await transport.send(Request(url: url), context: ExchangeContext())
                Issue.record("\(text) answered")
            } catch let error as CourierError {
                #expect(error.code == .connectionFailed, "\(error)")
                // An IPv6 loopback may be missing in a container; then it is another failure, still typed.
                if text.contains("[::1]"), error.message != expected { continue }
                #expect(error.message == expected)
            }
        }
    }
}

/// Response header names keep the server's spelling whether or not they hit the shared-name table.
@Suite struct ResponseFieldNameTests {
    @Test func commonAndUncommonNamesKeepTheirSpellingAndMatchCaseInsensitively() throws {
        for raw in ["Content-Type", "content-type", "CONTENT-LENGTH", "X-Custom", "ETag", "etag"] {
            let name = try #require(AsyncHTTPClientTransport.fieldName(raw))
            #expect(name.rawName == raw)
            #expect(name.canonicalName == raw.lowercased())
        }
        #expect(AsyncHTTPClientTransport.fieldName("Bad Name") == nil)
        #expect(AsyncHTTPClientTransport.fieldName("") == nil)
    }
}

/// HTTP/2 error codes read as RFC 9113 §7 names them, and by number past the RFC's table.
@Suite struct HTTP2ErrorCodeNameTests {
    @Test func codesHaveTheirRFCNames() {
        #expect(HTTP2ErrorCode.noError.rfcName == "NO_ERROR")
        #expect(HTTP2ErrorCode.refusedStream.rfcName == "REFUSED_STREAM")
        #expect(HTTP2ErrorCode.enhanceYourCalm.rfcName == "ENHANCE_YOUR_CALM")
        #expect(HTTP2ErrorCode.http11Required.rfcName == "HTTP_1_1_REQUIRED")
        #expect(HTTP2ErrorCode(networkCode: 0xe).rfcName == "error code 14")
    }
}
