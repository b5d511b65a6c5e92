import Foundation

/// Downloads of `GET path` into a file, through ``SessionManager``'s downloads.
extension HTTPSessionManager {
    /// Downloads `GET path` into the file `destination`, with every option of
    /// ``SessionManager/download(_:to:partialFile:options:progress:)`` (``DownloadOptions/resumesPartialFile`` included).
    /// - Throws: ``CourierError`` from building or sending, `.timedOut` past `timeout`;
    ///   `.downloadDestinationExists` and `.downloadFailed` for a destination that exists or whose
    ///   directory does not, before anything is fetched.
    public func download(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:], timeout: Duration? = nil,
        to destination: URL, options: DownloadOptions = [], progress: ProgressHandler? = nil
    ) async throws -> SessionResponse {
        let request = try request(
            .get, path, parameters.map(RequestContent.parameters), headers: headers, timeout: timeout)
        return try await session.download(request, to: destination, options: options, progress: progress)
    }

    /// Downloads `GET path` to where `destination` says once the response is known.
    /// - Throws: as ``download(_:parameters:headers:timeout:to:options:progress:)``.
    public func download(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:], timeout: Duration? = nil,
        options: DownloadOptions = [], progress: ProgressHandler? = nil, destination: @escaping DownloadDestination
    ) async throws -> SessionResponse {
        let request = try request(
            .get, path, parameters.map(RequestContent.parameters), headers: headers, timeout: timeout)
        return try await session.download(request, options: options, progress: progress, destination: destination)
    }

    /// Downloads `GET path` into `destination`; `completion` receives the response with its
    /// ``SessionResponse/fileURL``, or the error. Returns the running task, or nil when the request
    /// could not be built or the destination is refused (`completion` then has the error).
    @discardableResult
    public func download(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:], timeout: Duration? = nil,
        to destination: URL, options: DownloadOptions = [], progress: ProgressHandler? = nil,
        completion: @escaping @Sendable (Result<SessionResponse, CourierError>) -> Void
    ) -> SessionTask? {
        start(path, completion: completion) {
            try session.downloadTask(
                with: request(
                    .get, path, parameters.map(RequestContent.parameters), headers: headers, timeout: timeout),
                to: destination, options: options, progress: progress)
        } deliver: {
            $0
        }
    }
}
