import Courier
import Foundation

/// Courier's side of the multipart rows: `MultipartFormData`, its pull reader and `encode()`.
enum CourierMultipart {
    // MARK: 1,000 small fields, built and encoded

    static func smallFieldsBody() throws -> Data {
        var form = try MultipartFormData(boundary: SmallFields.boundary)
        for index in 0..<SmallFields.count {
            form.append(SmallFields.value(index), name: SmallFields.name(index))
        }
        return try form.encode()
    }

    static func runSmallFields(options: Options) throws -> Measurement {
        let iterations = try options.int("iterations", default: 300)
        let sample = try smallFieldsBody()
        // Same boundary and fields: the peer's bytes are the reference layout (AFNetworking's).
        let reference = try SmallFields.multipartKitBody()
        for _ in 0..<max(1, iterations / 10) { blackHole(try smallFieldsBody()) }
        let (elapsed, total) = try measure { () -> Int in
            var total = 0
            for _ in 0..<iterations { total &+= try smallFieldsBody().count }
            return total
        }
        let identical = sample == reference
        return Measurement(
            seconds: elapsed, operations: iterations, bytes: total,
            correct: identical && total == sample.count * iterations,
            detail: identical
                ? "\(sample.count) bytes per body, identical to multipart-kit's"
                : "body differs from multipart-kit's (\(sample.count) vs \(reference.count) bytes)",
            sha256: sha256Hex(sample))
    }

    // MARK: a large file part through the reader

    static func runFileReader(options: Options) throws -> Measurement {
        let path = try options.string("path")
        let boundary = try options.string("boundary")
        let chunkSize = try options.int("chunk", default: 64 * 1024)
        let wantsDigest = options.flag("sha256")
        let url = URL(fileURLWithPath: path)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 64)
        defer { buffer.deallocate() }
        var digest = StreamingDigest()
        let (elapsed, outcome) = try measure { () -> (total: Int, declared: Int64?) in
            var form = try MultipartFormData(boundary: boundary)
            try form.append(
                fileURL: url, name: "file", fileName: url.lastPathComponent, mimeType: "application/octet-stream")
            let reader = try form.makeReader()
            var total = 0
            while true {
                let count = try reader.read(into: buffer)
                if count == 0 { break }
                if wantsDigest { digest.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) }
                total += count
            }
            return (total, form.contentLength)
        }
        let declared = outcome.declared.map(Int.init) ?? -1
        return Measurement(
            seconds: elapsed, operations: 1, bytes: outcome.total, correct: outcome.total == declared,
            detail: "\(outcome.total) bytes read, contentLength \(declared)",
            sha256: wantsDigest ? digest.finalize() : nil, extra: ["content_length": String(declared)])
    }

    // MARK: a large in-memory part to Data

    static func runInMemory(options: Options) throws -> Measurement {
        let size = try options.int("size")
        let baseline = PeakMemory.highWaterMarkKiB()
        let (elapsed, outcome) = try measure { () -> (count: Int, declared: Int64?) in
            let part = InMemoryPart.makePart(size: size)
            var form = try MultipartFormData(boundary: InMemoryPart.boundary)
            form.append(part, name: "file", fileName: "memory.bin", mimeType: "application/octet-stream")
            let body = try form.encode()
            return (body.count, form.contentLength)
        }
        let declared = outcome.declared.map(Int.init) ?? -1
        return Measurement(
            seconds: elapsed, operations: 1, bytes: outcome.count, correct: outcome.count == declared,
            detail: "\(outcome.count) bytes, contentLength \(declared)", extra: ["baseline_kib": String(baseline)])
    }
}
