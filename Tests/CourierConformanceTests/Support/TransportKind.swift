import Courier
import CourierTestServer
import CourierTesting
import CourierURLSession
import Foundation
import Testing

/// The transports every conformance case runs against.
enum TransportKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case asyncHTTPClient
    case urlSession
    case scripted

    /// The transports that open connections: cases about the wire (framing, refused connections,
    /// TLS, malformed responses, bodies cut or cancelled mid-way) apply to these only. A scripted
    /// transport has no wire, so those cases are not applicable to it by construction.
    static let network: [TransportKind] = [.asyncHTTPClient, .urlSession]

    var testDescription: String { rawValue }

    /// A new transport of this kind (the scripted one answers as the test server would).
    func makeTransport() -> any Transport {
        switch self {
        case .asyncHTTPClient:
            // A ratio-free size of 1 MiB instead of 1 GiB, so that the bomb case stays small.
            var configuration = AsyncHTTPClientTransport.Configuration()
            configuration.decompressionRatioFreeSize = 1 << 20
            return AsyncHTTPClientTransport(configuration: configuration)
        case .urlSession: return URLSessionTransport()
        case .scripted: return ScriptedTransport(script: ScriptedServer.answer)
        }
    }

    /// True for URLSession on Linux, where FoundationNetworking has the limits the README lists.
    var isFoundationNetworking: Bool {
        #if canImport(FoundationNetworking)
            return self == .urlSession
        #else
            return false
        #endif
    }
}

/// A transport of one kind and, for network kinds, a test server to talk to; torn down after.
struct Harness: Sendable {
    let kind: TransportKind
    let transport: any Transport
    let server: TestServer?

    /// The URL of `pathAndQuery` on the server (or on the scripted host).
    func url(_ pathAndQuery: String) -> URL {
        if let server { return server.url(pathAndQuery) }
        return URL(string: "http://scripted.test" + pathAndQuery) ?? URL(fileURLWithPath: "/")
    }

    @discardableResult
    static func with<R>(_ kind: TransportKind, _ body: (Harness) async throws -> R) async throws -> R {
        let server = kind == .scripted ? nil : try await TestServer.start()
        let harness = Harness(kind: kind, transport: kind.makeTransport(), server: server)
        do {
            let result = try await body(harness)
            try? await harness.transport.shutdown()
            try await server?.shutdown()
            return result
        } catch {
            try? await harness.transport.shutdown()
            try? await server?.shutdown()
            throw error
        }
    }

    /// Sends `request` and reads the whole body.
    func exchange(
        _ request: Request, context: ExchangeContext = ExchangeContext()
    ) async throws -> (head: ResponseHead, body: Data) {
        let response = try await transport.send(request, context: context)
        var data = Data()
        for try await chunk in response.body { data.append(contentsOf: chunk.readableBytesView) }
        return (response.head, data)
    }
}

/// Expects `body` to throw a ``CourierError`` with `code`; returns the error.
@discardableResult
func expectCode<R>(
    _ code: CourierError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> R
) async -> CourierError? {
    do {
        _ = try await body()
        Issue.record("expected \(code), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as CourierError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

/// The JSON object in `data`.
func jsonObject(_ data: Data, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
    let object = try JSONSerialization.jsonObject(with: data)
    return try #require(object as? [String: Any], sourceLocation: sourceLocation)
}

/// The value of `name` in an echoed `headers` object, matched case-insensitively.
func header(_ name: String, in document: [String: Any]) -> String? {
    guard let headers = document["headers"] as? [String: Any] else { return nil }
    return headers.first { $0.key.lowercased() == name.lowercased() }?.value as? String
}
