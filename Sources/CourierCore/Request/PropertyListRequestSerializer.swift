import Foundation
import HTTPTypes

/// Builds requests whose parameters are a property-list body: AFNetworking's
/// `AFPropertyListRequestSerializer`.
///
/// URI methods (GET, HEAD, DELETE) put parameters in the query string; the others get the
/// parameters as an XML (default) or binary property list with
/// `Content-Type: application/x-plist` unless one is set; nil parameters mean no body.
public struct PropertyListRequestSerializer: HTTPBasedRequestSerializer {
    /// The property-list encodings a body can use.
    public enum Format: Sendable {
        /// XML 1.0, as AFNetworking's default.
        case xml
        /// The compact `bplist00` form.
        case binary
    }

    /// Headers, URI methods, query style and options shared with the HTTP serializer.
    public var httpSerializer: HTTPRequestSerializer
    /// The encoding of the body.
    public var format: Format

    /// A serializer with the default headers writing `format`.
    public init(format: Format = .xml, httpSerializer: HTTPRequestSerializer = HTTPRequestSerializer()) {
        self.httpSerializer = httpSerializer
        self.format = format
    }

    /// Adds default headers and writes `parameters` as the property-list body (or query, for URI methods).
    /// - Throws: ``CourierError`` `.unsupportedParameterValue` naming the key path of a null or a
    ///   set, which property lists cannot hold; `.invalidHeader` for a bad default header; the
    ///   custom query closure's error for URI methods.
    public func serialize(_ request: Request, parameters: Parameters?) throws -> Request {
        try httpSerializer.serialize(request, parameters: parameters, bodyContentType: "application/x-plist") {
            parameters in
            try Self.data(for: parameters, format: format)
        }
    }

    /// The property list of `parameters`.
    /// - Throws: ``CourierError`` `.unsupportedParameterValue` as ``serialize(_:parameters:)``.
    public static func data(for parameters: Parameters, format: Format = .xml) throws -> Data {
        let object = try ParameterValue.dictionary(parameters).foundationObject(for: .propertyList)
        do {
            return try PropertyListSerialization.data(
                fromPropertyList: object, format: format == .xml ? .xml : .binary, options: 0)
        } catch {
            throw CourierError(
                .unsupportedParameterValue, "the parameters cannot be written as a property list",
                underlyingError: error)
        }
    }
}
