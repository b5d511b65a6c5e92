import Foundation

/// Typed verbs: each decodes the response's JSON body into a `Decodable` type with a
/// `JSONDecoder` of the caller's (Alamofire's `serializingDecodable`), and returns it in a
/// ``DataResponse`` beside the request, the response head and the bytes.
///
/// ```swift
/// struct Echo: Decodable, Sendable { let args: [String: String] }
/// let echo = try await manager.get("get", parameters: ["q": .init(query)], as: Echo.self).value
/// let created = try await manager.post("users", json: newUser, as: User.self).value
/// ```
///
/// The response is checked as ``DecodableResponseSerializer`` checks it: a status outside
/// 200–299, a content type that is not JSON, an empty body where a value is needed, or a body
/// that does not decode is a ``CourierError`` (`.unacceptableStatusCode`,
/// `.unacceptableContentType`, `.emptyResponseBody`, `.decodingFailed`) that carries the
/// response head and the bytes. Decode ``Empty`` (or an optional) from responses without a
/// body. The decoder is only read, so one configured decoder can serve every call.
extension HTTPSessionManager {
    // MARK: Parameters

    /// `GET path` with `parameters` in the query, the body decoded as `type`.
    /// - Throws: ``CourierError`` from building or sending, or the response errors above.
    public func get<Value: Decodable & Sendable>(
        _ path: String, parameters: Parameters? = nil, as type: Value.Type, headers: [String: String] = [:],
        decoder: JSONDecoder = JSONDecoder(), downloadProgress: ProgressHandler? = nil
    ) async throws -> DataResponse<Value> {
        try await send(
            .get, path, parameters: parameters, headers: headers, serializer: Self.decoding(type, with: decoder),
            downloadProgress: downloadProgress)
    }

    /// `DELETE path` with `parameters` in the query, the body decoded as `type`.
    /// - Throws: ``CourierError`` from building or sending, or the response errors above.
    public func delete<Value: Decodable & Sendable>(
        _ path: String, parameters: Parameters? = nil, as type: Value.Type, headers: [String: String] = [:],
        decoder: JSONDecoder = JSONDecoder(), downloadProgress: ProgressHandler? = nil
    ) async throws -> DataResponse<Value> {
        try await send(
            .delete, path, parameters: parameters, headers: headers, serializer: Self.decoding(type, with: decoder),
            downloadProgress: downloadProgress)
    }

    /// `POST path` with `parameters` in the body as ``requestSerializer`` writes them, the
    /// response decoded as `type`.
    /// - Throws: ``CourierError`` from building or sending, or the response errors above.
    public func post<Value: Decodable & Sendable>(
        _ path: String, parameters: Parameters? = nil, as type: Value.Type, headers: [String: String] = [:],
        decoder: JSONDecoder = JSONDecoder(), uploadProgress: ProgressHandler? = nil,
        downloadProgress: ProgressHandler? = nil
    ) async throws -> DataResponse<Value> {
        try await send(
            .post, path, parameters: parameters, headers: headers, serializer: Self.decoding(type, with: decoder),
            uploadProgress: uploadProgress, downloadProgress: downloadProgress)
    }

    /// `PUT path` with `parameters` in the body, the response decoded as `type`.
    /// - Throws: ``CourierError`` from building or sending, or the response errors above.
    public func put<Value: Decodable & Sendable>(
        _ path: String, parameters: Parameters? = nil, as type: Value.Type, headers: [String: String] = [:],
        decoder: JSONDecoder = JSONDecoder(), uploadProgress: ProgressHandler? = nil,
        downloadProgress: ProgressHandler? = nil
    ) async throws -> DataResponse<Value> {
        try await send(
            .put, path, parameters: parameters, headers: headers, serializer: Self.decoding(type, with: decoder),
            uploadProgress: uploadProgress, downloadProgress: downloadProgress)
    }

    /// `PATCH path` with `parameters` in the body, the response decoded as `type`.
    /// - Throws: ``CourierError`` from building or sending, or the response errors above.
    public func patch<Value: Decodable & Sendable>(
        _ path: String, parameters: Parameters? = nil, as type: Value.Type, headers: [String: String] = [:],
        decoder: JSONDecoder = JSONDecoder(), uploadProgress: ProgressHandler? = nil,
        downloadProgress: ProgressHandler? = nil
    ) async throws -> DataResponse<Value> {
        try await send(
            .patch, path, parameters: parameters, headers: headers, serializer: Self.decoding(type, with: decoder),
            uploadProgress: uploadProgress, downloadProgress: downloadProgress)
    }

    // MARK: JSON bodies

    /// `POST path` with `body` as JSON (`Content-Type: application/json` unless `headers` names
    /// one), the response decoded as `type`. Callable from any actor with a body that is not `Sendable`.
    /// - Throws: as ``send(_:_:json:headers:encoder:serializer:uploadProgress:downloadProgress:isolation:)``,
    ///   and the response errors above.
    public func post<Value: Decodable & Sendable>(
        _ path: String, json body: some Encodable, as type: Value.Type, headers: [String: String] = [:],
        encoder: JSONEncoder = JSONEncoder(), decoder: JSONDecoder = JSONDecoder(),
        uploadProgress: ProgressHandler? = nil, downloadProgress: ProgressHandler? = nil,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> DataResponse<Value> {
        try await send(
            .post, path, json: body, headers: headers, encoder: encoder,
            serializer: Self.decoding(type, with: decoder), uploadProgress: uploadProgress,
            downloadProgress: downloadProgress)
    }

    /// `PUT path` with `body` as JSON, the response decoded as `type`.
    /// - Throws: as ``post(_:json:as:headers:encoder:decoder:uploadProgress:downloadProgress:isolation:)``.
    public func put<Value: Decodable & Sendable>(
        _ path: String, json body: some Encodable, as type: Value.Type, headers: [String: String] = [:],
        encoder: JSONEncoder = JSONEncoder(), decoder: JSONDecoder = JSONDecoder(),
        uploadProgress: ProgressHandler? = nil, downloadProgress: ProgressHandler? = nil,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> DataResponse<Value> {
        try await send(
            .put, path, json: body, headers: headers, encoder: encoder,
            serializer: Self.decoding(type, with: decoder), uploadProgress: uploadProgress,
            downloadProgress: downloadProgress)
    }

    /// `PATCH path` with `body` as JSON, the response decoded as `type`.
    /// - Throws: as ``post(_:json:as:headers:encoder:decoder:uploadProgress:downloadProgress:isolation:)``.
    public func patch<Value: Decodable & Sendable>(
        _ path: String, json body: some Encodable, as type: Value.Type, headers: [String: String] = [:],
        encoder: JSONEncoder = JSONEncoder(), decoder: JSONDecoder = JSONDecoder(),
        uploadProgress: ProgressHandler? = nil, downloadProgress: ProgressHandler? = nil,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> DataResponse<Value> {
        try await send(
            .patch, path, json: body, headers: headers, encoder: encoder,
            serializer: Self.decoding(type, with: decoder), uploadProgress: uploadProgress,
            downloadProgress: downloadProgress)
    }

    // MARK: Form bodies

    /// `POST path` with `body` as an `application/x-www-form-urlencoded` form written by
    /// `encoder`, the response decoded as `type`. Callable from any actor with a body that is not `Sendable`.
    /// - Throws: as ``send(_:_:form:headers:encoder:serializer:uploadProgress:downloadProgress:isolation:)``,
    ///   and the response errors above.
    public func post<Value: Decodable & Sendable>(
        _ path: String, form body: some Encodable, as type: Value.Type, headers: [String: String] = [:],
        encoder: URLEncodedFormEncoder = URLEncodedFormEncoder(), decoder: JSONDecoder = JSONDecoder(),
        uploadProgress: ProgressHandler? = nil, downloadProgress: ProgressHandler? = nil,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> DataResponse<Value> {
        try await send(
            .post, path, form: body, headers: headers, encoder: encoder,
            serializer: Self.decoding(type, with: decoder), uploadProgress: uploadProgress,
            downloadProgress: downloadProgress)
    }

    /// `PUT path` with `body` as a URL-encoded form, the response decoded as `type`.
    /// - Throws: as ``post(_:form:as:headers:encoder:decoder:uploadProgress:downloadProgress:isolation:)``.
    public func put<Value: Decodable & Sendable>(
        _ path: String, form body: some Encodable, as type: Value.Type, headers: [String: String] = [:],
        encoder: URLEncodedFormEncoder = URLEncodedFormEncoder(), decoder: JSONDecoder = JSONDecoder(),
        uploadProgress: ProgressHandler? = nil, downloadProgress: ProgressHandler? = nil,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> DataResponse<Value> {
        try await send(
            .put, path, form: body, headers: headers, encoder: encoder,
            serializer: Self.decoding(type, with: decoder), uploadProgress: uploadProgress,
            downloadProgress: downloadProgress)
    }

    /// `PATCH path` with `body` as a URL-encoded form, the response decoded as `type`.
    /// - Throws: as ``post(_:form:as:headers:encoder:decoder:uploadProgress:downloadProgress:isolation:)``.
    public func patch<Value: Decodable & Sendable>(
        _ path: String, form body: some Encodable, as type: Value.Type, headers: [String: String] = [:],
        encoder: URLEncodedFormEncoder = URLEncodedFormEncoder(), decoder: JSONDecoder = JSONDecoder(),
        uploadProgress: ProgressHandler? = nil, downloadProgress: ProgressHandler? = nil,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> DataResponse<Value> {
        try await send(
            .patch, path, form: body, headers: headers, encoder: encoder,
            serializer: Self.decoding(type, with: decoder), uploadProgress: uploadProgress,
            downloadProgress: downloadProgress)
    }

    /// The serializer every typed verb decodes with; `decoder` is shared, never changed.
    static func decoding<Value: Decodable & Sendable>(_ type: Value.Type, with decoder: JSONDecoder)
        -> DecodableResponseSerializer<Value>
    {
        DecodableResponseSerializer(type, makeDecoder: { decoder })
    }
}
