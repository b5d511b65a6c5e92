import AsyncHTTPClient
import Foundation
import Testing

@testable import Courier

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
