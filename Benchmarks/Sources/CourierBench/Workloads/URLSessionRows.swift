import Courier
import CourierURLSession
import Foundation

/// Courier's session over `URLSessionTransport` (FoundationNetworking on Linux), for the rows
/// that say what the second transport costs against the default one (issue 19).
enum URLSessionRows {
    /// The small-GETs workload, every GET through `SessionManager` over URLSession.
    static func smallGets(options: Options) async throws -> Measurement {
        var configuration = URLSessionTransport.Configuration()
        configuration.maximumConnectionsPerHost = try options.int("concurrency", default: 16)
        return try await CourierSession.smallGets(
            options: options, over: URLSessionTransport(configuration: configuration))
    }

    /// The 1 GiB multipart upload, through `SessionManager` over URLSession.
    static func upload(options: Options) async throws -> Measurement {
        try await CourierSession.upload(options: options, over: URLSessionTransport())
    }
}
