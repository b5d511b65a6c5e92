import Foundation

extension ParameterValue {
    /// The deepest nesting accepted from Foundation values, as deep as `JSONSerialization` reads.
    public static let maximumFoundationDepth = 512

    /// Converts a Foundation value, such as one from `JSONSerialization`, to a parameter tree.
    ///
    /// Accepted: `String`/`NSString`, `NSNumber` and Swift numbers (`CFBoolean` and `Bool` become
    /// ``bool(_:)``, integers that fit `Int` become ``int(_:)``, larger unsigned integers become
    /// their decimal ``string(_:)``, other numbers ``double(_:)``), `NSNull` and `nil`,
    /// `Data`, arrays, dictionaries with `String` keys, and sets.
    /// - Throws: ``CourierError`` `.unsupportedParameterValue` naming the key path (such as
    ///   `user[tags][2]`) and the type of the first value that is none of these, a dictionary
    ///   key that is not a string, or nesting deeper than ``maximumFoundationDepth``;
    ///   `.unpairedSurrogate` for an `NSString` holding a lone UTF-16 surrogate.
    public init(foundation value: Any) throws {
        self = try FoundationConversion.convert(value, path: "", depth: 0)
    }

    /// Converts a Foundation dictionary (`[String: Any]`, `NSDictionary`) to ``Parameters``.
    /// - Throws: as ``init(foundation:)``, and `.unsupportedParameterValue` when `dictionary`
    ///   is not a dictionary with string keys.
    public static func parameters(foundation dictionary: Any) throws -> Parameters {
        guard case .dictionary(let parameters) = try ParameterValue(foundation: dictionary) else {
            throw CourierError(
                .unsupportedParameterValue,
                "parameters must be a dictionary with string keys, not \(type(of: dictionary))",
                offendingInput: String(describing: type(of: dictionary)))
        }
        return parameters
    }
}

enum FoundationConversion {
    /// The class of `NSNumber(value: true)`: `__NSCFBoolean` on Linux and Apple platforms.
    static let booleanNumberType = ObjectIdentifier(type(of: NSNumber(value: true)))

    static func convert(_ value: Any, path: String, depth: Int) throws -> ParameterValue {
        guard depth <= ParameterValue.maximumFoundationDepth else {
            throw unsupported(
                path, "nesting deeper than \(ParameterValue.maximumFoundationDepth) levels")
        }
        // The metatype first: casting the value itself to a protocol can bridge it to an
        // Objective-C class, which for a deeply nested [Any] recurses until the stack runs out.
        if type(of: value) is any OptionalProtocol.Type, let optional = value as? OptionalProtocol {
            guard let wrapped = optional.wrappedAny else { return .null }
            return try convert(wrapped, path: path, depth: depth)
        }
        // Foundation objects first: a bridged cast would turn an NSNumber into any Swift number.
        if type(of: value) is NSNumber.Type, let number = value as? NSNumber { return convertNumber(number) }
        if type(of: value) is NSString.Type, let text = value as? NSString {
            // An NSString may hold a lone surrogate that bridging to String would quietly replace.
            do {
                _ = try QueryString.percentEscaped(nsString: text)
            } catch var error as CourierError {
                error.message += " at key path \"\(path)\""
                error.offendingInput = path
                throw error
            }
            return .string(text as String)
        }
        // Swift collections before any cast to a class (NSNull, NSDictionary, NSSet): such a
        // cast bridges the whole value to Objective-C first, recursively, and a deeply nested
        // array overflows the stack there before the depth check above can refuse it.
        switch value {
        case let array as [Any]:
            var result: [ParameterValue] = []
            result.reserveCapacity(array.count)
            for (index, nested) in array.enumerated() {
                result.append(try convert(nested, path: "\(path)[\(index)]", depth: depth + 1))
            }
            return .array(result)
        case let dictionary as [String: Any]:
            var result: [String: ParameterValue] = [:]
            result.reserveCapacity(dictionary.count)
            for (key, nested) in dictionary {
                result[key] = try convert(nested, path: path.isEmpty ? key : "\(path)[\(key)]", depth: depth + 1)
            }
            return .dictionary(result)
        case let parameter as ParameterValue: return parameter
        case let flag as Bool where type(of: value) == Bool.self: return .bool(flag)
        case let number as any BinaryInteger:
            if let integer = Int(exactly: number) { return .int(integer) }
            return .string(String(describing: number))
        case let number as Double: return .double(number)
        case let number as Float: return .double(Double(number))
        case let text as String: return .string(text)
        case is NSNull: return .null
        case let data as Data: return .data(data)
        case let dictionary as NSDictionary:
            var result: [String: ParameterValue] = [:]
            for (key, nested) in dictionary {
                guard let key = key as? String else {
                    throw unsupported(path, "a dictionary key of type \(type(of: key)) (\(key))")
                }
                result[key] = try convert(nested, path: path.isEmpty ? key : "\(path)[\(key)]", depth: depth + 1)
            }
            return .dictionary(result)
        case let set as NSSet:
            var result = Set<ParameterValue>()
            for nested in set {
                result.insert(try convert(nested, path: "\(path)[]", depth: depth + 1))
            }
            return .set(result)
        case let set as Set<AnyHashable>:
            var result = Set<ParameterValue>()
            for nested in set {
                result.insert(try convert(nested.base, path: "\(path)[]", depth: depth + 1))
            }
            return .set(result)
        default:
            throw unsupported(path, "a value of type \(type(of: value))")
        }
    }

    private static func convertNumber(_ number: NSNumber) -> ParameterValue {
        if ObjectIdentifier(type(of: number)) == booleanNumberType { return .bool(number.boolValue) }
        switch String(cString: number.objCType) {
        case "f", "d": return .double(number.doubleValue)
        case "Q", "L", "I", "S", "C":
            let unsigned = number.uint64Value
            if let integer = Int(exactly: unsigned) { return .int(integer) }
            return .string(String(unsigned))
        default:
            if let integer = Int(exactly: number.int64Value) { return .int(integer) }
            return .double(number.doubleValue)
        }
    }

    private static func unsupported(_ path: String, _ what: String) -> CourierError {
        let shownPath = path.isEmpty ? "(the top level)" : path
        return CourierError(
            .unsupportedParameterValue,
            "cannot use \(what) as a parameter at key path \"\(shownPath)\"",
            offendingInput: path)
    }
}

/// Lets an `Any` that holds an `Optional` be unwrapped without knowing its `Wrapped` type.
private protocol OptionalProtocol {
    var wrappedAny: Any? { get }
}

extension Optional: OptionalProtocol {
    fileprivate var wrappedAny: Any? {
        switch self {
        case .some(let wrapped): return wrapped
        case .none: return nil
        }
    }
}
