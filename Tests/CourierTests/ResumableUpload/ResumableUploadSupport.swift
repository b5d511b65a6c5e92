import Courier
import CourierTestServer
import Foundation
import NIOConcurrencyHelpers
import Testing

@testable import CourierCore

/// What `GET /files/<id>` reports about an upload on the test server.
struct ServerUploadReport: Decodable, Sendable {
    var offset: Int64
    var length: Int64
    var complete: Bool
    var sha256: String?
    var appends: Int
    var cuts: Int
    var metadata: String?
}

/// What `GET /files/` reports: uploads created and body bytes received since the server started.
struct ServerUploadTotals: Decodable, Sendable {
    var creations: Int
    var bytesReceived: Int64

    enum CodingKeys: String, CodingKey {
        case creations
        case bytesReceived = "bytes_received"
    }
}

/// A file of `size` seeded bytes in `directory`, and its bytes.
func makeUploadFile(size: Int, in directory: URL, name: String = "clip.mp4", seed: UInt64 = 7) throws -> (URL, Data) {
    var generator = SeededRandom(seed: seed)
    var bytes = [UInt8](repeating: 0, count: size)
    for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: generator.next()) }
    let data = Data(bytes)
    let url = directory.appendingPathComponent(name)
    try data.write(to: url)
    return (url, data)
}

extension HTTPSessionManager {
    func uploadReport(_ uploadURL: URL) async throws -> ServerUploadReport {
        try await get(uploadURL.absoluteString, as: ServerUploadReport.self).value
    }

    func uploadTotals(_ server: TestServer) async throws -> ServerUploadTotals {
        try await get(server.url("/files/").absoluteString, as: ServerUploadTotals.self).value
    }
}

/// Collects progress reports.
final class UploadProgressLog: Sendable {
    private let values = NIOLockedValueBox<[TransferProgress]>([])
    var handler: ProgressHandler { { value in self.values.withLockedValue { $0.append(value) } } }
    var all: [TransferProgress] { values.withLockedValue { $0 } }
}
