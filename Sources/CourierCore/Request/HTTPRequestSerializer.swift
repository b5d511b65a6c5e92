import Foundation
import HTTPTypes

/// Builds requests whose parameters go in the query string or in an
/// `application/x-www-form-urlencoded` body: AFNetworking's `AFHTTPRequestSerializer`.
///
/// A value type, so copies can be changed from many tasks at once without locks. Default
/// headers are kept as given and validated when a request is built, so that configuring
/// stays non-throwing; a header with CR, LF or NUL makes building fail with `.invalidHeader`.
///
/// ```swift
/// var serializer = HTTPRequestSerializer()
/// serializer.setValue("abc", forHTTPHeaderField: "X-Key")
/// let get = try serializer.request(method: .get, urlString: "http://test.com", parameters: ["q": "swift"])
/// ```
public struct HTTPRequestSerializer: RequestSerializer {
    /// How parameters become a query string.
    public enum QueryStringStyle: Sendable {
        /// ``QueryString/encode(_:)``, AFNetworking's default.
        case `default`
        /// A closure of the caller's; its error reaches the caller of `request`/`serialize` unchanged.
        case custom(@Sendable (Request, Parameters) throws -> String)
    }

    /// The default headers in the order they were set, names as given.
    private var defaultHeaders: [(name: String, value: String)] = []

    /// Methods whose parameters go in the URL, matched case-insensitively; default GET, HEAD, DELETE.
    public var methodsEncodingParametersInURI: Set<String> = ["GET", "HEAD", "DELETE"]
    /// How parameters become a query string; ``QueryStringStyle/default`` unless set.
    public var queryStringStyle: QueryStringStyle = .default
    /// The timeout given to each request; nil leaves the transport's default.
    public var timeoutInterval: TimeInterval?
    /// Whether requests use the session's cookie storage.
    public var httpShouldHandleCookies = true

    /// A serializer with AFNetworking's default headers: `Accept-Language` from the preferred
    /// languages (when the system reports any) and `User-Agent`.
    public init() {
        if let acceptLanguage = DefaultHeaders.acceptLanguage {
            defaultHeaders.append((name: "Accept-Language", value: acceptLanguage))
        }
        defaultHeaders.append((name: "User-Agent", value: DefaultHeaders.userAgent))
    }

    // MARK: Default headers

    /// The default headers, keyed by name as set.
    public var httpRequestHeaders: [String: String] {
        Dictionary(defaultHeaders.map { ($0.name, $0.value) }, uniquingKeysWith: { _, last in last })
    }

    /// Sets the default header `name` to `value`, replacing any value it had (names match
    /// case-insensitively); nil removes it. Validated when a request is built.
    public mutating func setValue(_ value: String?, forHTTPHeaderField name: String) {
        let index = defaultHeaders.firstIndex { Self.namesMatch($0.name, name) }
        switch (index, value) {
        case (let index?, let value?): defaultHeaders[index] = (name: name, value: value)
        case (let index?, nil): defaultHeaders.remove(at: index)
        case (nil, let value?): defaultHeaders.append((name: name, value: value))
        case (nil, nil): break
        }
    }

    /// The default header `name`, matched case-insensitively; nil when unset.
    public func value(forHTTPHeaderField name: String) -> String? {
        defaultHeaders.first { Self.namesMatch($0.name, name) }?.value
    }

    /// Sets the default `Authorization` header to `Basic ` and the base64 of the UTF-8 `username:password`
    /// (RFC 7617).
    public mutating func setAuthorizationHeader(username: String, password: String) {
        let credentials = Data("\(username):\(password)".utf8).base64EncodedString()
        setValue("Basic \(credentials)", forHTTPHeaderField: "Authorization")
    }

    /// Removes the default `Authorization` header.
    public mutating func clearAuthorizationHeader() {
        setValue(nil, forHTTPHeaderField: "Authorization")
    }

    /// Uses `serialize` for query strings; its error reaches the caller unchanged.
    public mutating func setQueryStringSerialization(
        _ serialize: @escaping @Sendable (Request, Parameters) throws -> String
    ) {
        queryStringStyle = .custom(serialize)
    }

    /// Adds each default header that `request` does not already have; headers on the request win.
    /// - Throws: ``CourierError`` `.invalidHeader` for a default header whose name is not a token
    ///   or whose value has CR, LF or NUL.
    public func applyDefaultHeaders(to request: inout Request) throws {
        for header in defaultHeaders {
            let field = try HeaderField.make(name: header.name, value: header.value)
            if request.headerFields[field.name] == nil {
                request.headerFields.append(field)
            }
        }
    }

    /// `request` with the default headers it lacks; see ``applyDefaultHeaders(to:)``.
    /// - Throws: as ``applyDefaultHeaders(to:)``.
    public func applyingDefaultHeaders(to request: Request) throws -> Request {
        var request = request
        try applyDefaultHeaders(to: &request)
        return request
    }

    // MARK: Building requests

    /// A request for `method` and `urlString` with this serializer's options and default headers,
    /// before any parameters: the start of every request it builds, and of multipart requests.
    ///
    /// Credentials in the URL (`http://user:password@host/`) become Basic authorization
    /// (RFC 7617) unless a default `Authorization` header says otherwise, and are taken out of
    /// the URL, so the user-info is never sent and no later message quoting the URL shows the
    /// password (RFC 3986 §3.2.1 deprecates sending it).
    /// - Throws: ``CourierError`` `.invalidURL` quoting `urlString`, password redacted, when it
    ///   is not a URL; `.invalidHeader` as ``applyDefaultHeaders(to:)``.
    public func makeRequest(method: HTTPMethod, urlString: String) throws -> Request {
        guard let parsed = URL(string: urlString) else {
            let shown = HeaderRedaction.redactingURLPasswords(in: urlString)
            throw CourierError(.invalidURL, "\"\(shown)\" is not a valid URL", offendingInput: shown)
        }
        var request = Request(
            method: method, url: parsed, timeoutInterval: timeoutInterval,
            httpShouldHandleCookies: httpShouldHandleCookies)
        try applyDefaultHeaders(to: &request)
        return request.movingURLCredentialsToAuthorization()
    }

    /// `url` without its user-info, and the percent-decoded user and password it held.
    static func splittingCredentials(from url: URL) -> (URL, (user: String, password: String)?) {
        guard url.user != nil || url.password != nil,
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return (url, nil) }
        let credentials = (user: components.user ?? "", password: components.password ?? "")
        components.user = nil
        components.password = nil
        return (components.url ?? url, credentials)
    }

    /// A request for `method` and `urlString`, with `parameters` in the URL for
    /// ``methodsEncodingParametersInURI`` and in a form body otherwise.
    /// - Throws: ``CourierError`` `.invalidURL` quoting a string that is not a URL (or that is
    ///   not one once the query is added), `.invalidHeader` for a bad default header, or the
    ///   custom query closure's error unchanged.
    public func request(method: HTTPMethod, urlString: String, parameters: Parameters? = nil) throws -> Request {
        try serialize(makeRequest(method: method, urlString: urlString), parameters: parameters)
    }

    /// Adds the default headers `request` lacks, then puts `parameters` in its URL (`?` or `&`
    /// when it has a query; nothing for an empty query) for ``methodsEncodingParametersInURI``,
    /// or else in an `application/x-www-form-urlencoded` body (the Content-Type only when none
    /// is set). Nil parameters give such methods an empty body, as AFNetworking does (#2864).
    /// - Throws: as ``request(method:urlString:parameters:)``.
    public func serialize(_ request: Request, parameters: Parameters?) throws -> Request {
        var request = try applyingDefaultHeaders(to: request)
        let query = try parameters.map { try queryString(for: request, parameters: $0) }
        if encodesParametersInURI(request.method) {
            if let query, !query.isEmpty {
                request.url = try Self.url(request.url, appendingQuery: query)
            }
        } else {
            if request.headerFields[.contentType] == nil {
                request.headerFields[.contentType] = "application/x-www-form-urlencoded"
            }
            request.body = .data(Data((query ?? "").utf8))
        }
        return request
    }

    /// Whether `method`'s parameters go in the URL.
    public func encodesParametersInURI(_ method: HTTPMethod) -> Bool {
        let name = method.rawValue.uppercased()
        return methodsEncodingParametersInURI.contains { $0.uppercased() == name }
    }

    /// The query string for `parameters` in this serializer's style.
    /// - Throws: the custom closure's error, unchanged.
    public func queryString(for request: Request, parameters: Parameters) throws -> String {
        switch queryStringStyle {
        case .default: return QueryString.encode(parameters)
        case .custom(let serialize): return try serialize(request, parameters)
        }
    }

    /// `url` with `query` added before any fragment: after `&` when it has a query, else `?`.
    static func url(_ url: URL, appendingQuery query: String) throws -> URL {
        var text = url.absoluteString
        var fragment = Substring()
        if let hash = text.firstIndex(of: "#") {
            fragment = text[hash...]
            text = String(text[..<hash])
        }
        text += url.query != nil ? "&" : "?"
        text += query
        text += fragment
        guard let result = URL(string: text) else {
            throw CourierError(
                .invalidURL,
                "adding the query \"\(query)\" to \(url.absoluteString) gives \"\(text)\", which is not a valid URL",
                offendingInput: text)
        }
        return result
    }

    private static func namesMatch(_ left: String, _ right: String) -> Bool {
        left.utf8.count == right.utf8.count && left.lowercased() == right.lowercased()
    }
}

extension HTTPRequestSerializer {
    /// The path shared by the body serializers (JSON, property list): URI methods get the query
    /// exactly as this serializer writes it; other methods get the default headers, the body
    /// `encode` makes, and `bodyContentType` unless the request already names one. Nil
    /// parameters leave the body empty and set no Content-Type.
    /// - Throws: whatever `encode`, the default headers or the custom query closure throw.
    func serialize(
        _ request: Request, parameters: Parameters?, bodyContentType: String,
        encode: (Parameters) throws -> Data
    ) throws -> Request {
        if encodesParametersInURI(request.method) {
            return try serialize(request, parameters: parameters)
        }
        var request = try applyingDefaultHeaders(to: request)
        guard let parameters else { return request }
        request.body = .data(try encode(parameters))
        if request.headerFields[.contentType] == nil {
            request.headerFields[.contentType] = bodyContentType
        }
        return request
    }
}
