import Courier
import Foundation

/// Turns a ``RequestPlan`` into a Courier ``Request``: the one place where the CLI hands its
/// fields to the library's serializers and multipart builder.
struct RequestAssembler {
    /// The `User-Agent` Courier sends unless an item replaces or removes it.
    static let userAgent = "courier/0.1"

    var auth: (user: String, password: String)?
    var timeout: Double?

    /// Builds the request.
    /// - Throws: ``CLIError`` for input the library rejects (its message quotes the input).
    func request(for plan: RequestPlan) throws -> Request {
        do {
            let method = try HTTPMethod(validating: plan.method)
            var request = Request(method: method, url: plan.url)
            try request.setValue(Self.userAgent, forHTTPHeaderField: "User-Agent")
            switch plan.bodyKind {
            case .json:
                try request.setValue("application/json, */*;q=0.5", forHTTPHeaderField: "Accept")
                try request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                let object = try JSONBody.object(from: plan.fields)
                request.body = .data(Array(JSONPrinter(pretty: false, colors: false).string(for: object).utf8))
            case .form:
                try request.setValue("*/*", forHTTPHeaderField: "Accept")
                try request.setValue("application/x-www-form-urlencoded; charset=utf-8", forHTTPHeaderField: "Content-Type")
                let pairs = plan.fields.map { field -> QueryStringPair in
                    if case .text(let text) = field.value { return QueryStringPair(key: field.name, value: .string(text)) }
                    return QueryStringPair(key: field.name, value: .null)
                }
                request.body = .data(Array(QueryString.encode(pairs: pairs).utf8))
            case .multipart:
                try request.setValue("*/*", forHTTPHeaderField: "Accept")
                throw CLIError.failure("multipart bodies need MultipartFormData, which this build does not have yet")
            case .raw:
                try request.setValue("*/*", forHTTPHeaderField: "Accept")
                switch plan.rawBody {
                case .bytes(let data): request.body = .data(data)
                case .file(let path): request.body = try .file(URL(fileURLWithPath: path))
                case nil: break
                }
            case .none:
                try request.setValue("*/*", forHTTPHeaderField: "Accept")
            }
            if let auth {
                let token = Data("\(auth.user):\(auth.password)".utf8).base64EncodedString()
                try request.setValue("Basic \(token)", forHTTPHeaderField: "Authorization")
            }
            // An item replaces a default header; a repeated item adds another value, as httpie sends both.
            var seen: Set<String> = []
            for header in plan.headers {
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
            request.timeoutInterval = timeout
            return request
        } catch let error as CourierError {
            throw CLIError.usage(error.message)
        }
    }
}
