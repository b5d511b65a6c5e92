import Courier
import Foundation

/// Turns a ``RequestPlan`` into a Courier ``Request``: the one place where the CLI hands its
/// fields to the library's serializers and multipart builder.
///
/// httpie's manners are kept where the serializers allow it: bodies for every method (no
/// parameters moved into a GET's query), form fields in command-line order with repeats, no
/// `Accept-Language`.
struct RequestAssembler {
    /// The `User-Agent` Courier sends unless an item replaces or removes it.
    static let userAgent = "courier/0.1"

    var auth: (user: String, password: String)?
    var timeout: Double?

    /// The base serializer: Courier's defaults adjusted to httpie's.
    func httpSerializer(accept: String) -> HTTPRequestSerializer {
        var serializer = HTTPRequestSerializer()
        serializer.methodsEncodingParametersInURI = []
        serializer.setValue(nil, forHTTPHeaderField: "Accept-Language")
        serializer.setValue(Self.userAgent, forHTTPHeaderField: "User-Agent")
        serializer.setValue(accept, forHTTPHeaderField: "Accept")
        if let auth { serializer.setAuthorizationHeader(username: auth.user, password: auth.password) }
        serializer.timeoutInterval = timeout
        return serializer
    }

    /// Builds the request.
    /// - Throws: ``CLIError`` for input the library rejects (its message quotes the input).
    func request(for plan: RequestPlan) throws -> Request {
        do {
            let method = try HTTPMethod(validating: plan.method)
            let urlString = plan.url.absoluteString
            var request: Request
            switch plan.bodyKind {
            case .json:
                let serializer = JSONRequestSerializer(
                    writingOptions: [.sortedKeys, .withoutEscapingSlashes],
                    httpSerializer: httpSerializer(accept: "application/json, */*;q=0.5"))
                let object = try JSONBody.object(from: plan.fields)
                request = try serializer.request(method: method, urlString: urlString, parameters: object.parameters)
            case .form:
                var serializer = httpSerializer(accept: "*/*")
                // Pairs in command-line order, repeats kept, as httpie sends them; the
                // serializer's custom query hook writes them with Courier's escaping.
                let pairs = plan.fields.map { field -> QueryStringPair in
                    if case .text(let text) = field.value {
                        return QueryStringPair(key: field.name, value: .string(text))
                    }
                    return QueryStringPair(key: field.name, value: .null)
                }
                serializer.setQueryStringSerialization { _, _ in QueryString.encode(pairs: pairs) }
                var base = try serializer.makeRequest(method: method, urlString: urlString)
                try base.setValue(
                    "application/x-www-form-urlencoded; charset=utf-8", forHTTPHeaderField: "Content-Type")
                let parameters = Dictionary(
                    plan.fields.map { ($0.name, ParameterValue.null) }, uniquingKeysWith: { a, _ in a })
                request = try serializer.serialize(base, parameters: parameters)
            case .multipart:
                request = try MultipartAssembler(plan: plan).request(
                    method: method, urlString: urlString, serializer: httpSerializer(accept: "*/*"))
            case .raw:
                // httpie treats a raw body as JSON unless --form or --multipart says otherwise.
                request = try httpSerializer(accept: plan.jsonMode ? "application/json, */*;q=0.5" : "*/*")
                    .makeRequest(method: method, urlString: urlString)
                switch plan.rawBody {
                case .bytes(let data):
                    request.body = .data(data)
                    if plan.jsonMode { try request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
                case .stdin(let body):
                    request.body = body
                    if plan.jsonMode { try request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
                case .file(let path):
                    // `@file` is typed by its extension, from Courier's MIME table.
                    let url = URL(fileURLWithPath: path)
                    request.body = try .file(url)
                    try request.setValue(
                        MIMETypes.type(forPathExtension: url.pathExtension), forHTTPHeaderField: "Content-Type")
                case nil:
                    break
                }
            case .none:
                request = try httpSerializer(accept: "*/*").makeRequest(method: method, urlString: urlString)
            }
            try applyHeaderItems(plan.headers, to: &request)
            return request
        } catch let error as CourierError {
            throw CLIError.usage(error.message)
        }
    }

    /// An item replaces a default header; a repeated item adds another value, as httpie sends
    /// both; `Name:` removes the header.
    private func applyHeaderItems(_ headers: [(name: String, value: String?)], to request: inout Request) throws {
        var seen: Set<String> = []
        for header in headers {
            let key = header.name.lowercased()
            if let value = header.value {
                if seen.contains(key) {
                    try request.addValue(value, forHTTPHeaderField: header.name)
                } else {
                    try request.setValue(value, forHTTPHeaderField: header.name)
                }
                seen.insert(key)
            } else {
                try request.setValue(nil, forHTTPHeaderField: header.name)
                seen.remove(key)
            }
        }
    }
}

extension OrderedJSON {
    /// The top-level object as ``Parameters`` for the JSON serializer.
    var parameters: Parameters {
        guard case .object(let members) = self else { return [:] }
        return Dictionary(members.map { ($0.key, $0.value.parameterValue) }, uniquingKeysWith: { _, last in last })
    }

    /// This value as a ``ParameterValue``; numbers become integers when they are written as one.
    var parameterValue: ParameterValue {
        switch self {
        case .object: return .dictionary(parameters)
        case .array(let elements): return .array(elements.map(\.parameterValue))
        case .string(let text): return .string(text)
        case .number(let text): return Int(text).map(ParameterValue.int) ?? .double(Double(text) ?? 0)
        case .bool(let flag): return .bool(flag)
        case .null: return .null
        }
    }
}
