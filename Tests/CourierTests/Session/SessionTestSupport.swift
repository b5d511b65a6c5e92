import Courier
import CourierDigest
import CourierTestServer
import Foundation
import NIOConcurrencyHelpers
import Testing

@testable import CourierCore

/// Runs `body` with a fresh directory under the temporary directory, removed afterwards.
func withTemporaryDirectory<R>(named prefix: String, _ body: (URL) async throws -> R) async throws -> R {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try await body(directory)
}

/// Starts a test server and a session manager whose downloads go to a fresh directory; tears both down.
@discardableResult
func withSession<R>(
    configure: (inout SessionManager.Configuration) -> Void = { _ in },
    interceptor: (any RequestInterceptor)? = nil,
    eventMonitors: [any EventMonitor] = [],
    _ body: (TestServer, SessionManager, URL) async throws -> R
) async throws -> R {
    let server = try await TestServer.start()
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "courier-session-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    var configuration = SessionManager.Configuration()
    configuration.temporaryDirectory = directory
    configure(&configuration)
    let manager = SessionManager(configuration: configuration, interceptor: interceptor, eventMonitors: eventMonitors)
    do {
        let result = try await body(server, manager, directory)
        try await manager.shutdown()
        try await server.shutdown()
        try? FileManager.default.removeItem(at: directory)
        return result
    } catch {
        try? await manager.shutdown()
        try? await server.shutdown()
        try? FileManager.default.removeItem(at: directory)
        throw error
    }
}

/// The JSON object in a response body.
func jsonObject(_ data: Data, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
    let object = try JSONSerialization.jsonObject(with: data)
    return try #require(object as? [String: Any], sourceLocation: sourceLocation)
}

func sha256Hex(_ bytes: some Sequence<UInt8>) -> String {
    SHA256.hash(data: Array(bytes)).hexString
}

/// Deterministic bytes that are not a short period.
func patternData(count: Int, seed: UInt8 = 7) -> Data {
    var data = Data(count: count)
    var state = UInt32(seed) &* 2_654_435_761
    // Through the raw buffer: Data's subscript setter costs a uniqueness check per byte in a
    // debug build, and megabytes of it held a cooperative thread long enough to starve the
    // timing-sensitive tests running beside it in the parallel suite.
    data.withUnsafeMutableBytes { bytes in
        for index in bytes.indices {
            state = state &* 1_103_515_245 &+ 12345
            bytes[index] = UInt8(truncatingIfNeeded: state >> 16)
        }
    }
    return data
}

/// Collects values from callbacks on any thread.
final class Recorder<Value: Sendable>: Sendable {
    private let box = NIOLockedValueBox<[Value]>([])
    func append(_ value: Value) { box.withLockedValue { $0.append(value) } }
    var values: [Value] { box.withLockedValue { $0 } }
}

/// Holds a value set after creation (a task handle a callback needs).
final class Slot<Value: Sendable>: Sendable {
    private let box = NIOLockedValueBox<Value?>(nil)
    var value: Value? {
        get { box.withLockedValue { $0 } }
        set { box.withLockedValue { $0 = newValue } }
    }
}

/// Checks a sequence of progress reports: monotone, never past the total, ending at the total.
func expectWellFormedProgress(
    _ reports: [TransferProgress], total: Int64, sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(!reports.isEmpty, "no progress was reported", sourceLocation: sourceLocation)
    var previous: Int64 = -1
    for (index, report) in reports.enumerated() {
        // The closing report of an unknown-length transfer repeats the count, now with its total.
        let isClosingTotal = index == reports.count - 1 && index > 0 && reports[index - 1].totalUnitCount == nil
        if isClosingTotal {
            #expect(report.completedUnitCount >= previous, sourceLocation: sourceLocation)
        } else {
            #expect(
                report.completedUnitCount > previous, "progress went back: \(reports)", sourceLocation: sourceLocation)
        }
        if let reportTotal = report.totalUnitCount {
            #expect(report.completedUnitCount <= reportTotal, sourceLocation: sourceLocation)
        }
        previous = report.completedUnitCount
    }
    #expect(
        reports.last == TransferProgress(completedUnitCount: total, totalUnitCount: total),
        sourceLocation: sourceLocation)
}

func temporaryFile(_ data: Data, in directory: URL, name: String = UUID().uuidString) throws -> URL {
    let url = directory.appendingPathComponent(name)
    try data.write(to: url)
    return url
}
