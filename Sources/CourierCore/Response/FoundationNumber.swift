import Foundation

/// What an `NSNumber` from `JSONSerialization` or `PropertyListSerialization` holds, told by its
/// storage type: on Linux an NSNumber holding 1 also casts to `Bool`, so casting cannot tell.
enum FoundationNumber {
    case bool(Bool)
    case int(Int)
    case double(Double)

    init(_ number: NSNumber) {
        switch String(cString: number.objCType) {
        case "c", "B":
            self = .bool(number.boolValue)
        case "d", "f":
            self = .double(number.doubleValue)
        case "Q", "L", "I", "S", "C":
            // An unsigned value past Int.max keeps its magnitude as a Double instead of wrapping.
            let unsigned = number.uint64Value
            self = unsigned <= UInt64(Int.max) ? .int(Int(unsigned)) : .double(number.doubleValue)
        default:
            self = .int(number.intValue)
        }
    }
}
