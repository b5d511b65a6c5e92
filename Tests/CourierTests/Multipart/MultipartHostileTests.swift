import Courier
import CourierDigest
import Foundation
import MultipartKit
import NIOCore
import Testing

@testable import CourierCore

/// Multipart forms under hostile input and size: the cases the multipart suite's random forms
/// leave out (NUL and every Unicode plane in names, 100,000 parts in one form).
@Suite("Multipart under hostile input and size")
struct MultipartHostileTests {
    /// The WHATWG escaping of names, written here independently of Courier's.
    static func escaped(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "%22"
            case "\r": result += "%0D"
            case "\n": result += "%0A"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Part `index` of the big form: a name, a value, and every 1,000th a shared large file part.
    struct BigFormPart {
        var name: String
        var value: [UInt8]
        var fileName: String?

        init(index: Int, seed: UInt64, shared: [UInt8]) {
            var random = SeededRandom(seed: seed &+ UInt64(index) &* 0x9E37_79B9)
            name = random.hostileString(maxScalars: 12)
            if index % 1_000 == 999 {
                fileName = random.hostileString(maxScalars: 12)
                value = shared
            } else {
                value = Array(random.hostileString(maxScalars: 16).utf8)
            }
        }

        /// The bytes of this part's delimiter and headers, as the layout in DESIGN.md puts them.
        func head(index: Int, boundary: String) -> [UInt8] {
            var text = (index == 0 ? "--" : "\r\n--") + boundary + "\r\n"
            text += "Content-Disposition: form-data; name=\"" + MultipartHostileTests.escaped(name) + "\""
            if let fileName {
                text += "; filename=\"" + MultipartHostileTests.escaped(fileName) + "\"\r\n"
                text += "Content-Type: application/octet-stream"
            }
            text += "\r\n\r\n"
            return Array(text.utf8)
        }
    }

    @Test func hundredThousandPartsStreamExactBytesInBoundedMemory() throws {
        let seed = SeededRandom.seed(default: 100_000)
        let partCount = 100_000
        var sharedRandom = SeededRandom(seed: seed)
        // 72 KiB, appended 100 times by reference (over the 64 KiB inline limit): with the
        // small fields the body is about 16 MiB, which the reader must never hold at once.
        let shared = sharedRandom.hostileBytes(count: 72 << 10)
        let sharedData = Data(shared)

        var form = MultipartFormData()
        let boundary = form.boundary.rawValue
        var expected = SHA256()
        for index in 0..<partCount {
            let part = BigFormPart(index: index, seed: seed, shared: shared)
            if let fileName = part.fileName {
                form.append(sharedData, name: part.name, fileName: fileName, mimeType: "application/octet-stream")
            } else {
                form.append(String(decoding: part.value, as: UTF8.self), name: part.name)
            }
            expected.update(data: part.head(index: index, boundary: boundary))
            expected.update(data: part.value)
        }
        expected.update(data: Array("\r\n--\(boundary)--\r\n".utf8))
        #expect(form.partCount == partCount)

        // Stream the body through a fixed 64 KiB buffer into a hash and multipart-kit's parser.
        let parser = MultipartParser(boundary: boundary)
        final class ParseState {
            var completed = 0
            var mismatches: [String] = []
            var headers: [(String, String)] = []
            var bodyLength = 0
        }
        let state = ParseState()
        parser.onHeader = { name, value in state.headers.append((name, value)) }
        parser.onBody = { buffer in state.bodyLength += buffer.readableBytes }
        parser.onPartComplete = {
            let part = BigFormPart(index: state.completed, seed: seed, shared: shared)
            var disposition = "form-data; name=\"\(Self.escaped(part.name))\""
            if let fileName = part.fileName { disposition += "; filename=\"\(Self.escaped(fileName))\"" }
            let expectedHeaderCount = part.fileName == nil ? 1 : 2
            if state.headers.count != expectedHeaderCount || state.headers.first?.1 != disposition
                || state.bodyLength != part.value.count
            {
                if state.mismatches.count < 5 { state.mismatches.append("part \(state.completed): \(state.headers)") }
            }
            state.completed += 1
            state.headers.removeAll(keepingCapacity: true)
            state.bodyLength = 0
        }

        let reader = try form.makeReader()
        var hash = SHA256()
        var total: Int64 = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 1)
        defer { buffer.deallocate() }
        while true {
            let count = try reader.read(into: buffer)
            if count == 0 { break }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            hash.update(bufferPointer: chunk)
            try parser.execute(ByteBuffer(bytes: chunk))
            total += Int64(count)
        }

        #expect(total == form.contentLength)
        #expect(Array(hash.finalize()) == Array(expected.finalize()), "seed \(seed)")
        #expect(state.completed == partCount)
        #expect(state.mismatches.isEmpty, "\(state.mismatches)")
        #expect(total > 12 << 20)
        // Bounded memory, shown by the form's structure: the 100 file parts share the caller's one
        // 72 KiB buffer instead of copying it, and everything else lives in one storage buffer sized
        // by the headers and small fields, not by the file parts. The reader itself copies straight from
        // those pieces into the caller's 64 KiB buffer.
        var sharedAddresses = Set<UInt>()
        var dataPieces = 0
        for case .data(let data) in form.pieces {
            dataPieces += 1
            data.withUnsafeBytes { _ = sharedAddresses.insert(UInt(bitPattern: $0.baseAddress)) }
        }
        #expect(dataPieces == partCount / 1_000)
        #expect(sharedAddresses.count == 1, "file parts were copied: \(sharedAddresses.count) buffers")
        let inlineBytes = Int(total) - dataPieces * shared.count
        #expect(form.storage.capacity <= 2 * inlineBytes, "storage grows by doubling, at most 2x what it holds")
        // No bound on the process's RSS: the suites run in parallel in one process, and a
        // neighbour (the 1,000-request load test, say) grew it by 28 MiB during this read once,
        // more than the whole body. The structure above is what bounds the reader's memory.
    }

    @Test func namesWithNULAndEveryPlaneNeverInjectAHeader() throws {
        let seed = SeededRandom.seed(default: 0xF0F0)
        var random = SeededRandom(seed: seed)
        for iteration in 0..<300 {
            var form = MultipartFormData()
            var expected: [(disposition: String, body: [UInt8])] = []
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                let name = random.hostileString(maxScalars: 20)
                let fileName = random.hostileString(maxScalars: 20)
                let body = random.hostileBytes(count: Int.random(in: 0...64, using: &random))
                form.append(Data(body), name: name, fileName: fileName, mimeType: "text/plain")
                expected.append(
                    ("form-data; name=\"\(Self.escaped(name))\"; filename=\"\(Self.escaped(fileName))\"", body))
            }
            let encoded = try form.encode()
            #expect(encoded.count == form.contentLength.map(Int.init))
            var headers: [[(String, String)]] = [[]]
            var bodies: [[UInt8]] = [[]]
            let parser = MultipartParser(boundary: form.boundary.rawValue)
            parser.onHeader = { headers[headers.count - 1].append(($0, $1)) }
            parser.onBody = { bodies[bodies.count - 1] += $0.readableBytesView }
            parser.onPartComplete = {
                headers.append([])
                bodies.append([])
            }
            try parser.execute(ByteBuffer(bytes: encoded))
            let context = "seed \(seed), iteration \(iteration)"
            try #require(headers.count - 1 == expected.count, "\(context)")
            for (index, part) in expected.enumerated() {
                // Exactly the two headers written: nothing a name holds can start a third.
                #expect(headers[index].count == 2, "\(context): \(headers[index])")
                #expect(headers[index].first?.1 == part.disposition, "\(context)")
                #expect(bodies[index] == part.body, "\(context)")
            }
        }
    }

    @Test(arguments: ["text/plain\r\nX-Injected: 1", "text/plain\n", "text/\0plain"])
    func aMIMETypeWithCRLFOrNULIsATypedErrorNotAHeader(_ mimeType: String) {
        var form = MultipartFormData()
        form.append(Data("x".utf8), name: "f", fileName: "f.txt", mimeType: mimeType)
        let error = #expect(throws: CourierError.self) { try form.encode() }
        #expect(error?.code == .invalidHeader)
        #expect(throws: CourierError.self) { try form.makeReader() }
    }

    @Test(arguments: [("X-A", "1\r\nX-B: 2"), ("X-A\r\n", "1"), ("X-A", "a\0b"), ("Bad Name", "1")])
    func rawPartHeadersWithCRLFOrNULAreRefused(_ header: (String, String)) {
        var form = MultipartFormData()
        let error = #expect(throws: CourierError.self) {
            try form.append(headers: [("Content-Disposition", "form-data; name=\"x\""), header], body: Data("x".utf8))
        }
        #expect(error?.code == .invalidHeader)
        #expect(form.partCount == 0)
    }
}
