import AsyncHTTPClient
import Foundation
import Testing

@testable import Courier

/// AsyncHTTPClient errors keep their meaning as Courier codes.
@Suite struct TransportErrorMappingTests {
    @Test func asyncHTTPClientCancellationIsCancelled() throws {
        let url = try #require(URL(string: "http://127.0.0.1:9/x"))
        #expect(AsyncHTTPClientTransport.courierError(from: HTTPClientError.cancelled, url: url).code == .cancelled)
        #expect(AsyncHTTPClientTransport.courierError(from: HTTPClientError.deadlineExceeded, url: url).code == .timedOut)
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
