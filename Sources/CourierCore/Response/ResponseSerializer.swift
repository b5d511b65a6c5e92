import Foundation

/// Validates a response and turns its body into a value (AFNetworking's AFURLResponseSerialization).
///
/// Serializers are values: configure one, hand it to a session manager or a single call.
public protocol ResponseSerializer: Sendable {
    /// What a successful serialization produces.
    associatedtype SerializedObject: Sendable

    /// Checks the status code and content type without decoding the body.
    ///
    /// ``CompoundResponseSerializer`` asks each of its serializers in turn and lets the first
    /// that does not throw decode the body. The default accepts everything.
    /// - Throws: ``CourierError`` (`unacceptableStatusCode`, `unacceptableContentType`) with the
    ///   response head and data attached.
    func validate(request: Request, response: ResponseHead, data: Data) throws

    /// Validates `response` and `data` and decodes the body.
    /// - Throws: ``CourierError`` with the response head and data attached when the status,
    ///   the content type or the body is not acceptable.
    func serialize(request: Request, response: ResponseHead, data: Data) throws -> SerializedObject
}

extension ResponseSerializer {
    /// Accepts every response; serializers that check status codes or content types replace it.
    public func validate(request: Request, response: ResponseHead, data: Data) throws {}
}

/// A completed exchange: the request as finally sent, the response head, the body bytes, and the serialized value.
public struct DataResponse<Value: Sendable>: Sendable {
    /// The request as it was last sent (after redirects and adapters).
    public var request: Request
    /// The final response's head.
    public var response: ResponseHead
    /// The body bytes, as received (after decompression).
    public var data: Data
    /// The serializer's result.
    public var value: Value

    /// Makes a response value.
    public init(request: Request, response: ResponseHead, data: Data, value: Value) {
        self.request = request
        self.response = response
        self.data = data
        self.value = value
    }
}
