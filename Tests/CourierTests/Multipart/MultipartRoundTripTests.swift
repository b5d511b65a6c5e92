import Courier
import Foundation
import MultipartKit
import NIOCore
import Testing

@testable import CourierCore

/// Random forms parsed back by vapor/multipart-kit, an independent parser.
@Suite struct MultipartRoundTripTests {
    /// Collects what multipart-kit's parser reports.
    final class Collector {
        var parts: [ExpectedPart] = []
        var current = ExpectedPart(headers: [], body: [])
    }

    static func parse(_ body: [UInt8], boundary: String) throws -> [ExpectedPart] {
        let collector = Collector()
        let parser = MultipartParser(boundary: boundary)
        parser.onHeader = { name, value in collector.current.headers.append((name, value)) }
        parser.onBody = { buffer in collector.current.body += buffer.readableBytesView }
        parser.onPartComplete = {
            collector.parts.append(collector.current)
            collector.current = ExpectedPart(headers: [], body: [])
        }
        // Feed in uneven pieces, as a network would.
        var offset = 0
        var step = 1
        while offset < body.count {
            let end = Swift.min(body.count, offset + step)
            try parser.execute(ByteBuffer(bytes: body[offset..<end]))
            offset = end
            step = step * 3 + 1
        }
        return collector.parts
    }

    @Test func thousandRandomFormsRoundTrip() async throws {
        let directory = try TemporaryDirectory()
        for seed in UInt64(1)...1000 {
            // A thousand forms are seconds of CPU in a debug build: give the cooperative pool
            // back between them, so the parallel suite's other tests are not starved.
            await Task.yield()
            let random = try RandomForm.make(seed: seed, directory: directory)
            let form = random.form
            let encoded = Array(try form.encode())
            #expect(encoded.count == Int(form.contentLength ?? -1), "seed \(seed)")
            #expect(try readAll(form, bufferSize: 4093 + Int(seed % 8192)) == encoded, "seed \(seed): second reader")
            #expect(try await collectChunks(form) == encoded, "seed \(seed): chunks")
            if let segments = form.segments {
                #expect(try materialize(segments) == encoded, "seed \(seed): segments")
            }
            let parsed = try Self.parse(encoded, boundary: form.boundary.rawValue)
            #expect(parsed == random.expected, "seed \(seed)")
            for (part, expected) in zip(parsed, random.expected) {
                // multipart-kit's own parameter lookup splits on ; and = and trims quotes, so only
                // names without those are asked of it; it does not unescape, as browsers' servers don't.
                if let name = expected.dispositionName, !name.isEmpty,
                    !name.unicodeScalars.contains(where: { ";='".unicodeScalars.contains($0) })
                {
                    let kitPart = MultipartPart(
                        headers: .init(part.headers.map { ($0.0, $0.1) }), body: ByteBuffer(bytes: part.body))
                    #expect(kitPart.name == whatwgEscaped(name), "seed \(seed)")
                }
            }
            // Cleans up per-form files as it goes so the directory stays small.
            if seed % 100 == 0 {
                for file in try FileManager.default.contentsOfDirectory(atPath: directory.url.path) {
                    try? FileManager.default.removeItem(at: directory.url.appendingPathComponent(file))
                }
            }
        }
    }
}
