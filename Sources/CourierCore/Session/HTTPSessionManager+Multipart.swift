import Foundation

/// Multipart uploads, as AFHTTPSessionManager's `POST:parameters:constructingBodyWithBlock:`.
///
/// The async forms take the caller's isolation (`isolation: isolated (any Actor)? = #isolation`,
/// SE-0420; never passed by hand): they run `constructingBody` on the caller's actor,
/// synchronously, before their first suspension, so the closure may read and write that
/// actor's state (a `@MainActor` view model's fields, say) and is never sent to another actor. The upload and the decoding of the response then run off the caller's actor.
extension HTTPSessionManager {
    /// A `POST` request whose body is a streamed, replayable multipart form, made by the
    /// request serializer's own builder
    /// (``HTTPRequestSerializer/multipartFormRequest(method:urlString:parameters:boundary:constructingBody:)``),
    /// so both agree: `parameters` first, as text fields (data values as raw bytes, null as
    /// empty), then whatever `constructingBody` appends; `Content-Type` with the boundary and the
    /// exact `Content-Length`; a form with no parts gives a request with no body, as AFNetworking.
    ///
    /// The builder is ``requestSerializer`` when that is an ``HTTPRequestSerializer``, the one
    /// inside it for an ``HTTPBasedRequestSerializer`` (JSON, property list), and a default one
    /// otherwise. `headers` are set last, over its defaults (as AFNetworking does), except
    /// `Content-Length`, which only the form decides.
    /// - Throws: ``CourierError`` `.invalidURL`, `.invalidHeader`, errors from the parameters or
    ///   an invalid part (``MultipartFormData/validate()``), or the closure's error unchanged.
    public func multipartRequest(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:],
        constructingBody: (inout MultipartFormData) throws -> Void
    ) throws -> Request {
        let url = try url(for: path)
        let builder = Self.httpSerializer(in: requestSerializer) ?? HTTPRequestSerializer()
        var request = try builder.multipartFormRequest(
            method: .post, urlString: url.absoluteString, parameters: parameters, constructingBody: constructingBody)
        for (name, value) in headers.sorted(by: { $0.key < $1.key })
        where name.caseInsensitiveCompare("Content-Length") != .orderedSame {
            try request.setValue(value, forHTTPHeaderField: name)
        }
        return request
    }

    /// Posts a multipart form built by `constructingBody`; the response decoded by
    /// ``responseSerializer``. `uploadProgress` counts body bytes sent.
    /// - Throws: as ``multipartRequest(_:parameters:headers:constructingBody:)``, then
    ///   ``CourierError`` from sending or decoding.
    public func post(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:],
        constructingBody: (inout MultipartFormData) throws -> Void, uploadProgress: ProgressHandler? = nil,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> DataResponse<any Sendable> {
        let request = try multipartRequest(
            path, parameters: parameters, headers: headers, constructingBody: constructingBody)
        return try await upload(request, serializer: configuredSerializer, progress: uploadProgress)
    }

    /// Posts a multipart form built by `constructingBody`; the response's JSON decoded as `type`
    /// (see ``get(_:parameters:as:headers:decoder:downloadProgress:)`` for how it is checked).
    /// - Throws: as ``post(_:parameters:headers:constructingBody:uploadProgress:isolation:)``, with the
    ///   typed verbs' response errors.
    public func post<Value: Decodable & Sendable>(
        _ path: String, parameters: Parameters? = nil, as type: Value.Type, headers: [String: String] = [:],
        constructingBody: (inout MultipartFormData) throws -> Void, decoder: JSONDecoder = JSONDecoder(),
        uploadProgress: ProgressHandler? = nil, isolation: isolated (any Actor)? = #isolation
    ) async throws -> DataResponse<Value> {
        let request = try multipartRequest(
            path, parameters: parameters, headers: headers, constructingBody: constructingBody)
        return try await upload(request, serializer: Self.decoding(type, with: decoder), progress: uploadProgress)
    }

    /// The completion-handler form of ``post(_:parameters:headers:constructingBody:uploadProgress:isolation:)``.
    @discardableResult
    public func post(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:],
        constructingBody: (inout MultipartFormData) throws -> Void, uploadProgress: ProgressHandler? = nil,
        completion: @escaping Completion
    ) -> SessionTask? {
        start(
            path, kind: .upload, serializer: configuredSerializer, uploadProgress: uploadProgress,
            downloadProgress: nil, completion: completion
        ) {
            try multipartRequest(path, parameters: parameters, headers: headers, constructingBody: constructingBody)
        }
    }

    /// Nonisolated, unlike its callers: from here on, decoding included, the work runs off the caller's actor.
    func upload<Serializer: ResponseSerializer>(
        _ request: Request, serializer: Serializer, progress: ProgressHandler?
    ) async throws -> DataResponse<Serializer.SerializedObject> {
        let task = session.uploadTask(withStreamedRequest: request, progress: progress)
        task.resume()
        return try Self.serialize(try await task.response(), with: serializer)
    }
}
