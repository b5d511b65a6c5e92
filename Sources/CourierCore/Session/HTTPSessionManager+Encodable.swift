import Foundation

/// Requests whose body is an `Encodable` value, written as JSON or as a URL-encoded form.
///
/// These take the caller's isolation (`isolation: isolated (any Actor)? = #isolation`, SE-0420;
/// never passed by hand): they start on the caller's actor and encode the body there, before
/// their first suspension, so a body that is not `Sendable` (a main-actor model, say) is never
/// sent across actors. The exchange and the decoding of the response then run off that actor,
/// in a nonisolated step that receives only the encoded bytes.
extension HTTPSessionManager {
    /// `method path` with `body` as JSON, `Content-Type: application/json` unless `headers`
    /// names one, and the response run through `serializer`.
    /// - Throws: ``CourierError`` `.encodingFailed` when `encoder` refuses `body` (a NaN, a
    ///   non-string dictionary key; the `EncodingError` as `underlyingError`, its coding path as
    ///   `offendingInput`); an error thrown by `body`'s own `encode(to:)`, unchanged; otherwise
    ///   as ``send(_:_:parameters:headers:serializer:uploadProgress:downloadProgress:)``.
    public func send<Serializer: ResponseSerializer>(
        _ method: HTTPMethod, _ path: String, json body: some Encodable, headers: [String: String] = [:],
        encoder: JSONEncoder = JSONEncoder(), serializer: Serializer,
        uploadProgress: ProgressHandler? = nil, downloadProgress: ProgressHandler? = nil,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> DataResponse<Serializer.SerializedObject> {
        let encoded = try EncodedBody(json: body, encoder: encoder, path: path)
        return try await send(
            method, path, body: encoded, headers: headers, serializer: serializer,
            uploadProgress: uploadProgress, downloadProgress: downloadProgress)
    }

    /// `method path` with `body` as an `application/x-www-form-urlencoded` form written by
    /// `encoder` (``URLEncodedFormEncoder``; that Content-Type unless `headers` names one), and
    /// the response run through `serializer`.
    /// - Throws: ``CourierError`` `.invalidFormRoot` when `body` is not keyed (a struct or a
    ///   dictionary); `.encodingFailed` for an `EncodingError`; an error of `body`'s own
    ///   `encode(to:)` or of a custom encoding closure, unchanged; otherwise as
    ///   ``send(_:_:parameters:headers:serializer:uploadProgress:downloadProgress:)``.
    public func send<Serializer: ResponseSerializer>(
        _ method: HTTPMethod, _ path: String, form body: some Encodable, headers: [String: String] = [:],
        encoder: URLEncodedFormEncoder = URLEncodedFormEncoder(), serializer: Serializer,
        uploadProgress: ProgressHandler? = nil, downloadProgress: ProgressHandler? = nil,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> DataResponse<Serializer.SerializedObject> {
        let encoded = try EncodedBody(form: body, encoder: encoder, path: path)
        return try await send(
            method, path, body: encoded, headers: headers, serializer: serializer,
            uploadProgress: uploadProgress, downloadProgress: downloadProgress)
    }

    // MARK: Verbs decoded by the manager's response serializer

    /// `POST path` with `body` as JSON; the response decoded by ``responseSerializer``.
    /// - Throws: as ``send(_:_:json:headers:encoder:serializer:uploadProgress:downloadProgress:isolation:)``.
    public func post(
        _ path: String, json body: some Encodable, headers: [String: String] = [:],
        encoder: JSONEncoder = JSONEncoder(), uploadProgress: ProgressHandler? = nil,
        downloadProgress: ProgressHandler? = nil, isolation: isolated (any Actor)? = #isolation
    ) async throws -> DataResponse<any Sendable> {
        try await send(
            .post, path, json: body, headers: headers, encoder: encoder, serializer: configuredSerializer,
            uploadProgress: uploadProgress, downloadProgress: downloadProgress)
    }

    /// `PUT path` with `body` as JSON; the response decoded by ``responseSerializer``.
    /// - Throws: as ``send(_:_:json:headers:encoder:serializer:uploadProgress:downloadProgress:isolation:)``.
    public func put(
        _ path: String, json body: some Encodable, headers: [String: String] = [:],
        encoder: JSONEncoder = JSONEncoder(), uploadProgress: ProgressHandler? = nil,
        downloadProgress: ProgressHandler? = nil, isolation: isolated (any Actor)? = #isolation
    ) async throws -> DataResponse<any Sendable> {
        try await send(
            .put, path, json: body, headers: headers, encoder: encoder, serializer: configuredSerializer,
            uploadProgress: uploadProgress, downloadProgress: downloadProgress)
    }

    /// `PATCH path` with `body` as JSON; the response decoded by ``responseSerializer``.
    /// - Throws: as ``send(_:_:json:headers:encoder:serializer:uploadProgress:downloadProgress:isolation:)``.
    public func patch(
        _ path: String, json body: some Encodable, headers: [String: String] = [:],
        encoder: JSONEncoder = JSONEncoder(), uploadProgress: ProgressHandler? = nil,
        downloadProgress: ProgressHandler? = nil, isolation: isolated (any Actor)? = #isolation
    ) async throws -> DataResponse<any Sendable> {
        try await send(
            .patch, path, json: body, headers: headers, encoder: encoder, serializer: configuredSerializer,
            uploadProgress: uploadProgress, downloadProgress: downloadProgress)
    }

    /// `POST path` with `body` as a URL-encoded form; the response decoded by ``responseSerializer``.
    /// - Throws: as ``send(_:_:form:headers:encoder:serializer:uploadProgress:downloadProgress:isolation:)``.
    public func post(
        _ path: String, form body: some Encodable, headers: [String: String] = [:],
        encoder: URLEncodedFormEncoder = URLEncodedFormEncoder(), uploadProgress: ProgressHandler? = nil,
        downloadProgress: ProgressHandler? = nil, isolation: isolated (any Actor)? = #isolation
    ) async throws -> DataResponse<any Sendable> {
        try await send(
            .post, path, form: body, headers: headers, encoder: encoder, serializer: configuredSerializer,
            uploadProgress: uploadProgress, downloadProgress: downloadProgress)
    }

    /// `PUT path` with `body` as a URL-encoded form; the response decoded by ``responseSerializer``.
    /// - Throws: as ``send(_:_:form:headers:encoder:serializer:uploadProgress:downloadProgress:isolation:)``.
    public func put(
        _ path: String, form body: some Encodable, headers: [String: String] = [:],
        encoder: URLEncodedFormEncoder = URLEncodedFormEncoder(), uploadProgress: ProgressHandler? = nil,
        downloadProgress: ProgressHandler? = nil, isolation: isolated (any Actor)? = #isolation
    ) async throws -> DataResponse<any Sendable> {
        try await send(
            .put, path, form: body, headers: headers, encoder: encoder, serializer: configuredSerializer,
            uploadProgress: uploadProgress, downloadProgress: downloadProgress)
    }

    /// `PATCH path` with `body` as a URL-encoded form; the response decoded by ``responseSerializer``.
    /// - Throws: as ``send(_:_:form:headers:encoder:serializer:uploadProgress:downloadProgress:isolation:)``.
    public func patch(
        _ path: String, form body: some Encodable, headers: [String: String] = [:],
        encoder: URLEncodedFormEncoder = URLEncodedFormEncoder(), uploadProgress: ProgressHandler? = nil,
        downloadProgress: ProgressHandler? = nil, isolation: isolated (any Actor)? = #isolation
    ) async throws -> DataResponse<any Sendable> {
        try await send(
            .patch, path, form: body, headers: headers, encoder: encoder, serializer: configuredSerializer,
            uploadProgress: uploadProgress, downloadProgress: downloadProgress)
    }

    // MARK: Building

    /// The request for an already encoded body: the serializer's defaults and `headers` as for
    /// any verb, then `body` as the replayable body with its Content-Type unless `headers` set one.
    /// - Throws: ``CourierError`` `.invalidURL`, `.invalidHeader`, or the request serializer's error.
    func request(_ method: HTTPMethod, _ path: String, body: EncodedBody, headers: [String: String]) throws -> Request {
        var request = try request(method, path, parameters: nil, headers: headers)
        request.body = .data(body.data)
        if !headers.keys.contains(where: { $0.caseInsensitiveCompare("Content-Type") == .orderedSame }) {
            try request.setValue(body.contentType, forHTTPHeaderField: "Content-Type")
        }
        return request
    }

    /// Nonisolated, unlike its callers: everything from here on, decoding included, runs off the caller's actor.
    func send<Serializer: ResponseSerializer>(
        _ method: HTTPMethod, _ path: String, body: EncodedBody, headers: [String: String], serializer: Serializer,
        uploadProgress: ProgressHandler?, downloadProgress: ProgressHandler?
    ) async throws -> DataResponse<Serializer.SerializedObject> {
        let request = try request(method, path, body: body, headers: headers)
        return try await session.data(
            for: request, serializer: serializer, uploadProgress: uploadProgress, downloadProgress: downloadProgress)
    }
}

/// A request body already written from an `Encodable`, with the media type it is sent as.
struct EncodedBody: Sendable {
    var data: Data
    var contentType: String

    /// `value` as JSON.
    /// - Throws: ``CourierError`` `.encodingFailed` for an `EncodingError`; other errors unchanged.
    init(json value: some Encodable, encoder: JSONEncoder, path: String) throws {
        data = try Self.encoding(path, as: "JSON") { try encoder.encode(value) }
        contentType = "application/json"
    }

    /// `value` as a URL-encoded form, as AFNetworking's form bodies are labelled.
    /// - Throws: as ``URLEncodedFormEncoder/encode(_:)``, an `EncodingError` as `.encodingFailed`.
    init(form value: some Encodable, encoder: URLEncodedFormEncoder, path: String) throws {
        data = try Self.encoding(path, as: "a form") { try encoder.encodeData(value) }
        contentType = "application/x-www-form-urlencoded"
    }

    private static func encoding(_ path: String, as format: String, _ encode: () throws -> Data) throws -> Data {
        do {
            return try encode()
        } catch let error as EncodingError {
            let codingPath: [any CodingKey]
            switch error {
            case .invalidValue(_, let context): codingPath = context.codingPath
            @unknown default: codingPath = []
            }
            let keyPath = codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
            throw CourierError(
                .encodingFailed,
                "the body for \"\(path)\" could not be written as \(format)"
                    + (keyPath.isEmpty ? "" : " at \"\(keyPath)\""),
                offendingInput: keyPath.isEmpty ? nil : keyPath, underlyingError: error)
        }
    }
}
