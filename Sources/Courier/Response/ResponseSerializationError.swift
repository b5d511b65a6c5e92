import Foundation

extension CourierError.Code {
    /// The status code is not in the serializer's `acceptableStatusCodes`.
    public static let unacceptableStatusCode = CourierError.Code("unacceptableStatusCode")
    /// The response has a body whose `Content-Type` is not in the serializer's `acceptableContentTypes`.
    public static let unacceptableContentType = CourierError.Code("unacceptableContentType")
    /// The body is empty, but the serializer needs bytes and the response is not one that has no body.
    public static let emptyResponseBody = CourierError.Code("emptyResponseBody")
    /// The body is not valid JSON (or is a fragment the reading options do not allow).
    public static let invalidJSON = CourierError.Code("invalidJSON")
    /// The body is not a valid property list.
    public static let invalidPropertyList = CourierError.Code("invalidPropertyList")
    /// The body is not well-formed XML.
    public static let invalidXML = CourierError.Code("invalidXML")
    /// The body could not be decoded into the requested `Decodable` type.
    public static let decodingFailed = CourierError.Code("decodingFailed")
    /// The body is not valid text in the response's (or the configured) character encoding.
    public static let stringDecodingFailed = CourierError.Code("stringDecodingFailed")
}

extension CourierError {
    /// An error about a response, with the response head and the body attached.
    static func response(
        _ code: Code,
        _ message: String,
        offendingInput: String? = nil,
        underlyingError: (any Error & Sendable)? = nil,
        response: ResponseHead,
        data: Data
    ) -> CourierError {
        CourierError(
            code, message, offendingInput: offendingInput, underlyingError: underlyingError,
            response: response, responseData: data
        )
    }
}
