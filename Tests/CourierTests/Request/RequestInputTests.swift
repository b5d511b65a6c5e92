import Courier
import CourierTestServer
import Foundation
import Testing

@testable import CourierAsyncHTTPClient
@testable import CourierCore

/// Bad input from callers that the other suites cover only in passing: method tokens, header
/// names and URL schemes. Each is a typed error quoting the input, before anything is sent.
@Suite("Bad input: method tokens, header names, URL schemes", .timeLimit(.minutes(3)))
struct RequestInputTests {
    @Test(arguments: ["", "G T", "GET\r\n", "GET\nX-Injected: 1", "G\0T", "GÉT", "GET/1", "(GET)", "\u{1F600}"])
    func invalidMethodTokensAreTypedErrorsQuotingThem(_ token: String) {
        #expect(HTTPMethod(token) == nil)
        do {
            _ = try HTTPMethod(validating: token)
            Issue.record("\(token.debugDescription) was accepted as a method")
        } catch let error as CourierError {
            #expect(error.code == .invalidMethod)
            #expect(error.offendingInput == token)
        } catch {
            Issue.record("expected a CourierError, got \(error)")
        }
    }

    @Test func everyRFC9110TokenCharacterIsAValidMethod() throws {
        let token = "!#$%&'*+-.^_`|~09AZaz"
        #expect(try HTTPMethod(validating: token).rawValue == token)
    }

    @Test(arguments: ["", "X Bad", "X-Bad\r\nX-Injected", "X-Bad\n", "X\0Bad", "X-Bäd", "X:Bad", "(X)"])
    func headerNamesThatAreNotTokensAreTypedErrors(_ name: String) throws {
        let manager = HTTPSessionManager(baseURL: URL(string: "http://127.0.0.1/"), transport: NoTransport())
        let error = try #require(throws: CourierError.self) {
            try manager.request(.get, "get", headers: [name: "value"])
        }
        #expect(error.code == .invalidHeader)
        #expect(error.offendingInput == name)
        // The same check guards every other way a header enters a request.
        #expect(throws: CourierError.self) { try HeaderField.make(name: name, value: "value") }
    }

    @Test(arguments: ["\r", "\n", "\0", "a\r\nX-Injected: 1"])
    func headerValuesWithCRLFOrNULAreTypedErrorsQuotingThem(_ value: String) throws {
        let manager = HTTPSessionManager(baseURL: URL(string: "http://127.0.0.1/"), transport: NoTransport())
        let error = try #require(throws: CourierError.self) {
            try manager.request(.get, "get", headers: ["X-Value": value])
        }
        #expect(error.code == .invalidHeader)
        #expect(error.offendingInput == value)
    }

    /// Schemes other than http and https, and URLs without a host, reach no server:
    /// `.unsupportedScheme`, quoting the URL.
    @Test(arguments: [
        "ftp://127.0.0.1:9/file", "file:///etc/passwd", "gopher://127.0.0.1:9/", "ws://127.0.0.1:9/",
        "data:text/plain,hello", "http:///no-host",
    ])
    func unsupportedSchemesAreTypedErrorsQuotingTheURL(_ text: String) async throws {
        let url = try #require(URL(string: text))
        try await withFaultSession { _, manager, _ in
            let error = await expectFailure([.unsupportedScheme]) {
                try await manager.data(for: Request(url: url))
            }
            #expect(error?.offendingInput == url.absoluteString)
        }
    }
}

extension FaultInjectionTests {
    /// A download whose connection closes partway: a typed error, no file at the destination,
    /// no temporary file and no descriptor left open on one; the manager keeps working.
    @Test(arguments: ["", "&reset=1"])
    func aConnectionClosedMidDownloadLeavesNoFileAndNoOpenDescriptor(_ ending: String) async throws {
        try await withFaultSession { server, manager, directory in
            let destination = directory.appendingPathComponent("never-written.bin")
            await expectFailure([.connectionFailed, .transportFailed]) {
                try await manager.download(
                    Request(url: server.url("/fault/close-mid-response?after=300000&total=600000\(ending)")),
                    destination: { _, _ in destination })
            }
            #expect(!FileManager.default.fileExists(atPath: destination.path))
            let left = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(left.isEmpty, "left behind: \(left)")
            if let open = ProcessProbe.descriptorCount(under: directory) { #expect(open == 0) }
            let recovered = try await manager.download(
                Request(url: server.url("/bytes/1000")), destination: { _, _ in destination })
            #expect(try Data(contentsOf: try #require(recovered.fileURL)).count == 1_000)
        }
    }
}
