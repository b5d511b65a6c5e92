import Foundation
import HTTPTypes

/// Builds requests whose parameters are a JSON body: AFNetworking's `AFJSONRequestSerializer`.
///
/// Methods in ``HTTPRequestSerializer/methodsEncodingParametersInURI`` (GET, HEAD, DELETE)
/// still put parameters in the query string. For the others the body is the parameters as
/// `JSONSerialization` writes them, with `Content-Type: application/json` unless one is set;
/// nil parameters mean no body and no Content-Type.
public struct JSONRequestSerializer: HTTPBasedRequestSerializer {
    /// How the JSON text is laid out.
    public struct WritingOptions: OptionSet, Sendable {
        /// The option bits.
        public let rawValue: Int
        /// Makes options from their raw bits.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// Object keys in lexicographic order, for reproducible bodies.
        public static let sortedKeys = WritingOptions(rawValue: 1 << 0)
        /// Indented, one value per line.
        public static let prettyPrinted = WritingOptions(rawValue: 1 << 1)
        /// `/` written as is rather than `\/`.
        public static let withoutEscapingSlashes = WritingOptions(rawValue: 1 << 2)
    }

    /// Headers, URI methods, query style and options shared with the HTTP serializer.
    public var httpSerializer: HTTPRequestSerializer
    /// The JSON layout; compact and unsorted by default, as AFNetworking.
    public var writingOptions: WritingOptions

    /// A serializer with the default headers and the given layout.
    public init(writingOptions: WritingOptions = [], httpSerializer: HTTPRequestSerializer = HTTPRequestSerializer()) {
        self.httpSerializer = httpSerializer
        self.writingOptions = writingOptions
    }

    /// Adds default headers and writes `parameters` as the JSON body (or query, for URI methods).
    /// - Throws: ``CourierError`` `.unsupportedParameterValue` naming the key path of NaN,
    ///   infinity, data or a set, which JSON cannot hold; `.invalidHeader` for a bad default
    ///   header; the custom query closure's error for URI methods.
    public func serialize(_ request: Request, parameters: Parameters?) throws -> Request {
        try httpSerializer.serialize(request, parameters: parameters, bodyContentType: "application/json") {
            parameters in
            try Self.data(for: parameters, options: writingOptions)
        }
    }

    /// The JSON text of `parameters`.
    /// - Throws: ``CourierError`` `.unsupportedParameterValue` as ``serialize(_:parameters:)``.
    public static func data(for parameters: Parameters, options: WritingOptions = []) throws -> Data {
        let object = try ParameterValue.dictionary(parameters).foundationObject(for: .json)
        var foundationOptions: JSONSerialization.WritingOptions = []
        if options.contains(.sortedKeys) { foundationOptions.insert(.sortedKeys) }
        if options.contains(.prettyPrinted) { foundationOptions.insert(.prettyPrinted) }
        if options.contains(.withoutEscapingSlashes) { foundationOptions.insert(.withoutEscapingSlashes) }
        do {
            return try JSONSerialization.data(withJSONObject: object, options: foundationOptions)
        } catch {
            throw CourierError(
                .unsupportedParameterValue, "the parameters cannot be written as JSON", underlyingError: error)
        }
    }
}
