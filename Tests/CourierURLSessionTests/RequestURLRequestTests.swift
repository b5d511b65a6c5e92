import Courier
import CourierURLSession
import Foundation
import NIOCore
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct URLRequestConversionTests {
    @Test func roundTripOfABytesRequest() throws {
        var serializer = HTTPRequestSerializer()
        serializer.timeoutInterval = 7
        serializer.setValue("1", forHTTPHeaderField: "X-One")
        let request = try serializer.request(method: .post, urlString: "http://x.test/p?q=1", parameters: ["a": "b c"])
        let urlRequest = try request.urlRequest()
        #expect(urlRequest.httpMethod == "POST")
        #expect(urlRequest.url?.absoluteString == "http://x.test/p?q=1")
        #expect(urlRequest.httpBody == Data("a=b%20c".utf8))
        #expect(urlRequest.value(forHTTPHeaderField: "X-One") == "1")
        #expect(urlRequest.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
        #expect(urlRequest.timeoutInterval == 7)

        let back = try Request(urlRequest)
        #expect(back.method == .post)
        #expect(back.url == request.url)
        #expect(back.body.bufferedBytes.map { String(buffer: $0) } == "a=b%20c")
        #expect(back.value(forHTTPHeaderField: "x-one") == "1")
        #expect(back.timeoutInterval == 7)
    }

    @Test func fileBodiesDoNotConvert() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-conv-\(UUID().uuidString)")
        try Data("x".utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let request = Request(method: .put, url: URL(string: "http://x.test")!, body: try .file(url))
        #expect(throws: CourierError.self) { try request.urlRequest() }
    }

    @Test func badMethodOrHeaderFromFoundationIsATypedError() {
        var urlRequest = URLRequest(url: URL(string: "http://x.test")!)
        urlRequest.httpMethod = "BAD METHOD"
        #expect(throws: CourierError.self) { try Request(urlRequest) }
    }
}
