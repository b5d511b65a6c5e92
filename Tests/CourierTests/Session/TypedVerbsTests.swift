import Courier
import CourierTestServer
import Foundation
import NIOCore
import Testing

@testable import CourierCore

/// The typed verbs against the test server, whose echo endpoints answer in httpbin's shape.
@Suite("HTTPSessionManager: typed verbs in and out", .timeLimit(.minutes(3)))
struct TypedVerbsTests {
    /// httpbin's echo document, the parts these tests read.
    struct Echo<Body: Decodable & Sendable>: Decodable, Sendable {
        var args: [String: FormField]
        var headers: [String: String]
        var data: String?
        var form: [String: FormField]?
        var json: Body?
        var method: String?
    }

    /// A form or query field as httpbin shows it: one value as a string, repeated ones as an array.
    enum FormField: Decodable, Sendable, Equatable {
        case one(String)
        case many([String])

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) {
                self = .one(text)
            } else {
                self = .many(try container.decode([String].self))
            }
        }
    }

    struct Person: Codable, Sendable, Equatable {
        var name: String
        var age: Int
        var tags: [String]
        var address: Address?
    }

    struct Address: Codable, Sendable, Equatable {
        var city: String
        var zip: String
    }

    struct NoBody: Decodable, Sendable {}

    /// Records whether it was decoded on the main queue, which runs the main actor's jobs.
    struct QueueProbe: Decodable, Sendable {
        static let key = DispatchSpecificKey<Bool>()
        static var onMainQueue: Bool { DispatchQueue.getSpecific(key: key) == true }

        var decodedOnMainQueue: Bool
        init(from decoder: any Decoder) throws { decodedOnMainQueue = Self.onMainQueue }
    }

    /// What the server echoes of a ``ComposerDraft``.
    struct DraftCopy: Decodable, Sendable, Equatable {
        var title: String
        var words: Int
    }

    func withManager(_ body: (HTTPSessionManager) async throws -> Void) async throws {
        let server = ScriptedTestServer()
        let manager = HTTPSessionManager(baseURL: server.baseURL, transport: server.transport)
        do {
            try await body(manager)
        } catch {
            Issue.record(error)
        }
        try await manager.shutdown()
    }

    // MARK: In

    @Test func getDecodesTheEchoWithParametersBuiltFromVariables() async throws {
        try await withManager { manager in
            let query = "swift concurrency"
            let count = 3
            let exact = true
            let response = try await manager.get(
                "get", parameters: ["q": .init(query), "n": .init(count), "exact": .init(exact)],
                as: Echo<NoBody>.self)
            #expect(response.response.statusCode == 200)
            #expect(response.value.args == ["q": .one(query), "n": .one("3"), "exact": .one("1")])
            #expect(response.request.url.absoluteString.hasSuffix("/get?exact=1&n=3&q=swift%20concurrency"))
            #expect(try JSONDecoder().decode(Echo<NoBody>.self, from: response.data).args == response.value.args)
        }
    }

    @Test func postJSONSendsExactlyTheEncodedBodyAndDecodesTheEcho() async throws {
        try await withManager { manager in
            let person = Person(
                name: "Ann \"A\" Lee", age: 30, tags: ["a", "ü"], address: Address(city: "Oslo", zip: "0150"))
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let expected = try encoder.encode(person)

            let response = try await manager.post("post", .json(person, encoder: encoder), as: Echo<Person>.self)
            #expect(response.value.json == person)
            #expect(response.value.data == String(decoding: expected, as: UTF8.self))
            #expect(response.value.headers["Content-Type"] == "application/json")
            #expect(response.value.headers["Content-Length"] == String(expected.count))
            #expect(response.request.body.contentLength == Int64(expected.count))

            let put = try await manager.put("anything", .json(person), as: Echo<Person>.self)
            #expect(put.value.method == "PUT")
            #expect(put.value.json == person)
            let patch = try await manager.patch("anything", .json(["op": "rename"]), as: Echo<[String: String]>.self)
            #expect(patch.value.method == "PATCH")
            #expect(patch.value.json == ["op": "rename"])
        }
    }

    @Test func perCallContentTypeWinsOverTheBodysOwn() async throws {
        try await withManager { manager in
            let response = try await manager.post(
                "post", .json(["a": 1]), as: Echo<NoBody>.self,
                headers: ["content-type": "application/merge-patch+json"]
            )
            #expect(response.value.headers["Content-Type"] == "application/merge-patch+json")
            #expect(response.value.data == #"{"a":1}"#)
        }
    }

    @Test func postFormSendsTheEncodersPairs() async throws {
        struct Signup: Encodable {
            var name: String
            var age: Int
            var tags: [String]
            var newsletter: Bool
            var address: Address
        }
        try await withManager { manager in
            let signup = Signup(
                name: "Ann Lee & co", age: 30, tags: ["x", "y=z"], newsletter: true,
                address: Address(city: "Oslo", zip: "0150"))
            let encoder = URLEncodedFormEncoder()
            let text = try encoder.encode(signup)

            let response = try await manager.post("post", .form(signup, encoder: encoder), as: Echo<NoBody>.self)
            #expect(response.value.headers["Content-Type"] == "application/x-www-form-urlencoded")
            #expect(response.value.form == Self.multiDictionary(text))
            #expect(response.value.form?["address[city]"] == .one("Oslo"))
            #expect(response.value.form?["tags[]"] == .many(["x", "y=z"]))
            #expect(response.request.body.bufferedBytes.map { String(buffer: $0) } == text)

            let untyped = try await manager.put("put", .form(signup))
            let json = try #require(untyped.value as? JSONValue)
            #expect(json["form"]?["name"] == "Ann Lee & co")
            let patch = try await manager.patch("anything", .form(["k": "v"]), as: Echo<NoBody>.self)
            #expect(patch.value.method == "PATCH")
            #expect(patch.value.form == ["k": .one("v")])
        }
    }

    @Test func deleteAndTheParameterBodyVerbsDecodeToo() async throws {
        try await withManager { manager in
            let deleted = try await manager.delete("anything", parameters: ["id": .init(7)], as: Echo<NoBody>.self)
            #expect(deleted.value.method == "DELETE")
            #expect(deleted.value.args == ["id": .one("7")])
            let posted = try await manager.post("post", parameters: ["a": "b"], as: Echo<NoBody>.self)
            #expect(posted.value.form == ["a": .one("b")])
            let put = try await manager.put("anything", parameters: ["a": "b"], as: Echo<NoBody>.self)
            #expect(put.value.method == "PUT")
            let patch = try await manager.patch("anything", parameters: ["a": "b"], as: Echo<NoBody>.self)
            #expect(patch.value.form == ["a": .one("b")])
            let empty = try await manager.get("status/204", as: Empty.self)
            #expect(empty.response.statusCode == 204)
            #expect(empty.value == Empty.value)
        }
    }

    /// Every verb with a body reports its upload, typed or not, as `post` does; the last report
    /// is the whole body.
    @Test func putAndPatchReportUploadProgressAsPostDoes() async throws {
        try await withManager { manager in
            let person = Person(name: String(repeating: "n", count: 3_000), age: 3, tags: [], address: nil)
            let bodyLength = Int64(try JSONEncoder().encode(person).count)
            let sends: [(String, (@escaping ProgressHandler, @escaping ProgressHandler) async throws -> Void)] = [
                (
                    "put json",
                    { up, down in
                        _ = try await manager.put(
                            "anything", .json(person), as: Echo<Person>.self, uploadProgress: up, downloadProgress: down
                        )
                    }
                ),
                (
                    "patch json",
                    { up, down in
                        _ = try await manager.patch(
                            "anything", .json(person), as: Echo<Person>.self, uploadProgress: up, downloadProgress: down
                        )
                    }
                ),
                (
                    "put json untyped",
                    { up, down in
                        _ = try await manager.put("anything", .json(person), uploadProgress: up, downloadProgress: down)
                    }
                ),
                (
                    "patch form",
                    { up, down in
                        _ = try await manager.patch(
                            "anything", .form(["k": "v"]), as: Echo<NoBody>.self, uploadProgress: up,
                            downloadProgress: down)
                    }
                ),
                (
                    "put parameters",
                    { up, down in
                        _ = try await manager.put(
                            "anything", parameters: ["a": "b"], as: Echo<NoBody>.self, uploadProgress: up,
                            downloadProgress: down)
                    }
                ),
                (
                    "patch parameters untyped",
                    { up, down in
                        _ = try await manager.patch(
                            "anything", parameters: ["a": "b"], uploadProgress: up, downloadProgress: down)
                    }
                ),
            ]
            for (name, send) in sends {
                let up = Recorder<TransferProgress>()
                let down = Recorder<TransferProgress>()
                try await send({ up.append($0) }, { down.append($0) })
                let total = try #require(up.values.last?.totalUnitCount, "\(name)")
                expectWellFormedProgress(up.values, total: total)
                if name.contains("json") { #expect(total == bodyLength, "\(name)") }
                #expect(down.values.last.map { $0.completedUnitCount > 0 } == true, "\(name)")
            }
            let down = Recorder<TransferProgress>()
            _ = try await manager.delete("anything", as: Echo<NoBody>.self, downloadProgress: { down.append($0) })
            #expect(down.values.last.map { $0.completedUnitCount > 0 } == true)
        }
    }

    // MARK: Errors

    @Test func aBodyThatDoesNotDecodeIsATypedErrorWithTheResponseAndData() async throws {
        struct Wrong: Decodable, Sendable {
            var args: [String: String]
            var missing: Int
        }
        try await withManager { manager in
            let error = await expectCode(.decodingFailed) { try await manager.get("get", as: Wrong.self) }
            #expect(error?.response?.statusCode == 200)
            #expect(error?.offendingInput == "missing")
            #expect(error?.underlyingError is DecodingError)
            let data = try #require(error?.responseData)
            #expect(try JSONDecoder().decode(Echo<NoBody>.self, from: data).headers["Host"] != nil)

            let status = await expectCode(.unacceptableStatusCode) {
                try await manager.post("status/418", .json(["a": 1]), as: Empty.self)
            }
            #expect(status?.response?.statusCode == 418)
            await expectCode(.unacceptableContentType) { try await manager.get("html", as: Empty.self) }
        }
    }

    @Test func aBodyTheEncoderRefusesIsATypedError() async throws {
        struct Reading: Encodable { var value: Double }
        try await withManager { manager in
            let error = await expectCode(.encodingFailed) {
                try await manager.post("post", .json(Reading(value: .nan)), as: Empty.self)
            }
            #expect(error?.offendingInput == "value")
            #expect(error?.underlyingError is EncodingError)
            await expectCode(.invalidFormRoot) { try await manager.post("post", .form(["a", "b"]), as: Empty.self) }
        }
    }

    // MARK: Untyped verbs over the typed core

    @Test func untypedVerbsUseTheConfiguredSerializer() async throws {
        try await withManager { manager in
            let json = try await manager.post("post", .json(Person(name: "A", age: 1, tags: [])))
            #expect((json.value as? JSONValue)?["json"]?["name"] == "A")
            manager.responseSerializer = StringResponseSerializer()
            let text = try await manager.get("get", parameters: ["q": "x"])
            #expect((text.value as? String)?.contains(#""args""#) == true)
        }
    }

    // MARK: Multipart through the serializer's builder

    @Test func theSessionsMultipartRequestIsTheSerializers() async throws {
        try await withManager { manager in
            let boundaryFree = try manager.request(
                .post, "post",
                .multipart(parameters: ["a": "b"]) { form in
                    form.append(Data("hello".utf8), name: "file", fileName: "a.txt", mimeType: "text/plain")
                })
            let length = try #require(boundaryFree.body.contentLength)
            #expect(boundaryFree.value(forHTTPHeaderField: "Content-Length") == String(length))
            #expect(
                boundaryFree.value(forHTTPHeaderField: "Content-Type")?.hasPrefix("multipart/form-data; boundary=")
                    == true)

            let upload = try await manager.post(
                "post", .multipart(parameters: ["a": "b"]) { form in form.append("text", name: "note") },
                as: Echo<NoBody>.self)
            #expect(upload.value.form == ["a": .one("b"), "note": .one("text")])
            #expect(upload.value.headers["Content-Length"] == upload.request.body.contentLength.map(String.init))
        }
    }

    @Test func anEmptyFormIsARequestWithoutABodyAsTheSerializerMakes() async throws {
        try await withManager { manager in
            let url = try manager.url(for: "post")
            let fromSession = try manager.request(.post, "post", .multipart { _ in })
            let fromSerializer = try HTTPRequestSerializer().multipartFormRequest(
                method: .post, urlString: url.absoluteString)
            #expect(fromSession.body.isEmpty)
            #expect(fromSerializer.body.isEmpty)
            #expect(fromSession.value(forHTTPHeaderField: "Content-Type") == nil)
            #expect(fromSession.headerFields == fromSerializer.headerFields)
            #expect(fromSession.url == fromSerializer.url)

            let sent = try await manager.post("post", .multipart { _ in }, as: Echo<NoBody>.self)
            #expect(sent.value.data == "")
            #expect(sent.value.form == [:])
            #expect(sent.value.headers["Content-Type"] == nil)
        }
    }

    @Test func theCompletionFormOfTheMultipartVerbUploadsThroughTheSameBuilder() async throws {
        try await withManager { manager in
            let kind = Slot<SessionTask.Kind>()
            let result = await withCheckedContinuation { continuation in
                let task = manager.post(
                    "post", .multipart(parameters: ["a": "b"]) { form in form.append("text", name: "note") }
                ) { continuation.resume(returning: $0) }
                kind.value = task?.kind
            }
            let response = try result.get()
            #expect(kind.value == .upload)
            let json = try #require(response.value as? JSONValue)
            #expect(json["form"] == ["a": "b", "note": "text"])
            #expect(
                json["headers"]?["Content-Length"] == response.request.body.contentLength.map { .string(String($0)) })

            let failed = await withCheckedContinuation { continuation in
                _ = manager.post(
                    "post", .multipart { _ in throw CourierError(.invalidFile, "no") },
                    completion: { continuation.resume(returning: $0) })
            }
            #expect(throws: CourierError.self) { try failed.get() }
        }
    }

    @Test func perCallHeadersGoOverTheFormButNotItsLength() async throws {
        try await withManager { manager in
            let request = try manager.request(
                .post, "post", .multipart { form in form.append("v", name: "k") },
                headers: ["X-Trace": "1", "Content-Length": "5", "Content-Type": "multipart/mixed; boundary=b"])
            #expect(request.value(forHTTPHeaderField: "X-Trace") == "1")
            #expect(request.value(forHTTPHeaderField: "Content-Length") == request.body.contentLength.map(String.init))
            #expect(request.value(forHTTPHeaderField: "Content-Type") == "multipart/mixed; boundary=b")
        }
    }

    // MARK: Callers on the main actor

    @MainActor @Test func everyVerbIsCallableFromTheMainActorWithItsState() async throws {
        let server = ScriptedTestServer()
        let manager = HTTPSessionManager(baseURL: server.baseURL, transport: server.transport)
        let model = ComposerModel()

        let upload = try await model.upload(with: manager)
        #expect(upload.value.form == ["a": .one("b"), "note": .one("drafted on the main actor")])
        #expect(model.partsAppended == 1)

        let untyped = try await manager.post("post", .multipart { form in form.append(model.note, name: "note") })
        #expect((untyped.value as? JSONValue)?["form"]?["note"] == "drafted on the main actor")

        let sentJSON = try await manager.post("post", .json(model.draft), as: Echo<DraftCopy>.self)
        #expect(sentJSON.value.json == DraftCopy(title: "t", words: 2))
        let sentForm = try await manager.post("post", .form(model.draft))
        #expect((sentForm.value as? JSONValue)?["form"]?["title"] == "t")
        let got = try await manager.get("get", parameters: ["n": .init(model.partsAppended)], as: Echo<NoBody>.self)
        #expect(got.value.args == ["n": .one("1")])

        // The closure runs here, on the main queue (the main actor's executor); the decoding does not.
        DispatchQueue.main.setSpecific(key: QueueProbe.key, value: true)
        var builtOnMainQueue = false
        let probe = try await manager.post(
            "post",
            .multipart { form in
                builtOnMainQueue = QueueProbe.onMainQueue
                form.append(model.note, name: "note")
            }, as: QueueProbe.self)
        #expect(QueueProbe.onMainQueue)
        #expect(builtOnMainQueue)
        #expect(probe.value.decodedOnMainQueue == false)
        let jsonProbe = try await manager.post("post", .json(model.draft), as: QueueProbe.self)
        #expect(jsonProbe.value.decodedOnMainQueue == false)

        try await manager.shutdown()
    }

    // MARK: ParameterValue(_:)

    @Test func parameterValuesFromVariables() {
        let count = 3
        let ratio = 0.5
        let flag = false
        let name = "Ann"
        let bytes = Data([0, 255])
        let big = UInt64.max
        let small: Int8 = -4
        #expect(ParameterValue(count) == .int(3))
        #expect(ParameterValue(ratio) == .double(0.5))
        #expect(ParameterValue(flag) == .bool(false))
        #expect(ParameterValue(name) == .string("Ann"))
        #expect(ParameterValue(bytes) == .data(Data([0, 255])))
        #expect(ParameterValue(big) == .string("18446744073709551615"))
        #expect(ParameterValue(small) == .int(-4))

        let missing: Int? = nil
        let present: String? = "x"
        #expect(ParameterValue(missing) == .null)
        #expect(ParameterValue(present) == .string("x"))
        #expect(ParameterValue(Optional<Double>.none) == .null)
        #expect(ParameterValue(Optional(true)) == .bool(true))
        #expect(ParameterValue(Optional<Data>.none) == .null)

        let parameters: Parameters = [
            "n": .init(count), "r": .init(ratio), "f": .init(flag), "q": .init(name), "d": .init(bytes),
            "none": .init(missing), "list": [.init(count), "literal", 2],
        ]
        #expect(
            QueryString.encode(parameters)
                == "d=AP8%3D&f=0&list%5B%5D=3&list%5B%5D=literal&list%5B%5D=2&n=3&none&q=Ann&r=0.5")
    }

    /// Arrays, sets and dictionaries of convertible values in one step, optionals inside them too.
    @Test func collectionsOfValuesFromVariables() {
        let tags = ["a", "b"]
        let limits = ["x": 1, "y": 2]
        let maybe: [Double?] = [1.5, nil]
        let unique: Set<Int> = [3]
        let nested: [String: [String: Bool]] = ["o": ["p": true]]
        #expect(ParameterValue(tags) == .array([.string("a"), .string("b")]))
        #expect(ParameterValue(limits) == .dictionary(["x": .int(1), "y": .int(2)]))
        #expect(ParameterValue(maybe) == .array([.double(1.5), .null]))
        #expect(ParameterValue(unique) == .set([.int(3)]))
        #expect(ParameterValue(nested.mapValues(ParameterValue.init)) == ["o": ["p": true]])
        #expect(ParameterValue(ArraySlice(tags).dropFirst()) == ["b"])
        // The scalar initialisers still win where a value is also a sequence.
        #expect(ParameterValue("ab") == .string("ab"))
        #expect(ParameterValue(Data([1, 2])) == .data(Data([1, 2])))
        let parameters: Parameters = ["tags": .init(tags), "limits": .init(limits)]
        #expect(QueryString.encode(parameters) == "limits%5Bx%5D=1&limits%5By%5D=2&tags%5B%5D=a&tags%5B%5D=b")
    }

    // MARK: Support

    /// The pairs of a form text (`a=b&c=d`), grouped as httpbin shows them.
    static func multiDictionary(_ text: String) -> [String: FormField] {
        var grouped: [String: [String]] = [:]
        var order: [String] = []
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = String(parts[0]).removingPercentEncoding ?? String(parts[0])
            let value = parts.count > 1 ? (String(parts[1]).removingPercentEncoding ?? String(parts[1])) : ""
            if grouped[key] == nil { order.append(key) }
            grouped[key, default: []].append(value)
        }
        return grouped.mapValues { $0.count == 1 ? .one($0[0]) : .many($0) }
    }
}

/// A view model as an app has one: main-actor state, read and changed inside a multipart closure.
@MainActor final class ComposerModel {
    var note = "drafted on the main actor"
    var partsAppended = 0
    var draft = ComposerDraft(title: "t", words: 2)

    func upload(with manager: HTTPSessionManager) async throws -> DataResponse<
        TypedVerbsTests.Echo<TypedVerbsTests.NoBody>
    > {
        try await manager.post(
            "post",
            .multipart(parameters: ["a": "b"]) { form in
                form.append(self.note, name: "note")
                self.partsAppended += 1
            }, as: TypedVerbsTests.Echo<TypedVerbsTests.NoBody>.self)
    }
}

/// Not `Sendable` on purpose: it can be sent as JSON only because it is encoded on the caller's actor.
final class ComposerDraft: Encodable {
    var title: String
    var words: Int

    init(title: String, words: Int) {
        self.title = title
        self.words = words
    }
}
