import Courier
import Foundation
import NIOCore
import Testing

@testable import CourierCore

/// The pull reader, the chunk sequence and the segment description agree on every byte.
@Suite struct MultipartReaderTests {
    func sampleForm(_ directory: TemporaryDirectory) throws -> MultipartFormData {
        var form = try MultipartFormData(boundary: "sample-boundary")
        form.append("text", name: "t")
        form.append(
            Data(repeating: 3, count: 200_000), name: "big", fileName: "big.bin", mimeType: "application/octet-stream")
        let file = try directory.file("f.txt", Array(repeating: 0x61, count: 2_500_000))
        try form.append(fileURL: file, name: "file")
        form.append(ByteBuffer(bytes: Array(repeating: 5, count: 1000)), name: "buffer")
        try form.append(length: 70_000, name: "stream") { InputStream(data: Data(repeating: 9, count: 70_000)) }
        form.append("last", name: "z")
        return form
    }

    @Test func readersOfAnySizeGiveTheSameBytes() throws {
        let directory = try TemporaryDirectory()
        let form = try sampleForm(directory)
        let reference = Array(try form.encode())
        #expect(reference.count == Int(form.contentLength ?? -1))
        for size in [1, 7, 4096, 65_537, 1 << 20] {
            #expect(try readAll(form, bufferSize: size) == reference, "buffer size \(size)")
        }
        // A zero-length buffer reads nothing and does not end the body.
        let reader = try form.makeReader()
        #expect(try reader.read(into: UnsafeMutableRawBufferPointer(start: nil, count: 0)) == 0)
        #expect(!reader.isAtEnd)
        var buffer = ByteBuffer()
        var total = 0
        while true {
            let read = try reader.read(into: &buffer, maxLength: 100_000)
            if read == 0 { break }
            total += read
        }
        #expect(total == reference.count && reader.bytesRead == Int64(reference.count) && reader.isAtEnd)
        #expect(Array(buffer.readableBytesView) == reference)
    }

    @Test func chunksAndSegmentsMatchTheReader() async throws {
        let directory = try TemporaryDirectory()
        var form = try sampleForm(directory)
        let reference = Array(try form.encode())
        #expect(try await collectChunks(form) == reference)
        #expect(try await collectChunks(form) == reference)
        #expect(form.segments == nil, "a stream part cannot be described as segments")

        form = try MultipartFormData(boundary: "seg")
        form.append("text", name: "t")
        let file = try directory.file("g.txt", Array(repeating: 0x62, count: 10_000))
        try form.append(fileURL: file, name: "file")
        form.append(ByteBuffer(bytes: [1, 2, 3]), name: "b")
        let segments = try #require(form.segments)
        #expect(segments.contains(.file(path: file.path, offset: 0, length: 10_000)))
        #expect(try materialize(segments) == Array(try form.encode()))
        #expect(segments.reduce(0) { $0 + $1.length } == form.contentLength)

        let body = RequestBody.source(form)
        #expect(body.contentLength == form.contentLength)
        #expect(body.isReplayable)
        var viaBody: [UInt8] = []
        for try await chunk in try body.makeChunks() { viaBody += chunk.readableBytesView }
        #expect(viaBody == Array(try form.encode()))
    }

    @Test func inMemoryPartsAreHandedOverWithoutACopy() async throws {
        var form = MultipartFormData()
        let buffer = ByteBuffer(bytes: Array(repeating: 1, count: 100_000))
        form.append(buffer, name: "b")
        var sawSameStorage = false
        for try await chunk in try form.makeChunks() {
            chunk.withUnsafeReadableBytes { chunkBytes in
                buffer.withUnsafeReadableBytes { original in
                    if chunkBytes.baseAddress == original.baseAddress { sawSameStorage = true }
                }
            }
        }
        #expect(sawSameStorage)
        guard case .bytes(let segment)? = form.segments?.dropFirst().first else {
            Issue.record("expected the buffer as the second segment")
            return
        }
        #expect(segment == buffer)
    }

    @Test func throttleLimitsPacketSize() async throws {
        let directory = try TemporaryDirectory()
        var form = try sampleForm(directory)
        let reference = Array(try form.encode())
        form.throttle = MultipartFormData.Throttle(packetSize: 1000, delay: 0)
        let reader = try form.makeReader()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var bytes: [UInt8] = []
        while true {
            let read = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
            if read == 0 { break }
            #expect(read <= 1000)
            bytes += buffer[0..<read]
        }
        #expect(bytes == reference)

        var chunked: [UInt8] = []
        for try await chunk in try form.makeChunks() {
            #expect(chunk.readableBytes <= 1000)
            chunked += chunk.readableBytesView
        }
        #expect(chunked == reference)

        #expect(MultipartFormData.Throttle.suggestedPacketSize == 16 * 1024)
        #expect(MultipartFormData.Throttle.suggestedDelay == 0.2)
        #expect(
            MultipartFormData.Throttle(packetSize: 0, delay: -1) == MultipartFormData.Throttle(packetSize: 1, delay: 0))
    }

    @Test func copiesAreIndependentValues() throws {
        var form = try MultipartFormData(boundary: "copy")
        form.append("a", name: "a")
        let before = try form.encode()
        var copy = form
        copy.append("b", name: "b")
        #expect(try form.encode() == before)
        #expect(copy.partCount == 2 && form.partCount == 1)
        #expect(try copy.encode().count == Int(copy.contentLength ?? 0))
    }
}
