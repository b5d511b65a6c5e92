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
    /// `--max-time`: the whole exchange's deadline (`--timeout` is the transport's, per wait).
    var maxTime: Double?

    /// The base serializer: Courier's defaults adjusted to httpie's.
    func httpSerializer(accept: String) -> HTTPRequestSerializer {
        var serializer = HTTPRequestSerializer()
        serializer.methodsEncodingParametersInURI = []
        serializer.setValue(nil, forHTTPHeaderField: "Accept-Language")
        serializer.setValue(Self.userAgent, forHTTPHeaderField: "User-Agent")
        serializer.setValue(accept, forHTTPHeaderField: "Accept")
        if let auth { serializer.setAuthorizationHeader(username: auth.user, password: auth.password) }
        serializer.timeoutInterval = maxTime
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
                // Written from the ordered document, not through the library's JSON serializer:
                // keys keep command-line order and numbers their literal text (an ID past 2^64
                // is not rounded through Double), and the document may be an array, as httpie's.
                let document = try JSONBody.document(from: plan.fields)
                request = try httpSerializer(accept: "application/json, */*;q=0.5")
                    .makeRequest(method: method, urlString: urlString)
                request.body = .data(Data(JSONPrinter(pretty: false, colors: false).string(for: document).utf8))
                try request.setValue("application/json", forHTTPHeaderField: "Content-Type")
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
                // As httpie: JSON by default, a urlencoded form under --form (`echo 'a=1' | courier -f URL`).
                let declaredType =
                    plan.jsonMode
                    ? "application/json" : plan.formMode ? "application/x-www-form-urlencoded; charset=utf-8" : nil
                switch plan.rawBody {
                case .bytes(let data):
                    request.body = .data(data)
                    if let declaredType { try request.setValue(declaredType, forHTTPHeaderField: "Content-Type") }
                case .stdin(let body):
                    request.body = body
                    if let declaredType { try request.setValue(declaredType, forHTTPHeaderField: "Content-Type") }
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
                request = try httpSerializer(accept: plan.explicitJSON ? "application/json, */*;q=0.5" : "*/*")
                    .makeRequest(method: method, urlString: urlString)
                if plan.explicitJSON { try request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
            }
            // Credentials (`-a` or the URL's) are all that can have set Authorization so far, and
            // as in httpie they win over an `Authorization:` item.
            let hasCredentials = request.value(forHTTPHeaderField: "Authorization") != nil
            try applyHeaderItems(
                plan.headers.filter { !hasCredentials || $0.name.lowercased() != "authorization" }, to: &request)
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
