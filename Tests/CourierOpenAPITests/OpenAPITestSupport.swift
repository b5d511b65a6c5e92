import Courier
import CourierOpenAPI
import CourierTestServer
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing

/// A test server for one test, shut down after it whatever happens.
func withServer<R>(_ body: (TestServer) async throws -> R) async throws -> R {
    let server = try await TestServer.start()
    do {
        let result = try await body(server)
        try await server.shutdown()
        return result
    } catch {
        try? await server.shutdown()
        throw error
    }
}

/// The JSON object a server answered with.
func jsonObject(_ body: HTTPBody?) async throws -> [String: Any] {
    guard let body else { throw TestFailure("the response has no body") }
    let bytes = try await [UInt8](collecting: body, upTo: 16 << 20)
    guard let object = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
        throw TestFailure("the body is not a JSON object: \(String(decoding: bytes, as: UTF8.self))")
    }
    return object
}

/// A test's own failure, with a message.
struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Expects `body` to throw a ``CourierError`` with `code`, bare or under OpenAPIRuntime's
/// `ClientError`; returns it.
@discardableResult
func expectCourierError<R>(
    _ code: CourierError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> R
) async -> CourierError? {
    do {
        _ = try await body()
        Issue.record("expected \(code), nothing was thrown", sourceLocation: sourceLocation)
    } catch {
        let courierError = (error as? CourierError) ?? ((error as? ClientError)?.underlyingError as? CourierError)
        guard let courierError else {
            Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation)
            return nil
        }
        #expect(courierError.code == code, "\(courierError)", sourceLocation: sourceLocation)
        return courierError
    }
    return nil
}

extension CourierClientTransport {
    /// Sends a request built from its parts, as a generated client would.
    func send(
        _ method: HTTPRequest.Method, _ path: String, headers: HTTPFields = [:], body: HTTPBody? = nil,
        baseURL: URL, operationID: String = "test"
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = HTTPRequest(method: method, scheme: nil, authority: nil, path: path)
        request.headerFields = headers
        return try await send(request, body: body, baseURL: baseURL, operationID: operationID)
    }
}
