import Courier
import CourierOpenAPI
import Foundation
import OpenAPIRuntime

/// The example: every operation of `openapi.yaml`, called through the generated `Client`, over
/// any `ClientTransport` (Courier's, or another for comparison), against a running
/// CourierTestServer (`courier serve`, or one started in-process).
///
/// The generated code is internal to this module; what the tests and the command-line example
/// need is here, in terms of OpenAPIRuntime and Courier types only.
public enum ExampleTour {
    /// The per-operation policies of the example: the flaky endpoint is retried (its JSON body
    /// sent again), the big-body operations (the upload and the download) get a longer deadline
    /// than the rest, and redirects are capped. The tests send 256 MiB each way in a debug build
    /// beside the rest of the suite; 30 s was too short for the upload on a fresh CI clone.
    public static let configuration = CourierClientTransport.Configuration(
        operations: [
            "putFlaky": .init(retry: RetryPolicy(retryLimit: 2, exponentialBackoffScale: 0.01)),
            "upload": .init(timeout: .seconds(120)),
            "getBytes": .init(timeout: .seconds(120)),
        ],
        defaultPolicy: .init(timeout: .seconds(30), maximumRedirects: 5))

    /// Courier's transport with the example's ``configuration``, on `manager` (by default a
    /// session of its own).
    public static func courierTransport(manager: SessionManager = SessionManager()) -> CourierClientTransport {
        CourierClientTransport(manager: manager, configuration: configuration)
    }

    /// Calls every operation once, in the document's order, and returns a line per call: what
    /// the server answered, or the error (never thrown, so two transports can be compared line
    /// by line). `runID` keeps the flaky endpoint's attempt counter apart from other runs.
    public static func run(over transport: any ClientTransport, serverURL: URL, runID: String = UUID().uuidString)
        async -> [String]
    {
        let client = Client(serverURL: serverURL, transport: transport)
        let greeting = Components.Schemas.Greeting(message: "hello", count: 3)
        var lines: [String] = []
        func call(_ operation: String, _ body: () async throws -> String) async {
            do {
                lines.append("\(operation): \(try await body())")
            } catch {
                lines.append("\(operation): error \(describe(error))")
            }
        }

        await call("getEcho") {
            switch try await client.getEcho(query: .init(q: "swift"), headers: .init(xRequestTag: "tour")) {
            case .ok(let ok):
                let echo = try ok.body.json
                let tag = echo.headers.additionalProperties["X-Request-Tag"] ?? "-"
                return "200 q=\(text(echo.args.additionalProperties.value["q"])) tag=\(tag)"
            case .undocumented(let status, _): return "undocumented \(status)"
            }
        }
        await call("postGreeting") {
            switch try await client.postGreeting(body: .json(greeting)) {
            case .ok(let ok):
                let echo = try ok.body.json
                return "200 json.message=\(field(echo.json, "message")) json.count=\(field(echo.json, "count"))"
            case .undocumented(let status, _): return "undocumented \(status)"
            }
        }
        await call("putAnything") {
            switch try await client.putAnything(path: .init(name: "note"), body: .plainText("plain text")) {
            case .ok(let ok):
                let echo = try ok.body.json
                return "200 \(echo.method ?? "?") data=\(echo.data ?? "")"
            case .undocumented(let status, _): return "undocumented \(status)"
            }
        }
        await call("deleteAnything") {
            switch try await client.deleteAnything(path: .init(name: "note")) {
            case .ok(let ok): return "200 \(try ok.body.json.method ?? "?")"
            case .undocumented(let status, _): return "undocumented \(status)"
            }
        }
        await call("upload") {
            // 4 MiB in 64 KiB chunks, never held whole: a replayable body of known length.
            let report = try await upload(generatedBody(count: 4 << 20), over: transport, serverURL: serverURL)
            return "200 bytes=\(report.bytes) content_length=\(report.contentLength ?? "none")"
        }
        await call("getBytes") {
            var received = 0
            let length = try await download(count: 3 << 20, seed: 7, over: transport, serverURL: serverURL) {
                received += $0.count
            }
            return "200 received=\(received) declared=\(describe(length))"
        }
        await call("getStatus") {
            switch try await client.getStatus(path: .init(code: 418)) {
            case .code418(let teapot):
                let reply = try await String(collecting: teapot.body.plainText, upTo: 1 << 10)
                return "418 \(reply.trimmingCharacters(in: .whitespacesAndNewlines))"
            case .ok: return "200"
            case .default(let status, _): return "default \(status)"
            }
        }
        await call("uploadThroughRedirect") {
            let report = try await upload(
                generatedBody(count: 1 << 20), redirectStatus: 307, over: transport, serverURL: serverURL)
            return "200 \(report.method) bytes=\(report.bytes)"
        }
        await call("putFlaky") {
            switch try await client.putFlaky(query: .init(id: "tour-\(runID)", failures: 1), body: .json(greeting)) {
            case .ok(let ok):
                let echo = try ok.body.json
                return "200 attempt=\(echo.attempt ?? 0) json.message=\(field(echo.json, "message"))"
            case .serviceUnavailable(let failure): return "503 attempt=\(try failure.body.json.attempt)"
            case .undocumented(let status, _): return "undocumented \(status)"
            }
        }
        return lines
    }

    /// A closure that makes one `getEcho` call per invocation through one generated client (the
    /// benchmarks' small request) and returns the size of the echoed URL, or -1 for another status.
    public static func getEchoCaller(over transport: any ClientTransport, serverURL: URL)
        -> @Sendable () async throws -> Int
    {
        let client = Client(serverURL: serverURL, transport: transport)
        return {
            switch try await client.getEcho(query: .init(q: "bench")) {
            case .ok(let ok): return try ok.body.json.url.utf8.count
            case .undocumented: return -1
            }
        }
    }

    /// What /upload reported receiving.
    public struct UploadReport: Sendable, Equatable {
        /// The byte count.
        public var bytes: Int64
        /// The SHA-256 of the body, in lowercase hex.
        public var sha256: String?
        /// The `Content-Length` header the server saw, if any.
        public var contentLength: String?
        /// The `Transfer-Encoding` header the server saw, if any.
        public var transferEncoding: String?
        /// The method the body arrived with.
        public var method: String
    }

    /// Sends `body` to /upload through the generated client (`upload`), or with `redirectStatus`
    /// to /redirect-to first, which answers that status pointing at /upload
    /// (`uploadThroughRedirect`).
    /// - Throws: `ClientError` from the call; ``UnexpectedAnswer`` for another status.
    public static func upload(
        _ body: HTTPBody, redirectStatus: Int? = nil, over transport: any ClientTransport, serverURL: URL
    ) async throws -> UploadReport {
        let client = Client(serverURL: serverURL, transport: transport)
        let document: Components.Schemas.UploadDocument
        if let redirectStatus {
            switch try await client.uploadThroughRedirect(
                query: .init(url: "/upload", statusCode: redirectStatus), body: .binary(body))
            {
            case .ok(let ok): document = try ok.body.json
            case .undocumented(let status, _):
                throw UnexpectedAnswer(operation: "uploadThroughRedirect", status: status)
            }
        } else {
            switch try await client.upload(body: .binary(body)) {
            case .ok(let ok): document = try ok.body.json
            case .undocumented(let status, _): throw UnexpectedAnswer(operation: "upload", status: status)
            }
        }
        return UploadReport(
            bytes: document.bytes, sha256: document.sha256, contentLength: document.contentLength,
            transferEncoding: document.transferEncoding, method: document.method)
    }

    /// Downloads /bytes/`count` (`getBytes`), handing each chunk to `consume` as it arrives, and
    /// returns the length the response body declared.
    /// - Throws: `ClientError` from the call, the body's error while reading; ``UnexpectedAnswer``.
    public static func download(
        count: Int64, seed: Int64, over transport: any ClientTransport, serverURL: URL,
        consume: (ArraySlice<UInt8>) throws -> Void
    ) async throws -> HTTPBody.Length {
        let client = Client(serverURL: serverURL, transport: transport)
        switch try await client.getBytes(path: .init(count: count), query: .init(seed: seed)) {
        case .ok(let ok):
            let body = try ok.body.binary
            for try await chunk in body { try consume(chunk) }
            return body.length
        case .undocumented(let status, _):
            throw UnexpectedAnswer(operation: "getBytes", status: status)
        }
    }

    /// `count` bytes of a repeating pattern as a body of known length, produced `chunkSize` bytes
    /// at a time from one shared chunk (memory stays at one chunk whatever `count` is).
    public static func generatedBody(
        count: Int, chunkSize: Int = 64 << 10, iterationBehavior: IterationBehavior = .multiple,
        length: HTTPBody.Length? = nil
    ) -> HTTPBody {
        HTTPBody(
            PatternChunks(count: count, chunkSize: chunkSize), length: length ?? .known(Int64(count)),
            iterationBehavior: iterationBehavior)
    }

    /// The bytes ``generatedBody(count:chunkSize:iterationBehavior:length:)`` produces, for checks.
    public static func patternByte(at offset: Int) -> UInt8 { UInt8(truncatingIfNeeded: (offset % 251) &* 31 &+ 7) }

    /// The error's Courier code when there is one (under the runtime's `ClientError`), else its text.
    public static func describe(_ error: any Error) -> String {
        if let clientError = error as? ClientError, let courierError = clientError.underlyingError as? CourierError {
            return courierError.code.name
        }
        if let courierError = error as? CourierError { return courierError.code.name }
        return String(describing: type(of: error))
    }

    /// A member of a JSON object the server echoed, as text; "-" when absent.
    static func field(_ json: OpenAPIValueContainer?, _ key: String) -> String {
        guard let object = json?.value as? [String: (any Sendable)?] else { return "-" }
        return text(object[key])
    }

    /// A decoded JSON value as text; "-" when absent, "null" for null.
    static func text(_ value: (any Sendable)??) -> String {
        guard let value else { return "-" }
        guard let value else { return "null" }
        return "\(value)"
    }

    static func describe(_ length: HTTPBody.Length) -> String {
        switch length {
        case .known(let count): return String(count)
        case .unknown: return "unknown"
        }
    }
}

/// An operation answered with a status the example does not expect.
public struct UnexpectedAnswer: Error, CustomStringConvertible {
    /// The operation's `operationId`.
    public var operation: String
    /// The status it answered with.
    public var status: Int

    public var description: String { "\(operation) answered \(status)" }
}

/// `count` bytes of ``ExampleTour/patternByte(at:)`` in chunks of `chunkSize`, each chunk sliced
/// from one array made once per iterator.
struct PatternChunks: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>
    let count: Int
    let chunkSize: Int

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(count: count, chunkSize: Swift.max(1, chunkSize)) }

    struct AsyncIterator: AsyncIteratorProtocol {
        let count: Int
        let chunkSize: Int
        var offset = 0
        var period: [UInt8] = []

        init(count: Int, chunkSize: Int) {
            self.count = count
            self.chunkSize = chunkSize
        }

        mutating func next() async -> ArraySlice<UInt8>? {
            guard offset < count else { return nil }
            let size = Swift.min(chunkSize, count - offset)
            // The pattern repeats every 251 bytes, so every chunk is a slice of one array of a
            // period plus a chunk, starting at the offset's place in the period.
            let start = offset % 251
            if period.count < 251 + chunkSize {
                period = (0..<(251 + chunkSize)).map { ExampleTour.patternByte(at: $0) }
            }
            offset += size
            return period[start..<start + size]
        }
    }
}
