import Foundation

/// Validates a response and parses its body as JSON into a ``JSONValue`` (AFJSONResponseSerializer).
///
/// Accepts `application/json`, `text/json` and `text/javascript` by default. An empty body, a
/// body of only whitespace (Rails answers `head :ok` with a single space), and 204/205/HEAD
/// responses give `nil` and no error. Parsing holds the whole body and its tree in memory.
public struct JSONResponseSerializer: ValidatingResponseSerializer {
    /// The JSON media types AFNetworking accepts.
    public static let defaultContentTypes: Set<String> = ["application/json", "text/json", "text/javascript"]

    public var acceptableStatusCodes: Set<Int>?
    public var acceptableContentTypes: Set<String>?
    public var emptyResponseCodes = ResponseSerializerDefaults.emptyResponseCodes
    public var emptyRequestMethods = ResponseSerializerDefaults.emptyRequestMethods
    /// Options for `JSONSerialization`; add `.fragmentsAllowed` to accept a bare string or number.
    public var readingOptions: JSONSerialization.ReadingOptions
    /// Whether to drop object members whose value is `null`, at every depth. Default false.
    public var removesKeysWithNullValues: Bool

    /// Makes a JSON serializer with AFNetworking's defaults.
    public init(
        readingOptions: JSONSerialization.ReadingOptions = [],
        removesKeysWithNullValues: Bool = false,
        acceptableStatusCodes: Set<Int>? = ResponseSerializerDefaults.acceptableStatusCodes,
        acceptableContentTypes: Set<String>? = JSONResponseSerializer.defaultContentTypes
    ) {
        self.readingOptions = readingOptions
        self.removesKeysWithNullValues = removesKeysWithNullValues
        self.acceptableStatusCodes = acceptableStatusCodes
        self.acceptableContentTypes = acceptableContentTypes
    }

    /// Validates and parses the body; nil for an empty or whitespace-only body.
    /// - Throws: ``CourierError`` `unacceptableStatusCode`, `unacceptableContentType`, or
    ///   `invalidJSON` (with the parser's error as `underlyingError`).
    public func serialize(request: Request, response: ResponseHead, data: Data) throws -> JSONValue? {
        try validate(request: request, response: response, data: data)
        if isEmptyResponse(request: request, response: response) || data.allSatisfy(Self.isJSONWhitespace) {
            return nil
        }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data, options: readingOptions)
        } catch {
            throw CourierError.response(
                .invalidJSON,
                "The body of \(response.statusCode) from \(response.url.absoluteString) is not valid JSON",
                underlyingError: error, response: response, data: data
            )
        }
        do {
            let value = try JSONValue(foundationObject: object)
            return removesKeysWithNullValues ? value.removingNullValues() : value
        } catch let error as CourierError {
            throw CourierError.response(
                error.code, error.message, offendingInput: error.offendingInput, response: response, data: data
            )
        }
    }

    /// Space, tab, LF and CR: the only whitespace JSON allows (RFC 8259 §2).
    private static func isJSONWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
