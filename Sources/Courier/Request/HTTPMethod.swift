/// An HTTP request method: one of the standard ones, or any other RFC 9110 token.
///
/// Methods are case-sensitive (RFC 9110 §9.1); the standard ones are upper case.
public struct HTTPMethod: Hashable, Sendable, CustomStringConvertible {
    /// The method token as sent on the request line, such as `"GET"`.
    public let rawValue: String

    /// Validates `rawValue` as an RFC 9110 `token` (§5.6.2); nil when it is empty or has any other character.
    public init?(_ rawValue: String) {
        guard HTTPMethod.isToken(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    /// Validates `rawValue` as an RFC 9110 token.
    /// - Throws: ``CourierError`` with code ``CourierError/Code/invalidMethod`` that quotes the input.
    public init(validating rawValue: String) throws {
        guard let method = HTTPMethod(rawValue) else {
            throw CourierError(
                .invalidMethod, "\"\(rawValue)\" is not a valid HTTP method token (RFC 9110 §9.1)",
                offendingInput: rawValue)
        }
        self = method
    }

    /// Trusts `rawValue`; for the constants below only.
    init(unchecked rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    public static let get = HTTPMethod(unchecked: "GET")
    public static let head = HTTPMethod(unchecked: "HEAD")
    public static let post = HTTPMethod(unchecked: "POST")
    public static let put = HTTPMethod(unchecked: "PUT")
    public static let patch = HTTPMethod(unchecked: "PATCH")
    public static let delete = HTTPMethod(unchecked: "DELETE")
    public static let options = HTTPMethod(unchecked: "OPTIONS")
    public static let trace = HTTPMethod(unchecked: "TRACE")
    public static let connect = HTTPMethod(unchecked: "CONNECT")

    /// True for methods that RFC 9110 §9.2.2 calls idempotent (retries may resend them).
    public var isIdempotent: Bool {
        switch rawValue {
        case "GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE": return true
        default: return false
        }
    }

    static func isToken(_ text: String) -> Bool {
        guard !text.isEmpty else { return false }
        return text.utf8.allSatisfy(isTokenCharacter)
    }

    /// RFC 9110 `tchar`.
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }
}
