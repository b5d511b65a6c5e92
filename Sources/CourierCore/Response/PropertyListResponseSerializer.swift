import Foundation

/// Validates a response and parses its body as a property list (AFPropertyListResponseSerializer).
///
/// Accepts `application/x-plist` by default; XML, binary and OpenStep formats are all read.
/// 204/205/HEAD responses give nil; an empty body on any other response is an error, since
/// an empty document is not a property list.
public struct PropertyListResponseSerializer: ValidatingResponseSerializer {
    public var acceptableStatusCodes: Set<Int>?
    public var acceptableContentTypes: Set<String>?
    public var emptyResponseCodes = ResponseSerializerDefaults.emptyResponseCodes
    public var emptyRequestMethods = ResponseSerializerDefaults.emptyRequestMethods
    /// Options for `PropertyListSerialization`.
    public var readOptions: PropertyListSerialization.ReadOptions

    /// Makes a property-list serializer with AFNetworking's defaults.
    public init(
        readOptions: PropertyListSerialization.ReadOptions = [],
        acceptableStatusCodes: Set<Int>? = ResponseSerializerDefaults.acceptableStatusCodes,
        acceptableContentTypes: Set<String>? = ["application/x-plist"]
    ) {
        self.readOptions = readOptions
        self.acceptableStatusCodes = acceptableStatusCodes
        self.acceptableContentTypes = acceptableContentTypes
    }

    /// Validates and parses the body; nil for 204/205/HEAD.
    /// - Throws: ``CourierError`` `unacceptableStatusCode`, `unacceptableContentType`,
    ///   `emptyResponseBody`, or `invalidPropertyList` (parser error as `underlyingError`).
    public func serialize(request: Request, response: ResponseHead, data: Data) throws -> PropertyListValue? {
        try validate(request: request, response: response, data: data)
        if isEmptyResponse(request: request, response: response) { return nil }
        if data.isEmpty {
            throw emptyBodyError(request: request, response: response, data: data, expecting: "a property list")
        }
        do {
            let object = try PropertyListSerialization.propertyList(from: data, options: readOptions, format: nil)
            return try PropertyListValue(foundationObject: object)
        } catch {
            throw CourierError.response(
                .invalidPropertyList,
                "The body of \(response.statusCode) from \(response.url.absoluteString) is not a valid property list",
                underlyingError: error, response: response, data: data
            )
        }
    }
}
