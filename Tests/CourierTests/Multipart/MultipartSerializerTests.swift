import Courier
import Foundation
import HTTPTypes
import NIOCore
import Testing

@testable import CourierCore

/// `HTTPRequestSerializer.multipartFormRequest`: parameters become parts, headers are exact.
@Suite struct MultipartSerializerTests {
    static let boundary = MultipartBoundary("serializer-boundary")!

    func bodyBytes(_ request: Request) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await chunk in try request.body.makeChunks() { bytes += chunk.readableBytesView }
        return bytes
    }

    func part(_ name: String, _ value: String, first: Bool = false) -> String {
        (first ? "--serializer-boundary\r\n" : "\r\n--serializer-boundary\r\n")
            + "Content-Disposition: form-data; name=\"\(name)\"\r\n\r\n" + value
    }

    @Test func parametersAndAppendedPartsInOrder() async throws {
        var serializer = HTTPRequestSerializer()
        serializer.setValue("abc", forHTTPHeaderField: "X-Key")
        let params: Parameters = [
            "key1": "value1", "key2": ["key": [1, "value"]], "flag": true, "nothing": .null,
            "blob": .data(Data([0x00, 0xFF, 0x0D, 0x0A])), "pi": 3.5,
        ]
        let request = try serializer.multipartFormRequest(
            method: .post, urlString: "http://127.0.0.1/upload", parameters: params, boundary: Self.boundary
        ) { form in
            form.append(Data("Data".utf8), name: "DataName", fileName: "DataFileName", mimeType: "data")
        }
        var expected = Array(part("blob", "", first: true).utf8) + [0x00, 0xFF, 0x0D, 0x0A]
        expected += Array(
            (part("flag", "1") + part("key1", "value1") + part("key2[key][]", "1") + part("key2[key][]", "value")
                + part("nothing", "") + part("pi", "3.5")
                + "\r\n--serializer-boundary\r\n"
                + "Content-Disposition: form-data; name=\"DataName\"; filename=\"DataFileName\"\r\n"
                + "Content-Type: data\r\n\r\nData"
                + "\r\n--serializer-boundary--\r\n").utf8)
        #expect(try await bodyBytes(request) == expected)
        #expect(request.method == .post)
        #expect(
            request.value(forHTTPHeaderField: "Content-Type") == "multipart/form-data; boundary=serializer-boundary")
        #expect(request.value(forHTTPHeaderField: "Content-Length") == String(expected.count))
        #expect(request.value(forHTTPHeaderField: "X-Key") == "abc")
        #expect(request.body.contentLength == Int64(expected.count))
        #expect(request.body.isReplayable)
        // Replayable: a second send gives the same bytes.
        #expect(try await bodyBytes(request) == expected)
    }

    @Test func randomBoundaryByDefault() throws {
        let request = try HTTPRequestSerializer().multipartFormRequest(
            method: .put, urlString: "http://127.0.0.1/", parameters: ["a": "b"])
        let contentType = try #require(request.value(forHTTPHeaderField: "Content-Type"))
        #expect(contentType.hasPrefix("multipart/form-data; boundary=courier.boundary."))
    }

    @Test func getAndHeadAreTypedErrors() {
        for method in [HTTPMethod.get, .head] {
            #expect(throws: CourierError.self) {
                _ = try HTTPRequestSerializer().multipartFormRequest(method: method, urlString: "http://127.0.0.1/")
            }
            do {
                _ = try HTTPRequestSerializer().multipartFormRequest(method: method, urlString: "http://127.0.0.1/")
            } catch let error as CourierError {
                #expect(error.code == .multipartMethodNotAllowed)
            } catch {
                Issue.record("\(error)")
            }
        }
    }

    @Test func noPartsGivesTheRequestWithoutABody() throws {
        let request = try HTTPRequestSerializer().multipartFormRequest(method: .post, urlString: "http://127.0.0.1/")
        #expect(request.body.isEmpty)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == nil)
        #expect(request.value(forHTTPHeaderField: "Content-Length") == nil)
    }

    @Test func errorsFromTheBlockAndDeferredInputsReachTheCaller() {
        struct Mine: Error {}
        #expect(throws: Mine.self) {
            _ = try HTTPRequestSerializer().multipartFormRequest(method: .post, urlString: "http://127.0.0.1/") { _ in
                throw Mine()
            }
        }
        do {
            _ = try HTTPRequestSerializer().multipartFormRequest(method: .post, urlString: "http://127.0.0.1/") {
                form in
                form.append(Data(), name: "a", fileName: "a", mimeType: "bad\r\nvalue")
            }
            Issue.record("expected .invalidHeader")
        } catch let error as CourierError {
            #expect(error.code == .invalidHeader)
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test func writingTheBodyToAFile() async throws {
        let directory = try TemporaryDirectory()
        let photo = try directory.file("photo.jpg", Array(repeating: 0xAB, count: 50_000))
        let serializer = HTTPRequestSerializer()
        let streamed = try serializer.multipartFormRequest(
            method: .post, urlString: "http://127.0.0.1/upload", parameters: ["a": "b"], boundary: Self.boundary
        ) { form in
            try form.append(fileURL: photo, name: "photo")
        }
        let expected = try await bodyBytes(streamed)
        let output = directory.url.appendingPathComponent("body.multipart")
        let written = try serializer.request(multipartFormRequest: streamed, writingStreamContentsTo: output)
        #expect(Array(try Data(contentsOf: output)) == expected)
        #expect(written.value(forHTTPHeaderField: "Content-Length") == String(expected.count))
        #expect(written.value(forHTTPHeaderField: "Content-Type") == streamed.value(forHTTPHeaderField: "Content-Type"))
        #expect(written.body.segments == [.file(path: output.path, offset: 0, length: Int64(expected.count))])
        #expect(try await bodyBytes(written) == expected)

        // The file already exists now: never written over.
        do {
            _ = try serializer.request(multipartFormRequest: streamed, writingStreamContentsTo: output)
            Issue.record("expected .outputFileExists")
        } catch let error as CourierError {
            #expect(error.code == .outputFileExists)
        }

        let second = directory.url.appendingPathComponent("second.multipart")
        let direct = try serializer.multipartFormRequest(
            method: .post, urlString: "http://127.0.0.1/upload", parameters: ["a": "b"], boundary: Self.boundary,
            writingBodyTo: second
        ) { form in
            try form.append(fileURL: photo, name: "photo")
        }
        #expect(try await bodyBytes(direct) == expected)

        let plain = try serializer.request(method: .post, urlString: "http://127.0.0.1/", parameters: ["a": "b"])
        do {
            _ = try serializer.request(
                multipartFormRequest: plain, writingStreamContentsTo: directory.url.appendingPathComponent("x"))
            Issue.record("expected .notAMultipartBody")
        } catch let error as CourierError {
            #expect(error.code == .notAMultipartBody)
        }
    }
}
