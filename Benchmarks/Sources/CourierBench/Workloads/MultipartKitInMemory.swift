import Foundation
import MultipartKit
import NIOCore
import NIOHTTP1

/// The in-memory part row: one large part held in memory, encoded to `Data`; what matters is
/// the peak resident set as a multiple of the part.
enum InMemoryPart {
    static let boundary = SmallFields.boundary

    /// The part, filled so that its pages are really resident before the measured section.
    static func makePart(size: Int) -> Data {
        var data = Data(count: size)
        data.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else { return }
            var value: UInt8 = 0
            for offset in stride(from: 0, to: raw.count, by: 4096) {
                base.storeBytes(of: value, toByteOffset: offset, as: UInt8.self)
                value &+= 1
            }
        }
        return data
    }

    static func runMultipartKit(options: Options) throws -> Measurement {
        let size = try options.int("size")
        let baseline = PeakMemory.highWaterMarkKiB()
        let (elapsed, body) = try measure { () -> Data in
            // The part is made inside the measured section on both sides: a caller holds it first.
            let part = makePart(size: size)
            let headers: HTTPHeaders = [
                "Content-Disposition": "form-data; name=\"file\"; filename=\"memory.bin\"",
                "Content-Type": "application/octet-stream",
            ]
            var buffer = ByteBufferAllocator().buffer(capacity: 0)
            try MultipartSerializer().serialize(
                parts: [MultipartPart(headers: headers, body: part)], boundary: boundary, into: &buffer)
            return Data(buffer.readableBytesView)
        }
        return Measurement(
            seconds: elapsed, operations: 1, bytes: body.count, correct: body.count > size,
            detail: "\(body.count) bytes", extra: ["baseline_kib": String(baseline)])
    }
}
