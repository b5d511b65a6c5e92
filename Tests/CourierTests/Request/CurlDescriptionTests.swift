import Courier
import Foundation
import Testing

/// `Request.curlDescription`: a POSIX-shell command line for the same request.
@Suite struct CurlDescriptionTests {
    @Test func headersAndBodyAreQuotedForTheShell() throws {
        var request = try HTTPRequestSerializer().makeRequest(method: .post, urlString: "http://x.org/a?b=c%20d")
        request.headerFields = [:]
        try request.setValue("it's", forHTTPHeaderField: "X-Quote")
        try request.setValue("", forHTTPHeaderField: "X-Empty")
        request.body = .data(Data("{\"a\":1}".utf8))
        #expect(
            request.curlDescription
                == "curl -H 'X-Quote: it'\\''s' -H 'X-Empty;' -H User-Agent: -H Accept: -H Expect: -H Content-Type: "
                + "--data-binary '{\"a\":1}' 'http://x.org/a?b=c%20d'")
    }

    @Test func binaryBytesGoThroughPrintfAndMethodsAreExplicit() throws {
        let request = Request(
            method: .put, url: try #require(URL(string: "http://x.org/")),
            body: .data(Data([0, 0x41, 0x25, 0x27, 0xFF])))
        #expect(
            request.curlDescription
                == "printf '\\000A\\045\\047\\377' | curl -X PUT -H User-Agent: -H Accept: -H Expect: -H Content-Type: --data-binary @- http://x.org/"
        )
        let head = Request(method: .head, url: try #require(URL(string: "http://x.org/")))
        #expect(head.curlDescription == "curl --head -H User-Agent: -H Accept: http://x.org/")
    }

    @Test func multipartFilesBecomeFormArguments() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("a;b.txt")
        try Data("x".utf8).write(to: file)
        var form = try MultipartFormData(boundary: "XYZ")
        form.append("v", name: "t")
        try form.append(fileURL: file, name: "f", fileName: "a;b.txt", mimeType: "text/plain")
        let request = Request(method: .post, url: try #require(URL(string: "http://x.org/")), body: .source(form))
        #expect(
            request.curlDescription
                == "curl -H User-Agent: -H Accept: -H Expect: --form-string t=v "
                + "-F 'f=@\"\(file.path)\";filename=\"a;b.txt\";type=text/plain' http://x.org/")
        // curl keeps quotes around a type as part of it, and a bare type ends at `;`: a type
        // with parameters goes in a quoted Content-Type header instead.
        var typed = try MultipartFormData(boundary: "XYZ")
        try typed.append(fileURL: file, name: "f", fileName: "a.txt", mimeType: "text/plain; charset=utf-8")
        let withParameters = Request(
            method: .post, url: try #require(URL(string: "http://x.org/")), body: .source(typed))
        #expect(withParameters.curlDescription.contains(";headers=\"Content-Type: text/plain; charset=utf-8\"'"))
        // A part curl cannot express sends the encoded form instead.
        var inMemory = try MultipartFormData(boundary: "XYZ")
        inMemory.append(Data("x".utf8), name: "d", fileName: "d.bin", mimeType: "application/x")
        let fallback = Request(method: .post, url: try #require(URL(string: "http://x.org/")), body: .source(inMemory))
        #expect(fallback.curlDescription.contains("--data-binary '--XYZ"))
    }
}
