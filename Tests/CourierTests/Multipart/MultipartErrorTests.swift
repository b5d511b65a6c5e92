import Courier
import Foundation
import NIOCore
import Testing

@testable import CourierCore

/// Every error the multipart layer reports, each asserting its code.
@Suite struct MultipartErrorTests {
    func expectCode(
        _ code: CourierError.Code, _ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        do {
            try body()
            Issue.record("expected \(code), nothing was thrown", sourceLocation: sourceLocation)
        } catch let error as CourierError {
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("expected CourierError \(code), got \(error)", sourceLocation: sourceLocation)
        }
    }

    func expectCode(
        _ code: CourierError.Code, _ body: () async throws -> Void, sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        do {
            try await body()
            Issue.record("expected \(code), nothing was thrown", sourceLocation: sourceLocation)
        } catch let error as CourierError {
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("expected CourierError \(code), got \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func invalidBoundary() {
        expectCode(.invalidBoundary) { _ = try MultipartFormData(boundary: "") }
        expectCode(.invalidBoundary) { _ = try MultipartFormData(boundary: "a\r\nb") }
        expectCode(.invalidBoundary) { _ = try MultipartBoundary(validating: String(repeating: "x", count: 71)) }
        do {
            _ = try MultipartBoundary(validating: "bad\"one")
        } catch let error as CourierError {
            #expect(error.offendingInput == "bad\"one")
            #expect(error.message.contains("bad\"one"))
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test func fileAppendErrors() throws {
        let directory = try TemporaryDirectory()
        var form = MultipartFormData()
        expectCode(.invalidFile) { try form.append(fileURL: URL(string: "http://example.com/a.png")!, name: "a") }
        expectCode(.invalidFile) {
            try form.append(fileURL: directory.url.appendingPathComponent("missing.txt"), name: "a")
        }
        expectCode(.invalidFile) { try form.append(fileURL: directory.url, name: "a") }
        expectCode(.invalidFile) { try form.append(fileURL: URL(fileURLWithPath: "/dev/null"), name: "a") }
        if getuid() != 0 {
            let locked = try directory.file("locked.txt", [1])
            chmod(locked.path, 0)
            expectCode(.invalidFile) { try form.append(fileURL: locked, name: "a") }
        }
        let ok = try directory.file("ok.txt", [1])
        expectCode(.invalidHeader) {
            try form.append(fileURL: ok, name: "a", fileName: "a", mimeType: "text/plain\r\nX: y")
        }
        #expect(form.partCount == 0)
        #expect(form.contentLength == 0)
    }

    @Test func fileThatShrinksOrGrowsOrVanishes() async throws {
        let directory = try TemporaryDirectory()
        let url = try directory.file("changing.bin", [UInt8](repeating: 7, count: 1000))
        var form = MultipartFormData()
        try form.append(fileURL: url, name: "f")

        try Data([UInt8](repeating: 7, count: 10)).write(to: url)
        expectCode(.bodyLengthMismatch) { _ = try form.encode() }
        await expectCode(.bodyLengthMismatch) { _ = try await collectChunks(form) }

        try Data([UInt8](repeating: 7, count: 2000)).write(to: url)
        expectCode(.bodyLengthMismatch) { _ = try form.encode() }
        await expectCode(.bodyLengthMismatch) { _ = try await collectChunks(form) }

        try FileManager.default.removeItem(at: url)
        expectCode(.invalidFile) { _ = try form.encode() }

        // An empty file that later gains bytes is caught too.
        let empty = try directory.file("empty.bin", [])
        var emptyForm = MultipartFormData()
        try emptyForm.append(fileURL: empty, name: "e")
        #expect(try emptyForm.encode().count == Int(emptyForm.contentLength ?? -1))
        try Data([1]).write(to: empty)
        expectCode(.bodyLengthMismatch) { _ = try emptyForm.encode() }
    }

    @Test func streamsThatYieldTooFewOrTooMany() async throws {
        var short = MultipartFormData()
        try short.append(length: 10, name: "s") { InputStream(data: Data([1, 2, 3])) }
        expectCode(.bodyLengthMismatch) { _ = try short.encode() }
        await expectCode(.bodyLengthMismatch) { _ = try await collectChunks(short) }

        var long = MultipartFormData()
        try long.append(length: 2, name: "l") { InputStream(data: Data([1, 2, 3])) }
        expectCode(.bodyLengthMismatch) { _ = try long.encode() }
        await expectCode(.bodyLengthMismatch) { _ = try await collectChunks(long) }

        var asyncShort = MultipartFormData()
        try asyncShort.append(length: 5, name: "a") { SingleChunk(buffer: ByteBuffer(bytes: [1, 2])) }
        await expectCode(.bodyLengthMismatch) { _ = try await collectChunks(asyncShort) }

        var asyncLong = MultipartFormData()
        try asyncLong.append(length: 1, name: "a") { SingleChunk(buffer: ByteBuffer(bytes: [1, 2])) }
        await expectCode(.bodyLengthMismatch) { _ = try await collectChunks(asyncLong) }

        var failing = MultipartFormData()
        try failing.append(length: 3, name: "x") {
            InputStream(url: URL(fileURLWithPath: "/nonexistent/courier")) ?? InputStream(data: Data())
        }
        do {
            _ = try failing.encode()
            Issue.record("a stream that cannot open must fail")
        } catch let error as CourierError {
            #expect(error.code == .streamReadFailed || error.code == .bodyLengthMismatch)
        }

        var factoryFails = MultipartFormData()
        struct Boom: Error {}
        try factoryFails.append(length: 3, name: "x") { throw Boom() }
        expectCode(.streamReadFailed) { _ = try factoryFails.encode() }

        var form = MultipartFormData()
        expectCode(.invalidBodyLength) { try form.append(length: -1, name: "n") { InputStream(data: Data()) } }
        expectCode(.invalidHeader) {
            try form.append(length: 0, name: "n", mimeType: "a\nb") { InputStream(data: Data()) }
        }
    }

    @Test func oneShotPartsAreReadableOnce() async throws {
        var form = MultipartFormData()
        try form.append(InputStream(data: Data("once".utf8)), length: 4, name: "o")
        #expect(!form.isReplayable)
        let copy = form
        let first = try form.encode()
        #expect(first.count == Int(form.contentLength ?? 0))
        expectCode(.bodyNotReplayable) { _ = try form.encode() }
        expectCode(.bodyNotReplayable) { _ = try copy.makeReader() }
        expectCode(.bodyNotReplayable) { _ = try form.makeChunks() }
        expectCode(.bodyNotReplayable) { _ = try RequestBody.source(form).makeChunks() }

        var asyncForm = MultipartFormData()
        try asyncForm.append(SingleChunk(buffer: ByteBuffer(bytes: [9, 9])), length: 2, name: "a")
        #expect(!asyncForm.isReplayable)
        _ = try await collectChunks(asyncForm)
        await expectCode(.bodyNotReplayable) { _ = try await collectChunks(asyncForm) }
    }

    @Test func asyncPartsNeedTheAsyncPath() async throws {
        var form = MultipartFormData()
        try form.append(length: 3, name: "a", fileName: "a.bin", mimeType: "application/octet-stream") {
            SingleChunk(buffer: ByteBuffer(bytes: [1, 2, 3]))
        }
        #expect(form.isReplayable)
        #expect(form.segments == nil)
        expectCode(.asyncPartNeedsAsyncRead) { _ = try form.encode() }
        expectCode(.asyncPartNeedsAsyncRead) { _ = try form.makeReader() }
        let bytes = try await collectChunks(form)
        #expect(bytes.count == Int(form.contentLength ?? 0))
        #expect(try await collectChunks(form) == bytes)
    }

    @Test func invalidMIMETypeOnANonThrowingAppendIsThrownWhenRead() async throws {
        var form = MultipartFormData()
        form.append(Data("x".utf8), name: "a", fileName: "a", mimeType: "text/plain\r\nX-Injected: 1")
        expectCode(.invalidHeader) { try form.validate() }
        expectCode(.invalidHeader) { _ = try form.encode() }
        expectCode(.invalidHeader) { _ = try form.makeReader() }
        expectCode(.invalidHeader) { _ = try form.makeChunks() }
        #expect(form.segments == nil)
        var buffers = MultipartFormData()
        buffers.append(ByteBuffer(bytes: [1]), name: "b", mimeType: "a\0b")
        expectCode(.invalidHeader) { _ = try buffers.encode() }
    }

    @Test func rawHeaderErrors() {
        var form = MultipartFormData()
        expectCode(.invalidHeader) { try form.append(headers: [("X-A", "1\r\nX-B: 2")], body: Data()) }
        expectCode(.invalidHeader) { try form.append(headers: [("X-A", "nul\0")], body: Data()) }
        expectCode(.invalidHeader) { try form.append(headers: [("Bad Name", "1")], body: ByteBuffer()) }
        expectCode(.invalidHeader) { try form.append(headers: [("X-A\n", "1")], body: Data()) }
        #expect(form.partCount == 0)
    }

    @Test func writeToFileErrors() throws {
        let directory = try TemporaryDirectory()
        var form = MultipartFormData()
        form.append("v", name: "k")
        expectCode(.invalidFile) { try form.write(to: URL(string: "http://example.com/out")!) }
        let existing = try directory.file("exists.bin", [1, 2])
        expectCode(.outputFileExists) { try form.write(to: existing) }
        #expect(try Data(contentsOf: existing) == Data([1, 2]))
        expectCode(.fileWriteFailed) { try form.write(to: directory.url.appendingPathComponent("no/such/dir/out")) }

        // A failure midway removes the partial file.
        var failing = MultipartFormData()
        failing.append(Data(repeating: 1, count: 3 << 20), name: "big")
        try failing.append(length: 10, name: "short") { InputStream(data: Data([1])) }
        let partial = directory.url.appendingPathComponent("partial.bin")
        expectCode(.bodyLengthMismatch) { try failing.write(to: partial) }
        #expect(!FileManager.default.fileExists(atPath: partial.path))

        let good = directory.url.appendingPathComponent("good.bin")
        try form.write(to: good)
        #expect(try Data(contentsOf: good) == (try form.encode()))
    }

    @Test func readerStaysFailedAfterAnError() throws {
        var form = MultipartFormData()
        try form.append(length: 5, name: "s") { InputStream(data: Data([1])) }
        let reader = try form.makeReader()
        var buffer = [UInt8](repeating: 0, count: 4096)
        expectCode(.bodyLengthMismatch) { _ = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) } }
        expectCode(.bodyLengthMismatch) { _ = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) } }
    }
}
