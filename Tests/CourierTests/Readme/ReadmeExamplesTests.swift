import CourierTestServer
import Foundation
import Testing

@testable import Courier

/// The README's library examples, run as written (only the host differs), so the README cannot
/// drift from the API.
@Suite(.timeLimit(.minutes(3))) struct ReadmeExamplesTests {
    @Test func parametersAndSerializers() throws {
        let params: Parameters = ["key1": "value1", "key2": ["key": [1, "value"]], "flag": true]
        #expect(QueryString.encode(params) == "flag=1&key1=value1&key2%5Bkey%5D%5B%5D=1&key2%5Bkey%5D%5B%5D=value")
        #expect(
            QueryString.percentEscaped(":#[]@!$&'()*+,;=?/") == "%3A%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D?/")

        var serializer = HTTPRequestSerializer()
        serializer.setValue("abc", forHTTPHeaderField: "X-Key")
        serializer.setAuthorizationHeader(username: "user", password: "password")
        let get = try serializer.request(method: .get, urlString: "http://127.0.0.1:8080/get", parameters: params)
        #expect(get.url.absoluteString == "http://127.0.0.1:8080/get?" + QueryString.encode(params))
        #expect(get.value(forHTTPHeaderField: "Authorization") == "Basic dXNlcjpwYXNzd29yZA==")
        #expect(get.value(forHTTPHeaderField: "X-Key") == "abc")
    }

    @Test func multipartForm() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let photo = directory.appendingPathComponent("photo.jpg")
        try Data(repeating: 0xFF, count: 1000).write(to: photo)

        var form = MultipartFormData()
        form.append("value", name: "field")
        try form.append(fileURL: photo, name: "photo")
        let body = try form.encode()
        #expect(form.contentType.hasPrefix("multipart/form-data; boundary=courier.boundary."))
        #expect(Int64(body.count) == form.contentLength)
        let copy = directory.appendingPathComponent("body.bin")
        try form.write(to: copy)
        #expect(try Data(contentsOf: copy) == body)

        let request = try HTTPRequestSerializer().multipartFormRequest(
            method: .post, urlString: "http://127.0.0.1:8080/post", parameters: ["a": "b"]
        ) { form in
            try form.append(fileURL: photo, name: "photo")
            form.append(Data("Data".utf8), name: "DataName", fileName: "DataFileName", mimeType: "data")
        }
        #expect(request.value(forHTTPHeaderField: "Content-Length") == request.body.contentLength.map(String.init))
    }

    @Test func sessionManager() async throws {
        let server = try await TestServer.start()
        let manager = HTTPSessionManager(baseURL: server.baseURL)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let response = try await manager.get("get", parameters: ["q": "swift"])
        let json = try #require(response.value as? Courier.JSONValue)
        #expect(json["args"]?["q"] == "swift")

        let photo = directory.appendingPathComponent("photo.jpg")
        try Data(repeating: 7, count: 100_000).write(to: photo)
        let sent = ProgressLog()
        let upload = try await manager.post(
            "post", parameters: ["a": "b"],
            constructingBody: { form in try form.append(fileURL: photo, name: "photo") },
            uploadProgress: { progress in sent.record(progress.completedUnitCount) })
        #expect(upload.response.statusCode == 200)
        #expect((upload.value as? Courier.JSONValue)?["form"]?["a"] == "b")
        #expect(sent.last == upload.request.body.contentLength)

        let destination = directory.appendingPathComponent("bytes.bin")
        let file = try await manager.download("bytes/1000000", to: destination, progress: { _ in })
        #expect(file.fileURL == destination)
        #expect(try Data(contentsOf: destination).count == 1_000_000)

        try await manager.shutdown()
        try await server.shutdown()
    }
}

extension ReadmeExamplesTests {
    @Test func cookies() async throws {
        let server = try await TestServer.start()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let cookiesTxt = directory.appendingPathComponent("cookies.txt")

        let jar = CookieJar()
        var configuration = SessionManager.Configuration()
        configuration.cookieStorage = jar
        let session = HTTPSessionManager(baseURL: server.baseURL, configuration: configuration)
        let echo = try await session.get("cookies/set", parameters: ["theme": "dark"])
        #expect((echo.value as? Courier.JSONValue)?["cookies"]?["theme"] == "dark")
        let cookies = jar.cookies(for: server.baseURL)
        #expect(cookies.map(\.description) == ["theme=dark; Path=/"])
        try jar.saveNetscapeCookieFile(to: cookiesTxt)
        #expect(try String(contentsOf: cookiesTxt, encoding: .utf8).hasSuffix("127.0.0.1\tFALSE\t/\tFALSE\t0\ttheme\tdark\n"))

        try await session.shutdown()
        try await server.shutdown()
    }
}

/// Collects progress values reported from the transport's threads.
private final class ProgressLog: @unchecked Sendable {
    // Guards `values`; progress handlers run on transport threads.
    private let lock = NSLock()
    private var values: [Int64] = []

    func record(_ value: Int64) { lock.withLock { values.append(value) } }
    var last: Int64? { lock.withLock { values.last } }
}
