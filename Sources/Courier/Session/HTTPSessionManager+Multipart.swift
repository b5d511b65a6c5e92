import Foundation

/// Multipart uploads, as AFHTTPSessionManager's `POST:parameters:constructingBodyWithBlock:`.
extension HTTPSessionManager {
    /// A `POST` request whose body is a streamed multipart form: `parameters` first, as text
    /// fields (data values as raw bytes, null as empty), then whatever `constructingBody` appends.
    /// The body is replayable, so redirects and retries resend it intact.
    /// - Throws: ``CourierError`` from building the URL or headers, from the parameters, or the
    ///   closure's error unchanged.
    public func multipartRequest(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:],
        constructingBody: (inout MultipartFormData) throws -> Void
    ) throws -> Request {
        var form = MultipartFormData()
        if let parameters {
            for pair in try QueryString.pairs(parameters) {
                switch pair.value {
                case .data(let data): form.append(data, name: pair.key)
                case .null: form.append(Data(), name: pair.key)
                default: form.append(pair.value.formText ?? "", name: pair.key)
                }
            }
        }
        try constructingBody(&form)
        try form.validate()
        var request = try request(.post, path, parameters: nil, headers: headers)
        request.body = .source(form)
        try request.setValue(form.contentType, forHTTPHeaderField: "Content-Type")
        return request
    }

    /// Posts a multipart form built by `constructingBody`; `uploadProgress` counts body bytes sent.
    /// - Throws: ``CourierError`` from building, sending or decoding.
    public func post(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:],
        constructingBody: (inout MultipartFormData) throws -> Void, uploadProgress: ProgressHandler? = nil
    ) async throws -> DataResponse<any Sendable> {
        let request = try multipartRequest(path, parameters: parameters, headers: headers, constructingBody: constructingBody)
        let task = session.uploadTask(withStreamedRequest: request, progress: uploadProgress)
        task.resume()
        let response = try await task.response()
        return try Self.decode(response, with: responseSerializer)
    }

    /// The completion-handler form of ``post(_:parameters:headers:constructingBody:uploadProgress:)``.
    @discardableResult
    public func post(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:],
        constructingBody: (inout MultipartFormData) throws -> Void, uploadProgress: ProgressHandler? = nil,
        completion: @escaping Completion
    ) -> SessionTask? {
        let request: Request
        do {
            request = try multipartRequest(path, parameters: parameters, headers: headers, constructingBody: constructingBody)
        } catch {
            completion(.failure(Self.asCourierError(error, path: path)))
            return nil
        }
        let serializer = responseSerializer
        let task = session.uploadTask(withStreamedRequest: request, progress: uploadProgress)
        Task {
            let outcome = await task.outcome()
            completion(
                outcome.flatMap { response in
                    Result { try Self.decode(response, with: serializer) }.mapError { Self.asCourierError($0, path: path) }
                })
        }
        task.resume()
        return task
    }
}
