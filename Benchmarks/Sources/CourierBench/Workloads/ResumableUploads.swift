import Courier
import Foundation

/// The resumable-upload rows (issue 45): the big file uploaded with tus (or the IETF draft) to
/// the test server's `/files/` (`--endpoint`, relative to `--url`: `files/?hash=0` for the timed
/// runs, whose server counts the bytes and hashes none), with the library's defaults (what
/// `courier --resumable` sends: a creation, then one `PATCH` of the whole file). The server's
/// report of the upload (`GET` of its URL, after the timed section) travels back to the driver,
/// which checks its length and, for a hashed upload, its sha256.
enum ResumableUploads {
    static func courier(options: Options, uploadProtocol: ResumableUploadProtocol) async throws -> Measurement {
        let base = try CourierSession.url(try options.string("url"))
        let endpoint = options.string("endpoint", default: "files/")
        let fileURL = URL(fileURLWithPath: try options.string("path"))
        let chunkSize = try options.int("chunk-size", default: 0)
        let transport = AsyncHTTPClientTransport()
        let manager = HTTPSessionManager(baseURL: base, session: SessionManager(transport: transport))
        do {
            let uploadOptions = ResumableUploadOptions(
                uploadProtocol: uploadProtocol, chunkSize: chunkSize > 0 ? Int64(chunkSize) : nil)
            let (elapsed, done) = try await measureAsync {
                try await manager.post.resumable(endpoint, .file(fileURL), options: uploadOptions)
            }
            let report = try await manager.session.data(for: Request(url: done.uploadURL)).data
            try await manager.session.shutdown()
            try await transport.shutdown()
            let length = try FileManager.default.attributesOfItem(atPath: fileURL.path)[.size] as? Int ?? -1
            let correct = done.creations == 1 && done.recoveries == 0 && done.bytesSent == Int64(length)
            return Measurement(
                seconds: elapsed, operations: 1, bytes: length, correct: correct,
                detail:
                    "status \(done.response.statusCode), \(done.creations) creation(s), \(done.recoveries) recoveries, "
                    + "\(done.bytesSent) of \(length) bytes sent",
                extra: ["server_report": String(decoding: report, as: UTF8.self)])
        } catch {
            try? await manager.session.shutdown()
            try? await transport.shutdown()
            throw error
        }
    }
}
