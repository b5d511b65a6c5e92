import Foundation

/// Turns parameters into a request: AFNetworking's `AFURLRequestSerialization`.
///
/// A serializer is a value; configure a copy and use it from any task.
public protocol RequestSerializer: Sendable {
    /// Returns `request` with the serializer's default headers added (never replacing those
    /// already on it) and `parameters` encoded into its URL or body.
    /// - Throws: ``CourierError`` when a header, the URL or a parameter cannot be written, or
    ///   the error of a custom query-string closure, unchanged.
    func serialize(_ request: Request, parameters: Parameters?) throws -> Request
}

/// A serializer built on an ``HTTPRequestSerializer`` that holds its default headers, the
/// methods whose parameters go in the URL, and the request options; JSON and property-list
/// serializers are such. The shared configuration calls forward to ``httpSerializer``.
public protocol HTTPBasedRequestSerializer: RequestSerializer {
    /// The headers, URI methods, query style and options that this serializer starts from.
    var httpSerializer: HTTPRequestSerializer { get set }
}

extension HTTPBasedRequestSerializer {
    /// Sets a default header; nil removes it. See ``HTTPRequestSerializer/setValue(_:forHTTPHeaderField:)``.
    public mutating func setValue(_ value: String?, forHTTPHeaderField name: String) {
        httpSerializer.setValue(value, forHTTPHeaderField: name)
    }

    /// The default header `name`, matched case-insensitively; nil when unset.
    public func value(forHTTPHeaderField name: String) -> String? {
        httpSerializer.value(forHTTPHeaderField: name)
    }

    /// Sets the default `Authorization` header to HTTP Basic credentials (RFC 7617).
    public mutating func setAuthorizationHeader(username: String, password: String) {
        httpSerializer.setAuthorizationHeader(username: username, password: password)
    }

    /// Removes the default `Authorization` header.
    public mutating func clearAuthorizationHeader() {
        httpSerializer.clearAuthorizationHeader()
    }

    /// A request for `method` and `urlString` with the default headers, and `parameters`
    /// encoded by this serializer.
    /// - Throws: ``CourierError`` `.invalidURL` quoting a string that is not a URL,
    ///   `.invalidHeader` for a default header with CR, LF or NUL, and whatever
    ///   ``RequestSerializer/serialize(_:parameters:)`` throws.
    public func request(method: HTTPMethod, urlString: String, parameters: Parameters? = nil) throws -> Request {
        try serialize(httpSerializer.makeRequest(method: method, urlString: urlString), parameters: parameters)
    }
}
