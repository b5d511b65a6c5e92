import Foundation

/// A response serializer that checks status codes and content types as AFHTTPResponseSerializer does.
///
/// The rules, in AFNetworking's order:
/// - a `Content-Type` outside ``acceptableContentTypes`` is an error only when the body has
///   bytes (an empty body without a type is fine);
/// - a status code outside ``acceptableStatusCodes`` is an error that wraps the content-type
///   error, if there was one, as its `underlyingError`;
/// - every error carries the response head and the body bytes.
///
/// `nil` for either set turns that check off.
public protocol ValidatingResponseSerializer: ResponseSerializer {
    /// The status codes that count as success; nil accepts all. Default 200–299.
    var acceptableStatusCodes: Set<Int>? { get set }
    /// The lower-case media types (no parameters) the body may have; nil accepts all.
    var acceptableContentTypes: Set<String>? { get set }
    /// Status codes whose responses have no body by definition. Default 204 and 205.
    var emptyResponseCodes: Set<Int> { get set }
    /// Request methods whose responses have no body by definition. Default HEAD.
    var emptyRequestMethods: Set<HTTPMethod> { get set }
}

/// The defaults shared by every built-in serializer.
public enum ResponseSerializerDefaults {
    /// 200–299, as AFHTTPResponseSerializer.
    public static let acceptableStatusCodes: Set<Int> = Set(200..<300)
    /// 204 No Content and 205 Reset Content (RFC 9110 §15.3.5, §15.3.6).
    public static let emptyResponseCodes: Set<Int> = [204, 205]
    /// HEAD (RFC 9110 §9.3.2).
    public static let emptyRequestMethods: Set<HTTPMethod> = [.head]
}

extension ValidatingResponseSerializer {
    /// Applies the status-code and content-type rules described on ``ValidatingResponseSerializer``.
    /// - Throws: ``CourierError`` `unacceptableStatusCode` (wrapping any content-type error) or
    ///   `unacceptableContentType`, with the response and data attached.
    public func validate(request: Request, response: ResponseHead, data: Data) throws {
        var contentTypeError: CourierError?
        if let acceptableContentTypes, !data.isEmpty {
            let mimeType = response.mimeType
            if mimeType.map({ !acceptableContentTypes.contains($0) }) ?? true {
                let shown = mimeType ?? "(none)"
                contentTypeError = .response(
                    .unacceptableContentType,
                    "Request failed: unacceptable content-type \"\(shown)\" from \(response.url.absoluteString); "
                        + "acceptable: \(acceptableContentTypes.sorted().joined(separator: ", "))",
                    offendingInput: mimeType,
                    response: response, data: data
                )
            }
        }
        if let acceptableStatusCodes, !acceptableStatusCodes.contains(response.statusCode) {
            throw CourierError.response(
                .unacceptableStatusCode,
                "Request failed: \(response.statusCode) \(response.status.reasonPhrase) from \(response.url.absoluteString)",
                offendingInput: String(response.statusCode),
                underlyingError: contentTypeError,
                response: response, data: data
            )
        }
        if let contentTypeError { throw contentTypeError }
    }

    /// True when the response has no body by definition: its status is in ``emptyResponseCodes``
    /// or the request method is in ``emptyRequestMethods``.
    public func isEmptyResponse(request: Request, response: ResponseHead) -> Bool {
        emptyResponseCodes.contains(response.statusCode) || emptyRequestMethods.contains(request.method)
    }

    /// The error for a serializer that needs bytes and got none.
    package func emptyBodyError(
        request: Request, response: ResponseHead, data: Data, expecting what: String
    ) -> CourierError {
        .response(
            .emptyResponseBody,
            "Expected \(what) in the body of \(response.statusCode) from \(response.url.absoluteString), but the body is empty",
            response: response, data: data
        )
    }
}
