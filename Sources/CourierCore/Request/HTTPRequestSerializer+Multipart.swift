import Foundation
import HTTPTypes

extension HTTPRequestSerializer {
    /// A `multipart/form-data` request (AFNetworking's
    /// `multipartFormRequestWithMethod:URLString:parameters:constructingBodyWithBlock:`).
    ///
    /// `parameters` are flattened with the query-string pair rules (``QueryString/pairs(_:)``,
    /// keys such as `key[sub][]`) into one form-data part each: data as its raw bytes, null as an
    /// empty part, everything else as its ``ParameterValue/formText``. `constructingBody` then
    /// appends more parts. When the form has parts, `Content-Type` (with the boundary) and the
    /// exact `Content-Length` are set and the form is the replayable body; with no parts the
    /// request is returned without a body, as AFNetworking does.
    ///
    /// ```swift
    /// let request = try serializer.multipartFormRequest(method: .post, urlString: "http://x/upload",
    ///                                                    parameters: ["a": "b"]) { form in
    ///     try form.append(fileURL: photo, name: "photo")
    /// }
    /// ```
    /// - Parameters:
    ///   - method: the request method; any but GET and HEAD.
    ///   - urlString: the absolute URL of the request.
    ///   - parameters: form fields, one part per query-string pair, before the parts `constructingBody` adds.
    ///   - boundary: the form's boundary; random (``MultipartBoundary/random()``) when nil.
    ///   - constructingBody: appends the form's other parts.
    /// - Throws: ``CourierError`` `.multipartMethodNotAllowed` for GET and HEAD, which carry no
    ///   body; `.invalidURL`, `.invalidHeader` as ``makeRequest(method:urlString:)``; anything
    ///   `constructingBody` throws, unchanged; an invalid input recorded by a non-throwing append
    ///   (``MultipartFormData/validate()``).
    public func multipartFormRequest(
        method: HTTPMethod, urlString: String, parameters: Parameters? = nil, boundary: MultipartBoundary? = nil,
        constructingBody: (inout MultipartFormData) throws -> Void = { _ in }
    ) throws -> Request {
        var request = try makeRequest(method: method, urlString: urlString)
        let form = try Self.multipartForm(
            for: method, parameters: parameters, boundary: boundary, constructingBody: constructingBody)
        guard form.partCount > 0 else { return request }
        request.headerFields[.contentType] = form.contentType
        request.headerFields[.contentLength] = String(form.contentLength ?? 0)
        request.body = .source(form)
        return request
    }

    /// The form of ``multipartFormRequest(method:urlString:parameters:boundary:constructingBody:)``,
    /// shared with ``HTTPSessionManager``'s `.multipart` content so that both write the same parts.
    /// - Throws: as that method, but for the URL and header errors.
    static func multipartForm(
        for method: HTTPMethod, parameters: Parameters?, boundary: MultipartBoundary?,
        constructingBody: (inout MultipartFormData) throws -> Void
    ) throws -> MultipartFormData {
        let name = method.rawValue.uppercased()
        guard name != "GET", name != "HEAD" else {
            throw CourierError(
                .multipartMethodNotAllowed,
                "a multipart form cannot be sent with \(method.rawValue): GET and HEAD requests carry no body",
                offendingInput: method.rawValue)
        }
        var form = boundary.map { MultipartFormData(boundary: $0) } ?? MultipartFormData()
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
        return form
    }

    /// `request`, whose body is a multipart form, with the form written to a new file at
    /// `fileURL` and that file as its body; `Content-Type` and `Content-Length` are kept
    /// (AFNetworking's `requestWithMultipartFormRequest:writingStreamContentsToFile:`, for
    /// servers such as S3 that refuse a streamed body). A partial file is removed on failure.
    /// - Throws: ``CourierError`` `.notAMultipartBody` when the body is not a ``MultipartFormData``;
    ///   anything ``MultipartFormData/write(to:)`` throws (`.outputFileExists`, `.invalidFile`,
    ///   `.fileWriteFailed`, read errors).
    public func request(multipartFormRequest request: Request, writingStreamContentsTo fileURL: URL) throws -> Request {
        guard case .source(let source) = request.body.storage, let form = source as? MultipartFormData else {
            throw CourierError(
                .notAMultipartBody, "the request to \(request.url.absoluteString) does not have a multipart form body",
                offendingInput: request.url.absoluteString)
        }
        try form.write(to: fileURL)
        var result = request
        result.body = try .file(fileURL)
        result.headerFields[.contentLength] = String(form.contentLength ?? 0)
        return result
    }

    /// ``multipartFormRequest(method:urlString:parameters:boundary:constructingBody:)`` with the
    /// form written to a new file at `fileURL` and that file as the body.
    /// - Throws: as that method and ``request(multipartFormRequest:writingStreamContentsTo:)``.
    public func multipartFormRequest(
        method: HTTPMethod, urlString: String, parameters: Parameters? = nil, boundary: MultipartBoundary? = nil,
        writingBodyTo fileURL: URL, constructingBody: (inout MultipartFormData) throws -> Void = { _ in }
    ) throws -> Request {
        let request = try multipartFormRequest(
            method: method, urlString: urlString, parameters: parameters, boundary: boundary,
            constructingBody: constructingBody)
        guard case .source = request.body.storage else { return request }
        return try self.request(multipartFormRequest: request, writingStreamContentsTo: fileURL)
    }
}
