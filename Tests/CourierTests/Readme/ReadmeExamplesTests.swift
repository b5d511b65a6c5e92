import Courier
import CourierTestServer
import Foundation
import Testing

@testable import CourierCore

/// The README's library examples, run as written (only the host differs), so the README cannot
/// drift from the API.
@Suite(.timeLimit(.minutes(3))) struct ReadmeExamplesTests {
    @Test func parametersAndSerializers() async throws {
        let server = try await TestServer.start()
        let session = SessionManager()
        let getURL = server.baseURL.appendingPathComponent("get").absoluteString  // README: http://127.0.0.1:8080/get

        let params: Parameters = ["key1": "value1", "key2": ["key": [1, "value"]], "flag": true]
        #expect(QueryString.encode(params) == "flag=1&key1=value1&key2%5Bkey%5D%5B%5D=1&key2%5Bkey%5D%5B%5D=value")
        #expect(
            QueryString.percentEscaped(":#[]@!$&'()*+,;=?/") == "%3A%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D?/")

        var serializer = HTTPRequestSerializer()
        serializer.setValue("abc", forHTTPHeaderField: "X-Key")
        serializer.setAuthorizationHeader(username: "user", password: "password")
        let get = try serializer.request(method: .get, urlString: getURL, parameters: params)
        #expect(get.url.absoluteString == getURL + "?" + QueryString.encode(params))
        #expect(get.value(forHTTPHeaderField: "Authorization") == "Basic dXNlcjpwYXNzd29yZA==")
        #expect(get.value(forHTTPHeaderField: "X-Key") == "abc")

        let echo = try await session.data(for: get, serializer: JSONResponseSerializer())
        #expect(echo.value?["headers"]?["X-Key"] == "abc")
        #expect(echo.value?["headers"]?["Authorization"] == "Basic dXNlcjpwYXNzd29yZA==")
        #expect(echo.value?["args"]?["key1"] == "value1")
        #expect(echo.value?["args"]?["key2[key][]"] == ["1", "value"])

        try await session.shutdown()
        try await server.shutdown()
    }

    @Test func multipartForm() async throws {
        let server = try await TestServer.start()
        let session = SessionManager()
        // README: http://127.0.0.1:8080/post
        let postURL = server.baseURL.appendingPathComponent("post").absoluteString
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let photo = directory.appendingPathComponent("photo.jpg")
        try Data(repeating: 0xFF, count: 1000).write(to: photo)

        let serializer = HTTPRequestSerializer()
        let multipart = try serializer.multipartFormRequest(
            method: .post, urlString: postURL, parameters: ["a": "b"]
        ) { form in
            try form.append(fileURL: photo, name: "photo")
            form.append(Data("Data".utf8), name: "DataName", fileName: "DataFileName", mimeType: "data")
        }
        #expect(multipart.value(forHTTPHeaderField: "Content-Length") == multipart.body.contentLength.map(String.init))
        let echo = try await session.data(for: multipart, serializer: JSONResponseSerializer())
        #expect(echo.value?["form"]?["a"] == "b")
        #expect(echo.value?["files"]?["DataName"] == "Data")
        #expect(echo.value?["headers"]?["Content-Length"] == multipart.body.contentLength.map { .string(String($0)) })

        var form = MultipartFormData()
        form.append("value", name: "field")
        try form.append(fileURL: photo, name: "photo")
        let body = try form.encode()
        #expect(form.contentType.hasPrefix("multipart/form-data; boundary=courier.boundary."))
        #expect(Int64(body.count) == form.contentLength)
        let bodyFile = directory.appendingPathComponent("body.bin")
        try form.write(to: bodyFile)
        #expect(try Data(contentsOf: bodyFile) == body)

        try await session.shutdown()
        try await server.shutdown()
    }

    struct User: Codable, Sendable, Equatable { var name: String; var age: Int }
    struct Echo: Decodable, Sendable {
        var args: [String: String]; var form: [String: String]?; var json: User?
    }

    @Test func typedSessionManager() async throws {
        let server = try await TestServer.start()
        let manager = HTTPSessionManager(baseURL: server.baseURL)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let query = "swift"
        let page = 2
        let found = try await manager.get("get", parameters: ["q": .init(query), "page": .init(page)], as: Echo.self)
        #expect(found.value.args == ["page": "2", "q": "swift"])

        let ann = User(name: "Ann", age: 30)
        let created = try await manager.post("post", .json(ann), as: Echo.self)
        #expect(created.value.json?.name == "Ann")
        #expect(created.request.value(forHTTPHeaderField: "Content-Type") == "application/json")
        let signedUp = try await manager.post("post", .form(ann), as: Echo.self)
        #expect(signedUp.value.form == ["age": "30", "name": "Ann"])
        let decoder = JSONDecoder()
        let updated = try await manager.put("put", .json(ann), as: Echo.self, decoder: decoder)
        #expect(updated.value.json == ann)

        var caught: CourierError?
        do {
            _ = try await manager.get("status/404", as: Echo.self)
        } catch let error as CourierError where error.code == .unacceptableStatusCode {
            caught = error
        }
        #expect(caught?.response?.statusCode == 404)
        #expect(caught?.responseData != nil)

        let photo = directory.appendingPathComponent("photo.jpg")
        try Data(repeating: 7, count: 100_000).write(to: photo)
        let sent = ProgressLog()
        let upload = try await manager.post(
            "post", .multipart(parameters: ["a": "b"]) { form in try form.append(fileURL: photo, name: "photo") },
            as: Echo.self, uploadProgress: { progress in sent.record(progress.completedUnitCount) })
        #expect(upload.value.form == ["a": "b"])
        #expect(upload.response.statusCode == 200)
        #expect(sent.last == upload.request.body.contentLength)
        #expect(
            upload.request.value(forHTTPHeaderField: "Content-Length")
                == upload.request.body.contentLength.map(String.init))

        let destination = directory.appendingPathComponent("bytes.bin")
        let file = try await manager.download("bytes/1000000", to: destination, progress: { _ in })
        #expect(file.fileURL == destination)
        #expect(try Data(contentsOf: destination).count == 1_000_000)
        let json = try await manager.get("get", parameters: ["q": "swift"]).value as? Courier.JSONValue
        #expect(json?["args"]?["q"] == "swift")

        try await manager.shutdown()
        try await server.shutdown()
    }

    /// The README's view of a @MainActor caller: the multipart closure uses the actor's state.
    @MainActor @Test func typedVerbsFromTheMainActor() async throws {
        let server = try await TestServer.start()
        let manager = HTTPSessionManager(baseURL: server.baseURL)
        let screen = SignupScreen()
        let upload = try await screen.send(with: manager)
        #expect(upload.value.form == ["a": "b", "note": "typed on the main actor"])
        #expect(screen.sends == 1)
        try await manager.shutdown()
        try await server.shutdown()
    }
}

/// Main-actor state, as an app's screen has, used inside a multipart closure.
@MainActor private final class SignupScreen {
    var note = "typed on the main actor"
    var sends = 0

    func send(with manager: HTTPSessionManager) async throws -> DataResponse<ReadmeExamplesTests.Echo> {
        try await manager.post(
            "post",
            .multipart(parameters: ["a": "b"]) { form in
                form.append(self.note, name: "note")
                self.sends += 1
            }, as: ReadmeExamplesTests.Echo.self)
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
        let echo = try await session.get(
            "cookies/set", parameters: ["theme": "dark"], as: [String: [String: String]].self)
        #expect(echo.value["cookies"] == ["theme": "dark"])
        let cookies = jar.cookies(for: server.baseURL)
        #expect(cookies.map(\.description) == ["theme=dark; Path=/"])
        try jar.saveNetscapeCookieFile(to: cookiesTxt)
        #expect(
            try String(contentsOf: cookiesTxt, encoding: .utf8).hasSuffix(
                "127.0.0.1\tFALSE\t/\tFALSE\t0\ttheme\tdark\n"))

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
