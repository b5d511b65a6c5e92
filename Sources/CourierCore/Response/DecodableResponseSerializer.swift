import Foundation

/// A type that has a value to stand for "no body", so that 204/205/HEAD responses decode to it.
public protocol EmptyResponse {
    /// The value for a response without a body.
    static func emptyValue() -> Self
}

/// A `Decodable` for responses that have no body.
public struct Empty: Codable, Sendable, Hashable, EmptyResponse {
    /// The one value.
    public static let value = Empty()
    public static func emptyValue() -> Empty { value }
}

extension Optional: EmptyResponse {
    /// `nil`: a missing body decodes to no value.
    public static func emptyValue() -> Wrapped? { nil }
}

/// Validates a response and decodes its JSON body into `Value` with a configurable `JSONDecoder`
/// (Alamofire's DecodableResponseSerializer).
///
/// Accepts the JSON content types by default. A 204/205/HEAD response decodes to
/// `Value.emptyValue()` when `Value` is ``EmptyResponse`` (``Empty``, any `Optional`), and is an
/// `emptyResponseBody` error otherwise; so is an empty body on any other response.
public struct DecodableResponseSerializer<Value: Decodable & Sendable>: ValidatingResponseSerializer {
    public var acceptableStatusCodes: Set<Int>?
    public var acceptableContentTypes: Set<String>?
    public var emptyResponseCodes = ResponseSerializerDefaults.emptyResponseCodes
    public var emptyRequestMethods = ResponseSerializerDefaults.emptyRequestMethods
    /// Builds the decoder for each response, so a caller's configuration (date and key
    /// strategies) is applied without sharing a mutable decoder across tasks.
    public var makeDecoder: @Sendable () -> JSONDecoder

    /// Makes a serializer for `type`; `makeDecoder` returns a configured decoder.
    public init(
        _ type: Value.Type = Value.self,
        makeDecoder: @escaping @Sendable () -> JSONDecoder = { JSONDecoder() },
        acceptableStatusCodes: Set<Int>? = ResponseSerializerDefaults.acceptableStatusCodes,
        acceptableContentTypes: Set<String>? = JSONResponseSerializer.defaultContentTypes
    ) {
        self.makeDecoder = makeDecoder
        self.acceptableStatusCodes = acceptableStatusCodes
        self.acceptableContentTypes = acceptableContentTypes
    }

    /// Validates and decodes the body.
    /// - Throws: ``CourierError`` `unacceptableStatusCode`, `unacceptableContentType`,
    ///   `emptyResponseBody`, or `decodingFailed` (the `DecodingError` as `underlyingError`,
    ///   its coding path as `offendingInput`).
    public func serialize(request: Request, response: ResponseHead, data: Data) throws -> Value {
        try validate(request: request, response: response, data: data)
        if data.isEmpty {
            if isEmptyResponse(request: request, response: response), let empty = Value.self as? any EmptyResponse.Type,
                let value = empty.emptyValue() as? Value
            {
                return value
            }
            throw emptyBodyError(request: request, response: response, data: data, expecting: "\(Value.self)")
        }
        do {
            return try makeDecoder().decode(Value.self, from: data)
        } catch {
            let path = (error as? DecodingError).map(Self.codingPath(of:))
            throw CourierError.response(
                .decodingFailed,
                "The body of \(response.statusCode) from \(response.url.absoluteString) could not be decoded as \(Value.self)"
                    + (path.map { $0.isEmpty ? "" : " at \"\($0)\"" } ?? ""),
                offendingInput: path,
                underlyingError: error, response: response, data: data
            )
        }
    }

    private static func codingPath(of error: DecodingError) -> String {
        let context: DecodingError.Context? =
            switch error {
            case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
                context
            case .keyNotFound(let key, let context):
                DecodingError.Context(
                    codingPath: context.codingPath + [key], debugDescription: context.debugDescription)
            @unknown default:
                nil
            }
        return (context?.codingPath ?? []).map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
    }
}
