import Foundation
import MultipartKit
import NIOCore
import NIOHTTP1

/// The inputs of the small-fields multipart row and its peer, vapor/multipart-kit's serializer.
enum SmallFields {
    static let count = 1_000
    static let boundary = "courier.bench.boundary.0123456789abcdef"
    static func name(_ index: Int) -> String { "field\(index)" }
    static func value(_ index: Int) -> String { "value \(index)" }

    /// Built and serialized to `Data` once per iteration, as the Courier side does.
    static func multipartKitBody() throws -> Data {
        var parts: [MultipartPart] = []
        parts.reserveCapacity(count)
        for index in 0..<count {
            let headers: HTTPHeaders = ["Content-Disposition": "form-data; name=\"\(name(index))\""]
            parts.append(MultipartPart(headers: headers, body: value(index)))
        }
        var buffer = ByteBufferAllocator().buffer(capacity: 0)
        try MultipartSerializer().serialize(parts: parts, boundary: boundary, into: &buffer)
        return Data(buffer.readableBytesView)
    }

    static func runMultipartKit(options: Options) throws -> Measurement {
        let iterations = try options.int("iterations", default: 300)
        let sample = try multipartKitBody()
        for _ in 0..<max(1, iterations / 10) { blackHole(try multipartKitBody()) }
        let (elapsed, total) = try measure { () -> Int in
            var total = 0
            for _ in 0..<iterations { total &+= try multipartKitBody().count }
            return total
        }
        return Measurement(
            seconds: elapsed, operations: iterations, bytes: total,
            correct: total == sample.count * iterations, detail: "\(sample.count) bytes per body",
            sha256: sha256Hex(sample))
    }
}
