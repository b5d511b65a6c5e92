import Courier
import Foundation
import HTTPTypes

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An `HTTPURLResponse` as Courier's ``Courier/ResponseHead``.
///
/// `allHeaderFields` is a dictionary: the order of fields is lost, and repeated fields arrive
/// joined with ", ". Every field but `Set-Cookie` means the same joined (RFC 9110 §5.3). A
/// joined `Set-Cookie` is split again where a comma is followed by a new `name=` (an `Expires`
/// date's comma is followed by a day number, never by `name=`).
enum URLSessionResponseHead {
    static func make(from response: HTTPURLResponse, url: URL) -> ResponseHead {
        var fields = HTTPFields()
        let pairs = response.allHeaderFields.compactMap { key, value -> (String, String)? in
            guard let name = key as? String else { return nil }
            return (name, value as? String ?? "\(value)")
        }
        for (name, value) in pairs.sorted(by: { $0.0.lowercased() < $1.0.lowercased() }) {
            guard let fieldName = HTTPField.Name(name) else { continue }
            let values = fieldName == .setCookie ? splitSetCookie(value) : [value]
            for value in values { fields.append(HTTPField(name: fieldName, value: value)) }
        }
        return ResponseHead(status: status(code: response.statusCode), headerFields: fields, url: url)
    }

    /// The status with its standard reason phrase: URLSession does not pass on the one sent, and
    /// an empty phrase printed (`HTTP/1.1 200 `) reads as a fault.
    static func status(code: Int) -> HTTPResponse.Status {
        // A status line has three digits, so URLSession's code is within 0...999, where
        // HTTPResponse.Status accepts it; clamped all the same, since the server chose it.
        standardStatuses[code] ?? HTTPResponse.Status(code: min(max(code, 0), 999))
    }

    /// swift-http-types' named statuses, by code.
    private static let standardStatuses: [Int: HTTPResponse.Status] = {
        let named: [HTTPResponse.Status] = [
            .continue, .switchingProtocols, .earlyHints, .ok, .created, .accepted, .nonAuthoritativeInformation,
            .noContent, .resetContent, .partialContent, .multipleChoices, .movedPermanently, .found, .seeOther,
            .notModified, .temporaryRedirect, .permanentRedirect, .badRequest, .unauthorized, .forbidden, .notFound,
            .methodNotAllowed, .notAcceptable, .proxyAuthenticationRequired, .requestTimeout, .conflict, .gone,
            .lengthRequired, .preconditionFailed, .contentTooLarge, .uriTooLong, .unsupportedMediaType,
            .rangeNotSatisfiable, .expectationFailed, .misdirectedRequest, .unprocessableContent, .tooEarly,
            .upgradeRequired, .preconditionRequired, .tooManyRequests, .requestHeaderFieldsTooLarge,
            .unavailableForLegalReasons, .internalServerError, .notImplemented, .badGateway, .serviceUnavailable,
            .gatewayTimeout, .httpVersionNotSupported, .networkAuthenticationRequired,
        ]
        return Dictionary(uniqueKeysWithValues: named.map { ($0.code, $0) })
    }()

    /// The cookies of a `Set-Cookie` value that URLSession joined with commas.
    static func splitSetCookie(_ value: String) -> [String] {
        var cookies: [String] = []
        var current = Substring()
        var rest = Substring(value)
        while let comma = rest.firstIndex(of: ",") {
            let after = rest[rest.index(after: comma)...]
            if startsNewCookie(after) {
                current += rest[..<comma]
                cookies.append(current.trimmingCharacters(in: .whitespaces))
                current = ""
                rest = after
            } else {
                current += rest[...comma]
                rest = after
            }
        }
        current += rest
        let last = current.trimmingCharacters(in: .whitespaces)
        if !last.isEmpty { cookies.append(last) }
        return cookies
    }

    /// Whether `text` begins, after blanks, with a cookie name (a token) and `=`.
    private static func startsNewCookie(_ text: Substring) -> Bool {
        let trimmed = text.drop(while: { $0 == " " || $0 == "\t" })
        guard let equals = trimmed.firstIndex(of: "=") else { return false }
        let name = trimmed[..<equals]
        guard !name.isEmpty else { return false }
        let separators: Set<Character> = [
            "(", ")", "<", ">", "@", ",", ";", ":", "\\", "\"", "/", "[", "]", "?", "{", "}", " ", "\t",
        ]
        return name.allSatisfy { !separators.contains($0) && $0.isASCII }
    }
}
