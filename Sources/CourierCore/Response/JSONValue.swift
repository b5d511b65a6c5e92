import Foundation

/// A JSON document as a Sendable value: what ``JSONResponseSerializer`` produces.
///
/// Integers that fit in `Int` stay exact; other numbers are `Double`. Objects are dictionaries
/// (JSON objects are unordered, RFC 8259 §4).
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The member `key` of an object; nil for a missing key or when this is not an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members[key]
    }

    /// The element at `index` of an array; nil when out of range or when this is not an array.
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    /// The string, when this is a string.
    public var stringValue: String? { if case .string(let value) = self { value } else { nil } }
    /// The Boolean, when this is `true` or `false`.
    public var boolValue: Bool? { if case .bool(let value) = self { value } else { nil } }
    /// The integer, when this is an integer (a `Double` with no fraction is not converted).
    public var intValue: Int? { if case .int(let value) = self { value } else { nil } }
    /// The number as a `Double`, for integers and doubles.
    public var doubleValue: Double? {
        switch self {
        case .int(let value): Double(value)
        case .double(let value): value
        default: nil
        }
    }
    /// The elements, when this is an array.
    public var arrayValue: [JSONValue]? { if case .array(let value) = self { value } else { nil } }
    /// The members, when this is an object.
    public var objectValue: [String: JSONValue]? { if case .object(let value) = self { value } else { nil } }
    /// True for JSON `null`.
    public var isNull: Bool { self == .null }

    /// The value as Foundation objects (`NSNull`, `Bool`, `Int`, `Double`, `String`, `[Any]`,
    /// `[String: Any]`), for APIs that take `JSONSerialization` output.
    public var foundationObject: Any {
        switch self {
        case .null: NSNull()
        case .bool(let value): value
        case .int(let value): value
        case .double(let value): value
        case .string(let value): value
        case .array(let elements): elements.map(\.foundationObject)
        case .object(let members): members.mapValues(\.foundationObject)
        }
    }

    /// Converts `JSONSerialization` output (or any tree of the same Foundation types).
    /// - Throws: ``CourierError`` `invalidJSON` naming the type of a value JSON cannot hold.
    public init(foundationObject object: Any) throws {
        switch object {
        case is NSNull:
            self = .null
        case let number as NSNumber:
            self = JSONValue(number: number)
        case let string as String:
            self = .string(string)
        case let array as [Any]:
            self = .array(try array.map(JSONValue.init(foundationObject:)))
        case let dictionary as [String: Any]:
            self = .object(try dictionary.mapValues(JSONValue.init(foundationObject:)))
        default:
            throw CourierError(
                .invalidJSON, "A value of type \(type(of: object)) cannot be represented as JSON",
                offendingInput: String(describing: type(of: object))
            )
        }
    }

    private init(number: NSNumber) {
        switch FoundationNumber(number) {
        case .bool(let value): self = .bool(value)
        case .int(let value): self = .int(value)
        case .double(let value): self = .double(value)
        }
    }

    /// A copy without object members whose value is `null`, at every depth (AFNetworking's
    /// `removesKeysWithNullValues`); `null` elements of arrays stay.
    public func removingNullValues() -> JSONValue {
        switch self {
        case .array(let elements):
            .array(elements.map { $0.removingNullValues() })
        case .object(let members):
            .object(members.filter { !$0.value.isNull }.mapValues { $0.removingNullValues() })
        default:
            self
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValue: Codable {
    /// Decodes any JSON value; integers that fit in `Int` become ``int(_:)``.
    /// - Throws: `DecodingError` when the value is not JSON.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Encodes the value as the JSON it stands for.
    /// - Throws: `EncodingError` for a non-finite double.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}
