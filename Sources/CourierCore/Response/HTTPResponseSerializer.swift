import Foundation

/// Validates status code and content type and returns the body bytes unchanged (AFHTTPResponseSerializer).
///
/// The other serializers follow the same rules; see ``ValidatingResponseSerializer``.
/// Costs nothing beyond the checks: the body is handed on without a copy.
public struct HTTPResponseSerializer: ValidatingResponseSerializer {
    public var acceptableStatusCodes: Set<Int>?
    /// Nil by default: the base serializer accepts any content type, as AFNetworking's does.
    public var acceptableContentTypes: Set<String>?
    public var emptyResponseCodes = ResponseSerializerDefaults.emptyResponseCodes
    public var emptyRequestMethods = ResponseSerializerDefaults.emptyRequestMethods

    /// Makes a serializer that accepts 200–299 and any content type.
    public init(
        acceptableStatusCodes: Set<Int>? = ResponseSerializerDefaults.acceptableStatusCodes,
        acceptableContentTypes: Set<String>? = nil
    ) {
        self.acceptableStatusCodes = acceptableStatusCodes
        self.acceptableContentTypes = acceptableContentTypes
    }

    /// Validates and returns `data` as received.
    /// - Throws: ``CourierError`` `unacceptableStatusCode` or `unacceptableContentType`.
    public func serialize(request: Request, response: ResponseHead, data: Data) throws -> Data {
        try validate(request: request, response: response, data: data)
        return data
    }
}

/// Validates and returns the body bytes, insisting on a body unless the response has none by definition (Alamofire's DataResponseSerializer).
public struct DataResponseSerializer: ValidatingResponseSerializer {
    public var acceptableStatusCodes: Set<Int>?
    public var acceptableContentTypes: Set<String>?
    public var emptyResponseCodes = ResponseSerializerDefaults.emptyResponseCodes
    public var emptyRequestMethods = ResponseSerializerDefaults.emptyRequestMethods
    /// Whether an empty body is acceptable on any response, not only on 204/205 and HEAD. Default false.
    public var allowsEmptyBody: Bool

    /// Makes a serializer that accepts 200–299, any content type, and an empty body only where one is expected.
    public init(
        acceptableStatusCodes: Set<Int>? = ResponseSerializerDefaults.acceptableStatusCodes,
        acceptableContentTypes: Set<String>? = nil,
        allowsEmptyBody: Bool = false
    ) {
        self.acceptableStatusCodes = acceptableStatusCodes
        self.acceptableContentTypes = acceptableContentTypes
        self.allowsEmptyBody = allowsEmptyBody
    }

    /// Validates and returns the body.
    /// - Throws: ``CourierError`` `unacceptableStatusCode`, `unacceptableContentType`, or
    ///   `emptyResponseBody` when a response that should have a body has none.
    public func serialize(request: Request, response: ResponseHead, data: Data) throws -> Data {
        try validate(request: request, response: response, data: data)
        if data.isEmpty && !allowsEmptyBody && !isEmptyResponse(request: request, response: response) {
            throw emptyBodyError(request: request, response: response, data: data, expecting: "data")
        }
        return data
    }
}
