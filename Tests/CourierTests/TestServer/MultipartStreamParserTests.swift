import NIOCore
import Testing

@testable import CourierTestServer

@Suite("Test server: streaming multipart parser")
struct MultipartStreamParserTests {
    private struct Part: Equatable {
        var name: String?
        var filename: String?
        var contentType: String?
        var body: [UInt8]
    }

    /// Feeds `body` in pieces of `pieceSize` bytes and collects the parts.
    private func parse(_ body: [UInt8], boundary: String, pieceSize: Int) throws -> [Part] {
        var parser = try #require(MultipartStreamParser(contentType: "multipart/form-data; boundary=\(boundary)"))
        var parts: [Part] = []
        var current: Part?
        var offset = 0
        while offset < body.count {
            let end = min(offset + pieceSize, body.count)
            try parser.feed(ByteBuffer(bytes: body[offset..<end])) { event in
                switch event {
                case .partBegin(let head):
                    current = Part(name: head.name, filename: head.filename, contentType: head.contentType, body: [])
                case .bodyChunk(let chunk): current?.body += chunk.readableBytesView
                case .partEnd: if let part = current { parts.append(part) }; current = nil
                }
            }
            offset = end
        }
        try parser.finish()
        return parts
    }

    private let tricky: [UInt8] = {
        var body: [UInt8] = Array("preamble to ignore\r\n--bd\r\n".utf8)
        body += Array(
            "Content-Disposition: form-data; name=\"a\\\"q\"; filename*=UTF-8''na%C3%AFve.txt\r\nContent-Type: text/plain\r\n\r\n"
                .utf8)
        // Content that contains almost-delimiters: CR LF - -, "--bd" without CR LF, "\r\n--b".
        body += Array("x\r\n-\r\n--\r\n--b--bd\r\n--bX".utf8)
        body += Array("\r\n--bd\r\nContent-Disposition: form-data; name=\"empty\"\r\n\r\n".utf8)
        body += Array("\r\n--bd  \r\n\r\nno headers".utf8)
        body += Array("\r\n--bd--\r\nepilogue\r\n--bd\r\n".utf8)
        return body
    }()

    @Test(arguments: [1, 2, 3, 5, 7, 64, 100_000])
    func everySplitGivesTheSameParts(pieceSize: Int) throws {
        let parts = try parse(tricky, boundary: "bd", pieceSize: pieceSize)
        #expect(
            parts == [
                Part(
                    name: "a\"q", filename: "naïve.txt", contentType: "text/plain",
                    body: Array("x\r\n-\r\n--\r\n--b--bd\r\n--bX".utf8)),
                Part(name: "empty", filename: nil, contentType: nil, body: []),
                Part(name: nil, filename: nil, contentType: nil, body: Array("no headers".utf8)),
            ])
    }

    @Test func bodyWithoutPreambleStartsWithTheDelimiter() throws {
        let body = Array("--z\r\nContent-Disposition: form-data; name=\"k\"\r\n\r\nv\r\n--z--".utf8)
        #expect(
            try parse(body, boundary: "z", pieceSize: 4) == [
                Part(name: "k", filename: nil, contentType: nil, body: [118])
            ])
    }

    @Test func malformedBodiesThrow() {
        #expect(throws: MultipartParseError.self) {
            try parse(Array("no boundary here".utf8), boundary: "q", pieceSize: 3)
        }
        #expect(throws: MultipartParseError.self) {
            try parse(Array("--q\r\nbroken header line\r\n\r\nx\r\n--q--".utf8), boundary: "q", pieceSize: 3)
        }
        #expect(throws: MultipartParseError.self) {
            try parse(Array("--q\r\n\r\nunterminated".utf8), boundary: "q", pieceSize: 3)
        }
        #expect(throws: MultipartParseError.self) { try parse(Array("--qX\r\n".utf8), boundary: "q", pieceSize: 100) }
        let hugeHeader = Array("--q\r\nX: ".utf8) + Array(repeating: UInt8(ascii: "a"), count: 20_000)
        #expect(throws: MultipartParseError.self) { try parse(hugeHeader, boundary: "q", pieceSize: 1000) }
    }

    @Test func boundaryComesFromContentType() {
        #expect(MultipartStreamParser(contentType: "multipart/form-data; boundary=\"a b\"")?.boundary == "a b")
        #expect(MultipartStreamParser(contentType: "text/plain; boundary=x") == nil)
        #expect(MultipartStreamParser(contentType: "multipart/form-data") == nil)
        #expect(
            MultipartStreamParser(contentType: "multipart/form-data; boundary=" + String(repeating: "b", count: 71))
                == nil)
    }
}
