import Courier
import Foundation
import NIOCore

@testable import CourierCore

/// A directory under the system temporary directory, removed when the value goes away.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-multipart-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// Writes `bytes` to a new file called `name` and returns its URL.
    func file(_ name: String, _ bytes: [UInt8]) throws -> URL {
        let fileURL = url.appendingPathComponent(name)
        try Data(bytes).write(to: fileURL)
        return fileURL
    }
}

/// A seeded generator, so that a failing random form can be reproduced.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The browser escaping of names, written independently of Courier's byte-level one.
func whatwgEscaped(_ text: String) -> String {
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

/// A part as a parser should see it: header lines in order and the content bytes.
struct ExpectedPart: Equatable, CustomStringConvertible {
    var headers: [(String, String)]
    var body: [UInt8]

    static func == (lhs: ExpectedPart, rhs: ExpectedPart) -> Bool {
        lhs.body == rhs.body && lhs.headers.count == rhs.headers.count
            && zip(lhs.headers, rhs.headers).allSatisfy { $0.0.lowercased() == $1.0.lowercased() && $0.1 == $1.1 }
    }

    var description: String { "\(headers) + \(body.count) bytes" }

    /// The name and file name given to the form, before escaping (for parsers that unescape).
    var dispositionName: String?
    var dispositionFileName: String?
}

/// A random form with every synchronous part kind, and what each part should parse as.
struct RandomForm {
    var form: MultipartFormData
    var expected: [ExpectedPart]

    static let nameAlphabet: [String] = [
        "a", "b", "Z", "0", " ", "\"", "\r", "\n", "\\", "é", "日", "😀", ";", "=", "'", "%", "-", "_", "/",
    ]
    static let extensions = ["png", "JPG", "txt", "cer", "pdf", "unknownext", "json"]

    static func randomName(_ rng: inout SplitMix64) -> String {
        let count = Int.random(in: 0...12, using: &rng)
        return (0..<count).map { _ in nameAlphabet.randomElement(using: &rng) ?? "a" }.joined()
    }

    static func randomBytes(_ rng: inout SplitMix64) -> [UInt8] {
        let roll = Int.random(in: 0..<100, using: &rng)
        let count: Int
        switch roll {
        case 0..<70: count = Int.random(in: 0...100, using: &rng)
        case 70..<98: count = Int.random(in: 0...(8 * 1024), using: &rng)
        default: count = Int.random(in: 0...(1 << 20), using: &rng)
        }
        // Eight bytes per generator step keeps debug builds quick on mebibyte parts.
        var words = [UInt64](repeating: 0, count: (count + 7) / 8)
        for index in words.indices { words[index] = rng.next() }
        return words.withUnsafeBytes { Array($0.prefix(count)) }
    }

    static func disposition(_ name: String, _ fileName: String?) -> String {
        var value = "form-data; name=\"\(whatwgEscaped(name))\""
        if let fileName { value += "; filename=\"\(whatwgEscaped(fileName))\"" }
        return value
    }

    static func make(seed: UInt64, directory: TemporaryDirectory, maxParts: Int = 6) throws -> RandomForm {
        var rng = SplitMix64(seed: seed)
        var form = MultipartFormData()
        var expected: [ExpectedPart] = []
        let partCount = Int.random(in: 1...maxParts, using: &rng)
        for index in 0..<partCount {
            let name = randomName(&rng)
            let kind = Int.random(in: 0..<8, using: &rng)
            var part = ExpectedPart(headers: [], body: [])
            part.dispositionName = name
            switch kind {
            case 0:
                let text = randomName(&rng) + String(repeating: "x", count: Int.random(in: 0...300, using: &rng))
                form.append(text, name: name)
                part.headers = [("Content-Disposition", disposition(name, nil))]
                part.body = Array(text.utf8)
            case 1:
                part.body = randomBytes(&rng)
                form.append(Data(part.body), name: name)
                part.headers = [("Content-Disposition", disposition(name, nil))]
            case 2:
                part.body = randomBytes(&rng)
                let fileName = randomName(&rng)
                form.append(Data(part.body), name: name, fileName: fileName, mimeType: "application/x-test")
                part.dispositionFileName = fileName
                part.headers = [
                    ("Content-Disposition", disposition(name, fileName)), ("Content-Type", "application/x-test"),
                ]
            case 3:
                part.body = randomBytes(&rng)
                let fileName = randomName(&rng)
                form.append(ByteBuffer(bytes: part.body), name: name, fileName: fileName, mimeType: "text/plain")
                part.dispositionFileName = fileName
                part.headers = [("Content-Disposition", disposition(name, fileName)), ("Content-Type", "text/plain")]
            case 4:
                part.body = randomBytes(&rng)
                let ext = extensions.randomElement(using: &rng) ?? "bin"
                let url = try directory.file("part\(seed)-\(index).\(ext)", part.body)
                try form.append(fileURL: url, name: name)
                part.dispositionFileName = url.lastPathComponent
                part.headers = [
                    ("Content-Disposition", disposition(name, url.lastPathComponent)),
                    ("Content-Type", MIMETypes.type(forPathExtension: ext)),
                ]
            case 5:
                part.body = randomBytes(&rng)
                let url = try directory.file("explicit\(seed)-\(index)", part.body)
                let fileName = randomName(&rng)
                try form.append(fileURL: url, name: name, fileName: fileName, mimeType: "image/png")
                part.dispositionFileName = fileName
                part.headers = [("Content-Disposition", disposition(name, fileName)), ("Content-Type", "image/png")]
            case 6:
                let body = randomBytes(&rng)
                part.body = body
                let fileName = randomName(&rng)
                try form.append(length: Int64(body.count), name: name, fileName: fileName, mimeType: "video/mp4") {
                    InputStream(data: Data(body))
                }
                part.dispositionFileName = fileName
                part.headers = [("Content-Disposition", disposition(name, fileName)), ("Content-Type", "video/mp4")]
            default:
                part.body = randomBytes(&rng)
                let escapedName = whatwgEscaped(name)
                try form.append(
                    headers: [
                        ("X-Index", "\(index)"), ("content-type", "text/csv"),
                        ("Content-Disposition", "form-data; name=\"\(escapedName)\""),
                    ],
                    body: Data(part.body))
                part.headers = [
                    ("Content-Disposition", "form-data; name=\"\(escapedName)\""), ("content-type", "text/csv"),
                    ("X-Index", "\(index)"),
                ]
            }
            expected.append(part)
        }
        return RandomForm(form: form, expected: expected)
    }
}

/// Reads a whole form through `makeChunks()`.
func collectChunks(_ form: MultipartFormData) async throws -> [UInt8] {
    var bytes: [UInt8] = []
    for try await chunk in try form.makeChunks() { bytes += chunk.readableBytesView }
    return bytes
}

/// Reads a whole form through a reader with a buffer of `bufferSize` bytes.
func readAll(_ form: MultipartFormData, bufferSize: Int) throws -> [UInt8] {
    let reader = try form.makeReader()
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: bufferSize)
    while true {
        let read = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
        if read == 0 { break }
        bytes += buffer[0..<read]
    }
    return bytes
}

/// Materializes `segments` (reading file regions).
func materialize(_ segments: [BodySegment]) throws -> [UInt8] {
    var bytes: [UInt8] = []
    for segment in segments {
        switch segment {
        case .bytes(let buffer): bytes += buffer.readableBytesView
        case .file(let path, let offset, let length):
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            bytes += data[Int(offset)..<Int(offset + length)]
        }
    }
    return bytes
}
