import Foundation

/// Completion-handler forms of the verbs, as AFHTTPSessionManager's block methods.
///
/// Each returns the running task (nil when the request could not be built; the handler then
/// receives the error). Handlers run once, on the task's own Swift task.
extension HTTPSessionManager {
    /// The outcome a completion handler receives.
    public typealias Completion = @Sendable (Result<DataResponse<any Sendable>, CourierError>) -> Void

    /// `GET path`; see ``get(_:parameters:headers:downloadProgress:)``.
    @discardableResult
    public func get(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:],
        downloadProgress: ProgressHandler? = nil, completion: @escaping Completion
    ) -> SessionTask? {
        start(
            .get, path, parameters: parameters, headers: headers, downloadProgress: downloadProgress,
            completion: completion)
    }

    /// `HEAD path`.
    @discardableResult
    public func head(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:], completion: @escaping Completion
    ) -> SessionTask? {
        start(.head, path, parameters: parameters, headers: headers, completion: completion)
    }

    /// `POST path`.
    @discardableResult
    public func post(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:],
        uploadProgress: ProgressHandler? = nil, downloadProgress: ProgressHandler? = nil,
        completion: @escaping Completion
    ) -> SessionTask? {
        start(
            .post, path, parameters: parameters, headers: headers, uploadProgress: uploadProgress,
            downloadProgress: downloadProgress, completion: completion)
    }

    /// `PUT path`.
    @discardableResult
    public func put(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:], completion: @escaping Completion
    ) -> SessionTask? {
        start(.put, path, parameters: parameters, headers: headers, completion: completion)
    }

    /// `PATCH path`.
    @discardableResult
    public func patch(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:], completion: @escaping Completion
    ) -> SessionTask? {
        start(.patch, path, parameters: parameters, headers: headers, completion: completion)
    }

    /// `DELETE path`.
    @discardableResult
    public func delete(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:], completion: @escaping Completion
    ) -> SessionTask? {
        start(.delete, path, parameters: parameters, headers: headers, completion: completion)
    }

    /// Downloads `path` into `destination`; the handler receives the response with its ``SessionResponse/fileURL``.
    @discardableResult
    public func download(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:], to destination: URL,
        options: DownloadOptions = [], progress: ProgressHandler? = nil,
        completion: @escaping @Sendable (Result<SessionResponse, CourierError>) -> Void
    ) -> SessionTask? {
        let request: Request
        do {
            request = try self.request(.get, path, parameters: parameters, headers: headers)
        } catch {
            completion(.failure(Self.asCourierError(error, path: path)))
            return nil
        }
        let task: SessionTask
        do {
            task = try session.downloadTask(with: request, to: destination, options: options, progress: progress)
        } catch {
            completion(.failure(Self.asCourierError(error, path: path)))
            return nil
        }
        Task {
            completion(await task.outcome())
        }
        task.resume()
        return task
    }

    func start(
        _ method: HTTPMethod, _ path: String, parameters: Parameters?, headers: [String: String],
        uploadProgress: ProgressHandler? = nil, downloadProgress: ProgressHandler? = nil,
        completion: @escaping Completion
    ) -> SessionTask? {
        start(
            path, kind: .data, serializer: configuredSerializer, uploadProgress: uploadProgress,
            downloadProgress: downloadProgress, completion: completion
        ) {
            try self.request(method, path, parameters: parameters, headers: headers)
        }
    }

    /// The completion-handler form of the generic path: builds the request with `build`
    /// (a failure goes to `completion`, and no task is made), runs it as a data or an upload
    /// task, and hands `completion` the response run through `serializer`.
    func start<Serializer: ResponseSerializer>(
        _ path: String, kind: SessionTask.Kind, serializer: Serializer, uploadProgress: ProgressHandler?,
        downloadProgress: ProgressHandler?,
        completion: @escaping @Sendable (Result<DataResponse<Serializer.SerializedObject>, CourierError>) -> Void,
        build: () throws -> Request
    ) -> SessionTask? {
        let request: Request
        do {
            request = try build()
        } catch {
            completion(.failure(Self.asCourierError(error, path: path)))
            return nil
        }
        let task =
            kind == .upload
            ? session.uploadTask(
                withStreamedRequest: request, progress: uploadProgress, downloadProgress: downloadProgress)
            : session.dataTask(with: request, uploadProgress: uploadProgress, downloadProgress: downloadProgress)
        Task {
            let outcome = await task.outcome()
            completion(
                outcome.flatMap { response in
                    Result { try Self.serialize(response, with: serializer) }.mapError {
                        Self.asCourierError($0, path: path)
                    }
                })
        }
        task.resume()
        return task
    }

    static func asCourierError(_ error: any Error, path: String) -> CourierError {
        if let error = error as? CourierError { return error }
        return CourierError(
            .transportFailed, "the request for \"\(path)\" failed: \(error)", offendingInput: path,
            underlyingError: error)
    }
}
