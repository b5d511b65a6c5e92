import Courier
import CourierTestServer
import Foundation
import Testing

@testable import CourierCore

/// The serializers on real exchanges: SessionManager against the in-process test server.
@Suite(.timeLimit(.minutes(3))) struct ResponseSerializerSessionTests {
    struct Echo: Decodable, Sendable {
        var url: String
        var args: [String: String]
    }

    func withSession(_ body: (SessionManager, TestServer) async throws -> Void) async throws {
        let server = try await TestServer.start()
        let manager = SessionManager()
        var failure: (any Error)?
        do { try await body(manager, server) } catch { failure = error }
        try await manager.shutdown()
        try await server.shutdown()
        if let failure { throw failure }
    }

    func serializationError<S: ResponseSerializer>(
        _ manager: SessionManager, _ request: Request, _ serializer: S
    ) async -> CourierError? {
        do {
            _ = try await manager.data(for: request, serializer: serializer)
            return nil
        } catch {
            return error as? CourierError
        }
    }

    @Test func jsonAndDecodableFromAnEchoEndpoint() async throws {
        try await withSession { manager, server in
            let request = Request(url: server.url("/get?q=swift"))
            let json = try await manager.data(for: request, serializer: JSONResponseSerializer())
            #expect(json.value?["args"]?["q"] == "swift")
            #expect(json.value?["url"]?.stringValue == server.url("/get?q=swift").absoluteString)
            let echo = try await manager.data(for: request, serializer: DecodableResponseSerializer(Echo.self))
            #expect(echo.value.args == ["q": "swift"])
            #expect(echo.value.url == json.value?["url"]?.stringValue)
        }
    }

    @Test func statusErrorCarriesTheRealResponse() async throws {
        try await withSession { manager, server in
            let error = try #require(
                await serializationError(manager, Request(url: server.url("/status/418")), JSONResponseSerializer()))
            #expect(error.code == .unacceptableStatusCode)
            #expect(error.response?.statusCode == 418)
            #expect(error.responseData != nil)
        }
    }

    @Test func emptyResponsesFromTheServer() async throws {
        try await withSession { manager, server in
            let noContent = try await manager.data(
                for: Request(url: server.url("/status/204")), serializer: JSONResponseSerializer())
            #expect(noContent.value == nil)
            let head = try await manager.data(
                for: Request(method: .head, url: server.url("/get")), serializer: JSONResponseSerializer())
            #expect(head.value == nil)
            #expect(head.data.isEmpty)
            let headData = try await manager.data(
                for: Request(method: .head, url: server.url("/get")), serializer: DataResponseSerializer())
            #expect(headData.value.isEmpty)
        }
    }

    @Test func bytesAreNotJSON() async throws {
        try await withSession { manager, server in
            let error = try #require(
                await serializationError(manager, Request(url: server.url("/bytes/16")), JSONResponseSerializer()))
            #expect(error.code == .unacceptableContentType)
            #expect(error.responseData?.count == 16)
            let data = try await manager.data(
                for: Request(url: server.url("/bytes/16")), serializer: DataResponseSerializer())
            #expect(data.value.count == 16)
        }
    }
}
