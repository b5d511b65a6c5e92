import Foundation

/// Which Foundation writer a tree is converted for; each refuses different values.
enum FoundationObjectTarget {
    case json
    case propertyList

    var name: String { self == .json ? "JSON" : "a property list" }
}

extension ParameterValue {
    /// The tree as Foundation objects (`NSNumber`, `NSNull`, `[String: Any]` …) for
    /// `JSONSerialization` or `PropertyListSerialization`, which then write exactly what
    /// AFNetworking's serializers write.
    /// - Throws: ``CourierError`` `.unsupportedParameterValue` naming the key path of the first
    ///   value the target cannot hold: for JSON, NaN, infinity, data and sets; for property
    ///   lists, null and sets.
    func foundationObject(for target: FoundationObjectTarget, path: String = "") throws -> Any {
        func refuse(_ what: String) -> CourierError {
            let shownPath = path.isEmpty ? "(the top level)" : path
            return CourierError(
                .unsupportedParameterValue, "\(target.name) cannot hold \(what) (at key path \"\(shownPath)\")",
                offendingInput: path)
        }
        switch self {
        case .string(let text): return text
        case .int(let number): return NSNumber(value: number)
        case .bool(let flag): return NSNumber(value: flag)
        case .double(let number):
            if target == .json && !number.isFinite { throw refuse("the number \(number)") }
            return NSNumber(value: number)
        case .null:
            if target == .propertyList { throw refuse("null") }
            return NSNull()
        case .data(let data):
            if target == .json { throw refuse("data (\(data.count) bytes)") }
            return data
        case .set:
            throw refuse("a set")
        case .array(let values):
            return try values.enumerated().map { index, value in
                try value.foundationObject(for: target, path: "\(path)[\(index)]")
            }
        case .dictionary(let dictionary):
            var result: [String: Any] = [:]
            result.reserveCapacity(dictionary.count)
            for (key, value) in dictionary {
                result[key] = try value.foundationObject(for: target, path: path.isEmpty ? key : "\(path)[\(key)]")
            }
            return result
        }
    }
}
