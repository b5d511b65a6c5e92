import Foundation

/// A property list as a Sendable value: what ``PropertyListResponseSerializer`` produces.
public enum PropertyListValue: Sendable, Hashable {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    case date(Date)
    case data(Data)
    case array([PropertyListValue])
    case dictionary([String: PropertyListValue])

    /// The entry `key` of a dictionary; nil for a missing key or when this is not a dictionary.
    public subscript(key: String) -> PropertyListValue? {
        guard case .dictionary(let entries) = self else { return nil }
        return entries[key]
    }

    /// The element at `index` of an array; nil when out of range or when this is not an array.
    public subscript(index: Int) -> PropertyListValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    /// The string, when this is a string.
    public var stringValue: String? { if case .string(let value) = self { value } else { nil } }
    /// The integer, when this is an integer.
    public var intValue: Int? { if case .int(let value) = self { value } else { nil } }
    /// The Boolean, when this is a Boolean.
    public var boolValue: Bool? { if case .bool(let value) = self { value } else { nil } }

    /// The value as Foundation objects, for `PropertyListSerialization.data(fromPropertyList:…)`.
    public var foundationObject: Any {
        switch self {
        case .string(let value): value
        case .int(let value): value
        case .double(let value): value
        case .bool(let value): value
        case .date(let value): value
        case .data(let value): value
        case .array(let elements): elements.map(\.foundationObject)
        case .dictionary(let entries): entries.mapValues(\.foundationObject)
        }
    }

    /// Converts `PropertyListSerialization` output.
    /// - Throws: ``CourierError`` `invalidPropertyList` naming a type a property list cannot hold.
    public init(foundationObject object: Any) throws {
        switch object {
        case let string as String:
            self = .string(string)
        case let date as Date:
            self = .date(date)
        case let data as Data:
            self = .data(data)
        case let number as NSNumber:
            switch FoundationNumber(number) {
            case .bool(let value): self = .bool(value)
            case .int(let value): self = .int(value)
            case .double(let value): self = .double(value)
            }
        case let array as [Any]:
            self = .array(try array.map(PropertyListValue.init(foundationObject:)))
        case let dictionary as [String: Any]:
            self = .dictionary(try dictionary.mapValues(PropertyListValue.init(foundationObject:)))
        default:
            throw CourierError(
                .invalidPropertyList, "A value of type \(type(of: object)) cannot be in a property list",
                offendingInput: String(describing: type(of: object))
            )
        }
    }
}
