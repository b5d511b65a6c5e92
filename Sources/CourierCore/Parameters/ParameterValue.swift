import Foundation

/// Request parameters: a dictionary of named ``ParameterValue`` trees.
///
/// The typed stand-in for the `NSDictionary` that AFNetworking's serializers take.
public typealias Parameters = [String: ParameterValue]

/// One value in a parameter tree: a leaf (string, integer, double, bool, null, data) or a
/// container (array, dictionary, set).
///
/// Literals build values directly:
/// `let parameters: Parameters = ["q": "swift", "page": 2, "tags": ["a", "b"], "flag": true]`;
/// variables go through `init(_:)`: `["q": .init(query), "page": .init(page)]` (Swift has no
/// implicit conversions, so `["page": page]` with `page: Int` does not compile).
/// How each case appears in a query string is described by ``QueryString/encode(_:)``.
///
/// Not `indirect`: containers already hold their elements on the heap, so leaves sit inline
/// (no box per value to allocate when building a tree, nor to retain and release when reading it).
public enum ParameterValue: Sendable, Hashable {
    /// Text, percent-escaped as UTF-8 when encoded.
    case string(String)
    /// A whole number, written in decimal.
    case int(Int)
    /// A floating-point number, written as `NSNumber` prints it (integral values without `.0`).
    case double(Double)
    /// A bool, written `1` or `0` as AFNetworking's `NSNumber` does.
    case bool(Bool)
    /// `NSNull`: the key is written bare, without `=`.
    case null
    /// Bytes, written as standard base64.
    case data(Data)
    /// Ordered values, each written under `key[]`.
    case array([ParameterValue])
    /// Named values, written under `key[name]` in ordinal order of the names.
    case dictionary([String: ParameterValue])
    /// Unordered values, each written under the same `key` (no brackets), sorted by their text.
    case set(Set<ParameterValue>)

    /// Whether this value is a leaf (neither array, dictionary nor set).
    public var isLeaf: Bool {
        switch self {
        case .array, .dictionary, .set: return false
        default: return true
        }
    }

    /// The leaf's text as it appears in a query before escaping: the string itself, decimal
    /// integers, `1`/`0` for bools, doubles as `NSNumber` prints them (``doubleText(_:)``),
    /// base64 for data; nil for null and for containers.
    public var formText: String? {
        switch self {
        case .string(let text): return text
        case .int(let number): return String(number)
        case .double(let number): return ParameterValue.doubleText(number)
        case .bool(let flag): return flag ? "1" : "0"
        case .data(let data): return data.base64EncodedString()
        case .null, .array, .dictionary, .set: return nil
        }
    }

    /// A double as `NSNumber`'s description prints it: integral values below 2^53 in magnitude
    /// as whole numbers (`3`, not `3.0`; `-0` for negative zero), everything else in Swift's
    /// shortest round-tripping form (`0.1`, `1e+16`, `nan`, `inf`, `-inf`).
    public static func doubleText(_ number: Double) -> String {
        if number.isFinite, number == number.rounded(.towardZero), abs(number) < 9_007_199_254_740_992 {
            if number == 0 { return number.sign == .minus ? "-0" : "0" }
            return String(Int64(number))
        }
        return number.description
    }
}

extension ParameterValue: ExpressibleByStringLiteral {
    /// A ``string(_:)`` value.
    public init(stringLiteral value: String) { self = .string(value) }
}

extension ParameterValue: ExpressibleByIntegerLiteral {
    /// An ``int(_:)`` value.
    public init(integerLiteral value: Int) { self = .int(value) }
}

extension ParameterValue: ExpressibleByFloatLiteral {
    /// A ``double(_:)`` value.
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension ParameterValue: ExpressibleByBooleanLiteral {
    /// A ``bool(_:)`` value.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension ParameterValue: ExpressibleByNilLiteral {
    /// The ``null`` value.
    public init(nilLiteral: ()) { self = .null }
}

extension ParameterValue: ExpressibleByArrayLiteral {
    /// An ``array(_:)`` value.
    public init(arrayLiteral elements: ParameterValue...) { self = .array(elements) }
}

extension ParameterValue: ExpressibleByDictionaryLiteral {
    /// A ``dictionary(_:)`` value; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, ParameterValue)...) {
        self = .dictionary(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
