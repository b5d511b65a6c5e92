import Courier
import CourierTestSupport
import Foundation
import NIOCore
import Testing

@testable import CourierCore

/// Courier's bodies parsed by four Python parsers (python-multipart, multipart,
/// streaming-form-data, Werkzeug) through `Tests/interop/multipart_parsers.py`.
///
/// Runs when `COURIER_PYTHON` names a Python with those packages (`.ci/run` sets it up);
/// skipped without it, except under `CI=true`, where a missing interpreter is a failure.
@Suite(.timeLimit(.minutes(3))) struct MultipartInteropTests {
    struct ManifestPart: Encodable {
        var name: String
        var filename: String?
        var contentType: String?
        var data: String

        // The Python side reads snake_case keys.
        enum CodingKeys: String, CodingKey {
            case name, filename, data
            case contentType = "content_type"
        }
    }

    struct ManifestCase: Encodable {
        var body: String
        var boundary: String
        var parts: [ManifestPart]
    }

    /// Names without backslashes: see the script's notes on how Python parsers read them.
    static let alphabet: [String] = [
        "a", "Z", "0", " ", "\"", "\r", "\n", "é", "日", "😀", ";", "=", "'", "%", "-", "/", ".",
    ]

    static func name(_ rng: inout SplitMix64, suffix: String) -> String {
        (0..<Int.random(in: 0...10, using: &rng)).map { _ in alphabet.randomElement(using: &rng) ?? "a" }.joined()
            + suffix
    }

    static func text(_ rng: inout SplitMix64) -> String {
        let count = Int.random(in: 0...(Int.random(in: 0..<10, using: &rng) == 0 ? 2000 : 40), using: &rng)
        return (0..<count).map { _ in alphabet.randomElement(using: &rng) ?? "a" }.joined()
    }

    static func bytes(_ rng: inout SplitMix64) -> [UInt8] {
        let roll = Int.random(in: 0..<100, using: &rng)
        let count =
            roll < 70
            ? Int.random(in: 0...100, using: &rng)
            : roll < 98 ? Int.random(in: 0...8192, using: &rng) : Int.random(in: 0...(256 * 1024), using: &rng)
        var words = [UInt64](repeating: 0, count: (count + 7) / 8)
        for index in words.indices { words[index] = rng.next() }
        return words.withUnsafeBytes { Array($0.prefix(count)) }
    }

    /// A random form of every synchronous part kind, and the manifest entry describing it.
    static func makeCase(seed: UInt64, directory: TemporaryDirectory) throws -> ManifestCase {
        var rng = SplitMix64(seed: seed &* 7919)
        var form = MultipartFormData()
        var parts: [ManifestPart] = []
        for index in 0..<Int.random(in: 1...6, using: &rng) {
            let name = Self.name(&rng, suffix: "-\(index)")
            let fileName = Self.name(&rng, suffix: ".f\(index)")
            switch Int.random(in: 0..<7, using: &rng) {
            case 0:
                let value = text(&rng)
                form.append(value, name: name)
                parts.append(ManifestPart(name: whatwgEscaped(name), data: Data(value.utf8).base64EncodedString()))
            case 1:
                let value = bytes(&rng)
                form.append(Data(value), name: name, fileName: fileName, mimeType: "application/x-test")
                parts.append(
                    ManifestPart(
                        name: whatwgEscaped(name), filename: whatwgEscaped(fileName),
                        contentType: "application/x-test", data: Data(value).base64EncodedString()))
            case 2:
                let value = bytes(&rng)
                form.append(ByteBuffer(bytes: value), name: name, fileName: fileName, mimeType: "image/gif")
                parts.append(
                    ManifestPart(
                        name: whatwgEscaped(name), filename: whatwgEscaped(fileName),
                        contentType: "image/gif", data: Data(value).base64EncodedString()))
            case 3:
                let value = bytes(&rng)
                let url = try directory.file("interop-\(seed)-\(index).pdf", value)
                try form.append(fileURL: url, name: name)
                parts.append(
                    ManifestPart(
                        name: whatwgEscaped(name), filename: url.lastPathComponent,
                        contentType: "application/pdf", data: Data(value).base64EncodedString()))
            case 4:
                let value = bytes(&rng)
                let url = try directory.file("interop-\(seed)-\(index)", value)
                try form.append(fileURL: url, name: name, fileName: fileName, mimeType: "audio/ogg")
                parts.append(
                    ManifestPart(
                        name: whatwgEscaped(name), filename: whatwgEscaped(fileName),
                        contentType: "audio/ogg", data: Data(value).base64EncodedString()))
            case 5:
                let value = bytes(&rng)
                try form.append(length: Int64(value.count), name: name, fileName: fileName, mimeType: "video/webm") {
                    InputStream(data: Data(value))
                }
                parts.append(
                    ManifestPart(
                        name: whatwgEscaped(name), filename: whatwgEscaped(fileName),
                        contentType: "video/webm", data: Data(value).base64EncodedString()))
            default:
                let value = text(&rng)
                try form.append(
                    headers: [
                        ("X-Index", "\(index)"), ("Content-Type", "text/csv"),
                        ("Content-Disposition", "form-data; name=\"\(whatwgEscaped(name))\""),
                    ],
                    body: Data(value.utf8))
                parts.append(
                    ManifestPart(
                        name: whatwgEscaped(name), contentType: "text/csv",
                        data: Data(value.utf8).base64EncodedString()))
            }
        }
        let bodyURL = directory.url.appendingPathComponent("body-\(seed).multipart")
        try form.write(to: bodyURL)
        return ManifestCase(body: bodyURL.path, boundary: form.boundary.rawValue, parts: parts)
    }

    @Test func fourPythonParsersReturnThePartsPutIn() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let python = environment["COURIER_PYTHON"], !python.isEmpty else {
            if environment["CI"] == "true" {
                Issue.record("COURIER_PYTHON is not set under CI=true: the multipart interop check cannot run")
            }
            return
        }
        let directory = try TemporaryDirectory()
        let cases = try (UInt64(1)...200).map { try Self.makeCase(seed: $0, directory: directory) }
        let manifest = directory.url.appendingPathComponent("manifest.json")
        try JSONEncoder().encode(cases).write(to: manifest)

        let script = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("interop/multipart_parsers.py")
        let outputURL = directory.url.appendingPathComponent("output.txt")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        let output = try FileHandle(forWritingTo: outputURL)
        defer { try? output.close() }

        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script.path, manifest.path]
        process.standardOutput = output
        process.standardError = output
        try process.run()
        // A bound on the wait: a parser that hangs is ended and reported, never waited on forever.
        let watchdog = DispatchWorkItem { [process] in if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 300, execute: watchdog)
        process.waitUntilExit()
        watchdog.cancel()

        let report = (try? String(contentsOf: outputURL, encoding: .utf8)) ?? ""
        #expect(process.terminationStatus == 0, "\(report)")
        #expect(report.contains("200 of 200 bodies parsed identically"), "\(report)")
    }
}
