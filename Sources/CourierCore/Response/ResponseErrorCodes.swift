/// The codes of the response layer: validating a response and decoding its body.
///
/// Every error with one of these codes carries the response head and the body bytes
/// (``CourierError/response``, ``CourierError/responseData``).
extension CourierError.Code {
    /// The status code is not in the serializer's `acceptableStatusCodes`.
    ///
    /// Thrown by the validating response serializers.
    public static let unacceptableStatusCode = CourierError.Code("unacceptableStatusCode")

    /// The response has a body whose `Content-Type` is not in the serializer's `acceptableContentTypes`.
    ///
    /// Thrown by the validating response serializers, and by ``CompoundResponseSerializer`` when
    /// none of its serializers accepts the response.
    public static let unacceptableContentType = CourierError.Code("unacceptableContentType")

    /// The body is empty, but the serializer needs bytes and the response is not one that has no body.
    ///
    /// Thrown by the validating response serializers.
    public static let emptyResponseBody = CourierError.Code("emptyResponseBody")

    /// The body is not valid JSON (or is a fragment the reading options do not allow).
    ///
    /// Thrown by ``JSONResponseSerializer``, and by ``JSONValue`` for a Foundation object that
    /// JSON cannot hold.
    public static let invalidJSON = CourierError.Code("invalidJSON")

    /// The body is not a valid property list.
    ///
    /// Thrown by ``PropertyListResponseSerializer``, and by ``PropertyListValue`` for a
    /// Foundation object that a property list cannot hold.
    public static let invalidPropertyList = CourierError.Code("invalidPropertyList")

    /// The body is not well-formed XML.
    ///
    /// Thrown by `XMLResponseSerializer` (in `CourierXML`).
    public static let invalidXML = CourierError.Code("invalidXML")

    /// The body could not be decoded into the requested `Decodable` type.
    ///
    /// Thrown by ``DecodableResponseSerializer`` (and so by the typed verbs); the message names
    /// the key path and the decoder's error is the underlying error.
    public static let decodingFailed = CourierError.Code("decodingFailed")

    /// The body is not valid text in the response's (or the configured) character encoding.
    ///
    /// Thrown by ``StringResponseSerializer``.
    public static let stringDecodingFailed = CourierError.Code("stringDecodingFailed")
}
