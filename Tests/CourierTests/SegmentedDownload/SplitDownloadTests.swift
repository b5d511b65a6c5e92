import Courier
import CourierTestServer
import Foundation
import NIOConcurrencyHelpers
import Testing

@testable import CourierCore

/// One file over several ranged requests (`download(_:to:connections:...)`), against the test
/// server's `/split/{n}`: each segment checked against the first answer's validator, a server
/// that cannot be split downloaded whole, and what a stopped download keeps.
@Suite("Split downloads over ranged connections", .timeLimit(.minutes(3)))
struct SplitDownloadTests {
    static let length = 5_000_000

    /// The `Range` headers the server saw for `path`, in order.
    func ranges(_ server: TestServer, path: String) -> [String?] {
        server.stats.recentRequestHeads.filter { $0.uri.hasPrefix(path) }.map { $0.value("Range") }
    }

    func files(in directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }

    @Test func aStrongETagFileComesOverSeveralRangedRequests() async throws {
        try await withSession { server, manager, directory in
            let destination = directory.appendingPathComponent("split.bin")
            let path = "/split/\(Self.length)?id=strong"
            let reports = Recorder<TransferProgress>()
            let response = try await manager.download(
                Request(url: server.url(path)), to: destination, connections: 4, progress: { reports.append($0) })
            #expect(response.response.statusCode == 206)
            #expect(response.fileURL == destination)
            #expect(Array(try Data(contentsOf: destination)) == TestServer.expectedBytes(count: Self.length, seed: 1))
            let heads = server.stats.recentRequestHeads.filter { $0.uri.hasPrefix("/split/") }
            #expect(heads.first?.value("Range") == "bytes=0-")
            #expect(heads.count >= 4)
            for head in heads.dropFirst() {
                #expect(head.value("If-Range") == "\"split-\(Self.length)-v1\"")
                #expect(head.value("Range")?.hasPrefix("bytes=") == true)
                #expect(head.value("Accept-Encoding") == "identity")
            }
            expectWellFormedProgress(reports.values, total: Int64(Self.length))
            #expect(files(in: directory) == ["split.bin"])
        }
    }

    @Test func lastModifiedServesWhenThereIsNoETag() async throws {
        try await withSession { server, manager, directory in
            let destination = directory.appendingPathComponent("modified.bin")
            let path = "/split/\(Self.length)?id=modified&validator=last-modified"
            _ = try await manager.download(Request(url: server.url(path)), to: destination, connections: 3)
            #expect(Array(try Data(contentsOf: destination)) == TestServer.expectedBytes(count: Self.length, seed: 1))
            let heads = server.stats.recentRequestHeads.filter { $0.uri.hasPrefix("/split/") }
            #expect(heads.count >= 3)
            #expect(heads.dropFirst().allSatisfy { $0.value("If-Range") == "Thu, 01 Jan 2026 00:00:00 GMT" })
        }
    }

    @Test(arguments: ["validator=weak", "validator=none", "ranges=ignore"])
    func aFileThatCannotBeSplitComesWholeOverOneRequest(query: String) async throws {
        try await withSession { server, manager, directory in
            let destination = directory.appendingPathComponent("whole.bin")
            let path = "/split/\(Self.length)?id=whole-\(query)&\(query)"
            _ = try await manager.download(Request(url: server.url(path)), to: destination, connections: 4)
            #expect(Array(try Data(contentsOf: destination)) == TestServer.expectedBytes(count: Self.length, seed: 1))
            #expect(ranges(server, path: "/split/") == ["bytes=0-"])
        }
    }

    @Test func aFileChangedBetweenSegmentsFailsAndLeavesNoFile() async throws {
        try await withSession { server, manager, directory in
            let destination = directory.appendingPathComponent("changed.bin")
            let path = "/split/\(Self.length)?id=changed&change_after=1"
            let error = await #expect(throws: CourierError.self) {
                try await manager.download(Request(url: server.url(path)), to: destination, connections: 4)
            }
            #expect(error?.code == .downloadFailed)
            #expect(error?.message.contains("changed") == true)
            #expect(files(in: directory).isEmpty)
        }
    }

    @Test func aResumableDownloadWhoseFileChangedRemovesItsPartialFile() async throws {
        try await withSession { server, manager, directory in
            let destination = directory.appendingPathComponent("changed.bin")
            let path = "/split/\(Self.length)?id=changed-resumable&change_after=1"
            await #expect(throws: CourierError.self) {
                try await manager.download(
                    Request(url: server.url(path)), to: destination, connections: 4, options: [.resumesPartialFile])
            }
            #expect(files(in: directory).isEmpty)
        }
    }

    @Test func aSegmentCutMidwayContinuesFromWhereItStopped() async throws {
        try await withSession { server, manager, directory in
            let destination = directory.appendingPathComponent("cut.bin")
            let path = "/split/\(Self.length)?id=cut&cut_once=1"
            _ = try await manager.download(Request(url: server.url(path)), to: destination, connections: 4)
            #expect(Array(try Data(contentsOf: destination)) == TestServer.expectedBytes(count: Self.length, seed: 1))
        }
    }

    @Test func aResumeRecordContinuesOnlyTheMissingRanges() async throws {
        try await withSession { server, manager, directory in
            let destination = directory.appendingPathComponent("resumed.bin")
            let url = server.url("/split/\(Self.length)?id=resumed")
            let partial = URL(fileURLWithPath: destination.path + ".part")
            let expected = TestServer.expectedBytes(count: Self.length, seed: 1)
            let missing: [Range<Int64>] = [1_000_000..<2_500_000, 4_000_000..<5_000_000]
            var left = expected
            for range in missing {
                let bounds = Int(range.lowerBound)..<Int(range.upperBound)
                left.replaceSubrange(bounds, with: repeatElement(0, count: bounds.count))
            }
            try Data(left).write(to: partial)
            var record = try #require(
                ResumeRecord(
                    url: url, entityTag: "\"split-\(Self.length)-v1\"",
                    lastModified: "Thu, 01 Jan 2026 00:00:00 GMT"))
            record.split(length: Int64(Self.length), missing: missing)
            try record.write(to: ResumeRecord.location(for: partial))
            let kept = try #require(ResumeData(partialFile: partial))
            #expect(kept.missingRanges == missing)
            #expect(kept.bytesWritten == Int64(Self.length) - 2_500_000)

            _ = try await manager.download(
                Request(url: url), to: destination, connections: 2, options: [.resumesPartialFile])
            #expect(Array(try Data(contentsOf: destination)) == expected)
            let asked = ranges(server, path: "/split/")
            #expect(asked.first == "bytes=1000000-2499999")
            #expect(asked.allSatisfy { $0?.hasPrefix("bytes=0-") != true })
            #expect(files(in: directory) == ["resumed.bin"])
        }
    }

    @Test func aCancelledDownloadKeepsWhatEachSegmentHasAndContinuesIt() async throws {
        try await withSession { server, manager, directory in
            let destination = directory.appendingPathComponent("stopped.bin")
            let length = 40_000_000
            let url = server.url("/split/\(length)?id=stopped")
            let partial = URL(fileURLWithPath: destination.path + ".part")
            let started = Slot<Task<SessionResponse, any Error>>()
            let task = Task {
                try await manager.download(
                    Request(url: url), to: destination, connections: 4, options: [.resumesPartialFile],
                    progress: { progress in
                        if progress.completedUnitCount > Int64(length / 4) { started.value?.cancel() }
                    })
            }
            started.value = task
            if case .success = await task.result {
                // Finished before the cancel landed: nothing to continue, and nothing left behind.
                #expect(files(in: directory) == ["stopped.bin"])
                return
            }
            let kept = try #require(ResumeData(partialFile: partial))
            let missing = try #require(kept.missingRanges)
            #expect(!missing.isEmpty)
            let expected = TestServer.expectedBytes(count: length, seed: 1)
            let onDisk = Array(try Data(contentsOf: partial))
            // Every byte the record does not list as missing is on disk and right.
            var cursor = 0
            for range in missing {
                // Adjacent missing ranges (a segment that never started) leave no bytes between them,
                // and may lie past the end of the file, which has holes.
                let present = cursor..<Int(range.lowerBound)
                if !present.isEmpty {
                    #expect(present.upperBound <= onDisk.count, "the record lists bytes the file does not have")
                    if present.upperBound <= onDisk.count {
                        #expect(Array(onDisk[present]) == Array(expected[present]))
                    }
                }
                cursor = Int(range.upperBound)
            }
            let before = server.stats.recentRequestHeads.count
            _ = try await manager.download(
                Request(url: url), to: destination, connections: 4, options: [.resumesPartialFile])
            #expect(Array(try Data(contentsOf: destination)) == expected)
            let resumed = server.stats.recentRequestHeads.dropFirst(before)
            #expect(resumed.allSatisfy { $0.value("If-Range") == "\"split-\(length)-v1\"" })
            #expect(files(in: directory) == ["stopped.bin"])
        }
    }

    @Test func anIdleConnectionTakesTheBackHalfOfAStalledSegment() async throws {
        try await withSession { server, manager, directory in
            let destination = directory.appendingPathComponent("rebalanced.bin")
            let length = 8 << 20
            // The second segment's response stalls after its head until the server sees another
            // request: only the back half of that segment, asked for by the idle first connection,
            // lets it go on.
            let path = "/split/\(length)?id=rebalanced&hold_at=\(length / 2)"
            _ = try await manager.download(Request(url: server.url(path)), to: destination, connections: 2)
            #expect(Array(try Data(contentsOf: destination)) == TestServer.expectedBytes(count: length, seed: 1))
            let asked = ranges(server, path: "/split/")
            #expect(Array(asked.prefix(2)) == ["bytes=0-", "bytes=\(length / 2)-\(length - 1)"])
            #expect(asked.dropFirst(2).first == "bytes=\(length / 4 * 3)-\(length - 1)", "\(asked)")
            #expect(files(in: directory) == ["rebalanced.bin"])
        }
    }

    @Test func theFreeConnectionTakesTheBackHalfOfTheLargestSegment() {
        var plan = SegmentPlan(length: 8 << 20, count: 2)
        #expect(plan.segments.map { $0.position..<$0.end } == [0..<(4 << 20), (4 << 20)..<(8 << 20)])
        plan.start(0)
        let second = plan.assign()
        #expect(second == 1)
        let firstGoesOn = plan.advance(0, to: 4 << 20)
        #expect(!firstGoesOn)
        plan.release(0)
        let secondGoesOn = plan.advance(1, to: 5 << 20)
        #expect(secondGoesOn)
        let stolen = plan.assign()
        #expect(stolen == 2)
        let middle: Int64 = (6 << 20) + (512 << 10)
        #expect(plan.segments[1].end == middle)
        #expect(plan.segments[2].position == middle)
        #expect(plan.segments[2].end == 8 << 20)
        #expect(plan.missing == [(5 << 20)..<middle, middle..<(8 << 20)])
        #expect(plan.completed == 5 << 20)
    }

    @Test func aSmallFileIsOneSegmentAndTinyBackHalvesAreNotTaken() {
        var plan = SegmentPlan(length: 300_000, count: 8)
        #expect(plan.segments.count == 1)
        plan.start(0)
        let next = plan.assign()
        #expect(next == nil)
    }
}
