import Foundation

/// What a verb of ``HTTPSessionManager`` sends: parameters for the request serializer, an
/// `Encodable` as JSON or as a form, a multipart form, bytes, a file, or any ``RequestBody``.
///
/// ```swift
/// let created = try await manager.post("users", .json(newUser), as: User.self)
/// let uploaded = try await manager.put("photos/1", .file(photo, contentType: "image/jpeg"))
/// let posted = try await manager.post("upload", .multipart(parameters: ["a": "b"]) { form in
///     try form.append(fileURL: photo, name: "photo")
/// })
/// ```
///
/// ``HTTPSessionManager/request(_:_:_:headers:timeout:)`` writes it into the ``Request``: its body,
/// and its `Content-Type` unless the call's `headers` name one. It is written on the caller's
/// actor before the verb's first suspension, so an `Encodable` that is not `Sendable` (a
/// main-actor model) and a multipart closure that uses the caller's state never cross actors;
/// that is also why the value itself is not `Sendable`.
public enum RequestContent {
    /// Encoded by ``HTTPSessionManager/requestSerializer``: in the query for GET, HEAD and DELETE,
    /// in the body otherwise (a URL-encoded form, or what a JSON or property-list serializer writes).
    case parameters(Parameters)
    /// The value as JSON, `Content-Type: application/json`.
    case json(any Encodable, encoder: JSONEncoder = JSONEncoder())
    /// The value (a struct or a dictionary) as an `application/x-www-form-urlencoded` form.
    case form(any Encodable, encoder: URLEncodedFormEncoder = URLEncodedFormEncoder())
    /// A streamed, replayable `multipart/form-data` body with its exact `Content-Length`, built as
    /// ``HTTPRequestSerializer/multipartFormRequest(method:urlString:parameters:boundary:constructingBody:)``
    /// builds it: the parameters first, one text part each, then what the closure appends. A form
    /// without parts sends no body, as AFNetworking. Not for GET or HEAD.
    case multipart(
        parameters: Parameters? = nil, boundary: MultipartBoundary? = nil, (inout MultipartFormData) throws -> Void)
    /// The bytes as they are, labelled with the content type when one is given.
    case data(Data, contentType: String? = nil)
    /// The file at the URL, streamed from disk, labelled with the content type when one is given.
    case file(URL, contentType: String? = nil)
    /// Any ``RequestBody``: a stream (``RequestBody/stream(length:_:)``), a region of a file, a
    /// buffer; labelled with the content type when one is given.
    case body(RequestBody, contentType: String? = nil)

    /// What the request serializer encodes: the parameters of `.parameters`, nil for the other cases.
    var serializerParameters: Parameters? {
        guard case .parameters(let parameters) = self else { return nil }
        return parameters
    }

    /// Whether the exchange runs as an upload task (a body the caller brings) or a data task (a
    /// body written from values), as ``SessionTask/kind`` reports it to hooks and monitors.
    var taskKind: SessionTask.Kind {
        switch self {
        case .parameters, .json, .form: return .data
        case .multipart, .data, .file, .body: return .upload
        }
    }

    /// The body for every case but `.parameters`, which the request serializer writes (nil).
    /// - Throws: ``CourierError`` `.encodingFailed` for an `EncodingError` (the coding path as
    ///   `offendingInput`), `.invalidFormRoot` for a form that is not keyed, `.invalidFile`,
    ///   `.multipartMethodNotAllowed`, a part's error; an error of the value's own `encode(to:)`
    ///   or of the multipart closure, unchanged.
    func encodedBody(for method: HTTPMethod, path: String) throws -> EncodedBody? {
        switch self {
        case .parameters: return nil
        case .json(let value, let encoder):
            let data = try EncodedBody.encoding(path, as: "JSON") { try encoder.encode(value) }
            return EncodedBody(body: .data(data), contentType: "application/json")
        case .form(let value, let encoder):
            let data = try EncodedBody.encoding(path, as: "a form") { try encoder.encodeData(value) }
            return EncodedBody(body: .data(data), contentType: "application/x-www-form-urlencoded")
        case .multipart(let parameters, let boundary, let build):
            let form = try HTTPRequestSerializer.multipartForm(
                for: method, parameters: parameters, boundary: boundary, constructingBody: build)
            guard form.partCount > 0 else { return EncodedBody(body: .empty, contentType: nil) }
            return EncodedBody(body: .source(form), contentType: form.contentType, contentLength: form.contentLength)
        case .data(let data, let contentType): return EncodedBody(body: .data(data), contentType: contentType)
        case .file(let url, let contentType): return EncodedBody(body: try .file(url), contentType: contentType)
        case .body(let body, let contentType): return EncodedBody(body: body, contentType: contentType)
        }
    }
}

/// A request body already written from a ``RequestContent``, with the media type it is sent as.
struct EncodedBody: Sendable {
    var body: RequestBody
    var contentType: String?
    /// Set only for a multipart form, whose length the form alone decides, over any header of the call's.
    var contentLength: Int64?

    static func encoding(_ path: String, as format: String, _ encode: () throws -> Data) throws -> Data {
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
