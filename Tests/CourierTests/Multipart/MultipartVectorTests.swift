import Courier
import Foundation
import NIOCore
import Testing

@testable import CourierCore

/// Exact byte layouts: AFNetworking's (DESIGN.md) and Alamofire's encoding vectors, with
/// Courier's boundary and MIME table.
@Suite struct MultipartVectorTests {
    static let boundaryText = "Boundary+F00DF00DCAFEBABE"

    func fixedForm() throws -> MultipartFormData {
        try MultipartFormData(boundary: Self.boundaryText)
    }

    func bytes(_ parts: [Any]) -> [UInt8] {
        var result: [UInt8] = []
        for part in parts {
            if let text = part as? String { result += Array(text.utf8) }
            if let data = part as? [UInt8] { result += data }
        }
        return result
    }

    var first: String { "--\(Self.boundaryText)\r\n" }
    var between: String { "\r\n--\(Self.boundaryText)\r\n" }
    var last: String { "\r\n--\(Self.boundaryText)--\r\n" }

    @Test func afNetworkingLayout() throws {
        var form = try fixedForm()
        form.append("value1", name: "key1")
        form.append(Data("Data".utf8), name: "DataName", fileName: "DataFileName", mimeType: "data")
        let expected =
            "--Boundary+F00DF00DCAFEBABE\r\n"
            + "Content-Disposition: form-data; name=\"key1\"\r\n\r\n"
            + "value1"
            + "\r\n--Boundary+F00DF00DCAFEBABE\r\n"
            + "Content-Disposition: form-data; name=\"DataName\"; filename=\"DataFileName\"\r\n"
            + "Content-Type: data\r\n\r\n"
            + "Data"
            + "\r\n--Boundary+F00DF00DCAFEBABE--\r\n"
        #expect(Array(try form.encode()) == Array(expected.utf8))
        #expect(form.contentLength == Int64(expected.utf8.count))
        #expect(form.contentType == "multipart/form-data; boundary=Boundary+F00DF00DCAFEBABE")
        #expect(form.partCount == 2)
    }

    @Test func emptyFormHasEmptyBody() throws {
        let form = try fixedForm()
        #expect(try form.encode().isEmpty)
        #expect(form.contentLength == 0)
        #expect(form.segments == [])
    }

    @Test func alamofireSingleDataPart() throws {
        var form = try fixedForm()
        form.append(Data("Lorem ipsum dolor sit amet.".utf8), name: "data")
        let expected = bytes([
            first, "Content-Disposition: form-data; name=\"data\"\r\n\r\n", "Lorem ipsum dolor sit amet.", last,
        ])
        #expect(Array(try form.encode()) == expected)
    }

    @Test func alamofireMultipleDataParts() throws {
        var form = try fixedForm()
        form.append(Data("français".utf8), name: "french")
        form.append(Data("日本語".utf8), name: "japanese", mimeType: "text/plain")
        form.append(Data("😃👍🏻🍻🎉".utf8), name: "emoji", mimeType: "text/plain")
        let expected = bytes([
            first, "Content-Disposition: form-data; name=\"french\"\r\n\r\n", "français",
            between, "Content-Disposition: form-data; name=\"japanese\"\r\nContent-Type: text/plain\r\n\r\n", "日本語",
            between, "Content-Disposition: form-data; name=\"emoji\"\r\nContent-Type: text/plain\r\n\r\n", "😃👍🏻🍻🎉",
            last,
        ])
        #expect(Array(try form.encode()) == expected)
        #expect(form.contentLength == Int64(expected.count))
    }

    /// Alamofire's file, stream and mixed vectors, with stand-in image files.
    @Test func alamofireFilesStreamsAndMixedParts() throws {
        let directory = try TemporaryDirectory()
        let unicornBytes: [UInt8] =
            [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + (0..<3000).map { UInt8($0 % 251) }
        let rainbowBytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + (0..<70_000).map { UInt8($0 % 241) }
        let unicorn = try directory.file("unicorn.png", unicornBytes)
        let rainbow = try directory.file("rainbow.jpg", rainbowBytes)
        let unicornHead =
            "Content-Disposition: form-data; name=\"unicorn\"; filename=\"unicorn.png\"\r\nContent-Type: image/png\r\n\r\n"
        let rainbowHead =
            "Content-Disposition: form-data; name=\"rainbow\"; filename=\"rainbow.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n"

        var files = try fixedForm()
        try files.append(fileURL: unicorn, name: "unicorn")
        try files.append(fileURL: rainbow, name: "rainbow")
        let filesExpected = bytes([first, unicornHead, unicornBytes, between, rainbowHead, rainbowBytes, last])
        #expect(Array(try files.encode()) == filesExpected)

        var streams = try fixedForm()
        try streams.append(
            InputStream(data: Data(unicornBytes)), length: Int64(unicornBytes.count),
            name: "unicorn", fileName: "unicorn.png", mimeType: "image/png")
        try streams.append(
            length: Int64(rainbowBytes.count), name: "rainbow", fileName: "rainbow.jpg",
            mimeType: "image/jpeg"
        ) { InputStream(data: Data(rainbowBytes)) }
        #expect(Array(try streams.encode()) == filesExpected)

        var mixed = try fixedForm()
        mixed.append(Data("Lorem ipsum.".utf8), name: "lorem")
        try mixed.append(fileURL: unicorn, name: "unicorn")
        try mixed.append(
            length: Int64(rainbowBytes.count), name: "rainbow", fileName: "rainbow.jpg",
            mimeType: "image/jpeg"
        ) { InputStream(data: Data(rainbowBytes)) }
        let mixedExpected = bytes([
            first, "Content-Disposition: form-data; name=\"lorem\"\r\n\r\n", "Lorem ipsum.",
            between, unicornHead, unicornBytes, between, rainbowHead, rainbowBytes, last,
        ])
        #expect(Array(try mixed.encode()) == mixedExpected)
        #expect(mixed.contentLength == Int64(mixedExpected.count))
    }

    @Test func namesAndFileNamesAreEscapedAsBrowsersDo() throws {
        var form = try fixedForm()
        form.append(
            Data("x".utf8), name: "a\"b\r\nc\\d", fileName: "evil\"\r\nContent-Type: text/html\r\n\r\n.txt",
            mimeType: "text/plain")
        let expected = bytes([
            first,
            "Content-Disposition: form-data; name=\"a%22b%0D%0Ac\\d\"; "
                + "filename=\"evil%22%0D%0AContent-Type: text/html%0D%0A%0D%0A.txt\"\r\n",
            "Content-Type: text/plain\r\n\r\n", "x", last,
        ])
        #expect(Array(try form.encode()) == expected)
    }

    @Test func nonASCIIGoesOutAsUTF8AndExtendedFileNameIsOptIn() throws {
        var form = try fixedForm()
        form.append(Data("1".utf8), name: "prénom", fileName: "€ rates.txt", mimeType: "text/plain")
        form.fileNameEncoding = .quotedWithExtendedParameter
        form.append(Data("2".utf8), name: "b", fileName: "€ rates.txt", mimeType: "text/plain")
        let expected = bytes([
            first, "Content-Disposition: form-data; name=\"prénom\"; filename=\"€ rates.txt\"\r\n",
            "Content-Type: text/plain\r\n\r\n1", between,
            "Content-Disposition: form-data; name=\"b\"; filename=\"€ rates.txt\"; filename*=UTF-8''%E2%82%AC%20rates.txt\r\n",
            "Content-Type: text/plain\r\n\r\n2", last,
        ])
        #expect(Array(try form.encode()) == expected)
    }

    @Test func rawHeadersGoInFixedOrder() throws {
        var form = try fixedForm()
        try form.append(
            headers: [
                ("X-B", "2"), ("Content-Type", "text/csv"), ("X-A", "1"),
                ("Content-Disposition", "form-data; name=\"raw\""),
            ],
            body: Data("a,b".utf8))
        let expected = bytes([
            first, "Content-Disposition: form-data; name=\"raw\"\r\nContent-Type: text/csv\r\nX-B: 2\r\nX-A: 1\r\n\r\n",
            "a,b", last,
        ])
        #expect(Array(try form.encode()) == expected)
    }

    @Test func largeAndBufferPartsKeepTheirBytes() throws {
        var form = try fixedForm()
        let large = [UInt8](repeating: 0x41, count: MultipartFormData.inlineDataLimit + 1)
        form.append(Data(large), name: "large")
        form.append(
            ByteBuffer(bytes: [1, 2, 3]), name: "buffer", fileName: "b.bin", mimeType: "application/octet-stream")
        form.append(ByteBuffer(), name: "empty")
        let expected = bytes([
            first, "Content-Disposition: form-data; name=\"large\"\r\n\r\n", large, between,
            "Content-Disposition: form-data; name=\"buffer\"; filename=\"b.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n",
            [UInt8]([1, 2, 3]), between, "Content-Disposition: form-data; name=\"empty\"\r\n\r\n", last,
        ])
        #expect(Array(try form.encode()) == expected)
        #expect(form.contentLength == Int64(expected.count))
    }

    @Test func boundaries() throws {
        let random = MultipartBoundary.random()
        #expect(random.rawValue.hasPrefix("courier.boundary."))
        let hex = random.rawValue.dropFirst("courier.boundary.".count)
        #expect(hex.count == 16 && hex.allSatisfy { $0.isHexDigit })
        #expect(MultipartBoundary.random() != random)
        #expect(MultipartFormData().boundary != MultipartFormData().boundary)

        #expect(MultipartBoundary("a") != nil)
        #expect(MultipartBoundary(String(repeating: "b", count: 70)) != nil)
        #expect(MultipartBoundary("'()+_,-./:=? x") != nil)
        #expect(MultipartBoundary("") == nil)
        #expect(MultipartBoundary(String(repeating: "b", count: 71)) == nil)
        #expect(MultipartBoundary("ends with space ") == nil)
        #expect(MultipartBoundary("semi;colon") == nil)
        #expect(MultipartBoundary("quote\"") == nil)
        #expect(MultipartBoundary("line\r\nbreak") == nil)
        #expect(MultipartBoundary("ümlaut") == nil)

        let quoted = try MultipartFormData(boundary: "a:b c")
        #expect(quoted.contentType == "multipart/form-data; boundary=\"a:b c\"")
    }

    @Test func mimeTable() {
        #expect(MIMETypes.type(forPathExtension: "cer") == "application/pkix-cert")
        #expect(MIMETypes.type(forPathExtension: "PNG") == "image/png")
        #expect(MIMETypes.type(forPathExtension: ".Jpg") == "image/jpeg")
        #expect(MIMETypes.type(forPathExtension: "json") == "application/json")
        #expect(MIMETypes.type(forPathExtension: "nope") == "application/octet-stream")
        #expect(MIMETypes.type(forPathExtension: "") == "application/octet-stream")
        #expect(MIMETypes.type(forFileName: "archive.tar.gz") == "application/gzip")
        #expect(MIMETypes.type(forFileName: "README") == "application/octet-stream")
        #expect(MIMETypes.type(forFileName: ".bashrc") == "application/octet-stream")
        #expect(MIMETypes.table.count >= 100)
    }
}
