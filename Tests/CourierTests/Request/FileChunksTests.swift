import Courier
import Foundation
import NIOCore
import Testing

@testable import CourierCore

/// The file reader behind streamed (TLS, throttled) uploads: exact bytes, reused buffers, a
/// file closed however the read ends.
@Suite struct FileChunksTests {
    @Test func aReleasedBufferIsReadIntoAgainInsteadOfAllocatingANewOne() async throws {
        let directory = FileManager.default.temporaryDirectory
        let content = patternData(count: (5 << 20) + 7, seed: 5)
        let file = try temporaryFile(content, in: directory)
        defer { try? FileManager.default.removeItem(at: file) }

        var iterator = FileChunks(path: file.path, offset: 0, length: Int64(content.count)).makeAsyncIterator()
        var collected = Data()
        var storages: [UInt] = []
        while let chunk = try await iterator.next() {
            collected.append(contentsOf: chunk.readableBytesView)
            storages.append(chunk.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) })
            // The chunk is dropped here, as a connection drops it once written.
        }
        #expect(collected == content)
        #expect(storages.count == 6)
        // Six reads through a ring of three buffers: every buffer is used twice.
        #expect(Set(storages).count == FileChunks.ringSize, "\(storages)")
        #expect(storages[3] == storages[0])
    }

    @Test func aChunkStillHeldIsNeverOverwritten() async throws {
        let directory = FileManager.default.temporaryDirectory
        let content = patternData(count: (7 << 20) + 3, seed: 9)
        let file = try temporaryFile(content, in: directory)
        defer { try? FileManager.default.removeItem(at: file) }

        var held: [ByteBuffer] = []
        var iterator = FileChunks(path: file.path, offset: 11, length: Int64(content.count - 11)).makeAsyncIterator()
        while let chunk = try await iterator.next() { held.append(chunk) }
        var joined = Data()
        for chunk in held { joined.append(contentsOf: chunk.readableBytesView) }
        #expect(joined == content.dropFirst(11))
    }

    @Test func aFileThatShrankUnderTheReaderIsABodyLengthMismatch() async throws {
        let directory = FileManager.default.temporaryDirectory
        let file = try temporaryFile(Data(repeating: 3, count: 3 << 20), in: directory)
        defer { try? FileManager.default.removeItem(at: file) }
        var iterator = FileChunks(path: file.path, offset: 0, length: 3 << 20).makeAsyncIterator()
        _ = try await iterator.next()
        _ = truncate(file.path, 1 << 20)
        await expectCode(.bodyLengthMismatch) { try await iterator.next() }
    }

    @Test func aRegionThatStopsShortOfTheEndReadsExactlyItsBytes() async throws {
        let content = patternData(count: 1000, seed: 3)
        let file = try temporaryFile(content, in: FileManager.default.temporaryDirectory)
        defer { try? FileManager.default.removeItem(at: file) }
        let body = try RequestBody.file(file, offset: 100, length: 10)
        var collected = Data()
        for try await chunk in try body.makeChunks() { collected.append(contentsOf: chunk.readableBytesView) }
        #expect(collected == content.dropFirst(100).prefix(10))
    }

    @Test func aWholeFileThatGrewAfterTheBodyWasMadeIsABodyLengthMismatch() async throws {
        let file = try temporaryFile(Data(repeating: 1, count: 100), in: FileManager.default.temporaryDirectory)
        defer { try? FileManager.default.removeItem(at: file) }
        let body = try RequestBody.file(file)
        try Data(repeating: 1, count: 200).write(to: file)
        await expectCode(.bodyLengthMismatch) {
            for try await _ in try body.makeChunks() {}
        }
    }

    @Test func aReaderDroppedHalfwayClosesItsFile() async throws {
        let file = try temporaryFile(patternData(count: 3 << 20, seed: 4), in: FileManager.default.temporaryDirectory)
        defer { try? FileManager.default.removeItem(at: file) }
        do {
            var iterator = FileChunks(path: file.path, offset: 0, length: 3 << 20).makeAsyncIterator()
            _ = try await iterator.next()
            #expect(ProcessProbe.descriptorCount(openOn: file.path) ?? 1 == 1)
        }
        // Dropped after one of three chunks, as a cancelled upload drops it.
        #expect(ProcessProbe.descriptorCount(openOn: file.path) ?? 0 == 0)
    }

    @Test func aReaderThatEndsClosesItsFile() async throws {
        let file = try temporaryFile(patternData(count: 100, seed: 6), in: FileManager.default.temporaryDirectory)
        defer { try? FileManager.default.removeItem(at: file) }
        var iterator = FileChunks(path: file.path, offset: 0, length: 100).makeAsyncIterator()
        while try await iterator.next() != nil {}
        #expect(ProcessProbe.descriptorCount(openOn: file.path) ?? 0 == 0)
    }

    @Test func aFileRemovedBeforeItIsReadIsAnInvalidFileNamingTheReason() async throws {
        let file = try temporaryFile(Data(count: 10), in: FileManager.default.temporaryDirectory)
        let body = try RequestBody.file(file)
        try FileManager.default.removeItem(at: file)
        let error = await expectCode(.invalidFile) {
            for try await _ in try body.makeChunks() {}
        }
        #expect(error?.message.contains("No such file or directory") == true, "\(String(describing: error))")
    }
}
