/// The fast path of ``QueryString/encode(_:)``: a recursive walk that keeps the escaped key
/// prefix in its own buffer, so each key segment is escaped once, not once per leaf below it.
///
/// Recursion lets values be borrowed rather than copied into explicit stack frames; it stops
/// at ``maximumDepth`` and the caller then falls back to ``ParameterWalker``, which has no
/// depth limit, so no tree can exhaust the thread's stack.
struct QueryStringEncoder {
    static let maximumDepth = 200

    struct TooDeep: Error {}

    let output: ByteWriter
    let key = ByteWriter(capacity: 256)
    private var isFirst = true

    init(capacity: Int) { output = ByteWriter(capacity: capacity) }

    /// Encodes every top-level entry in ordinal key order.
    /// - Throws: ``TooDeep`` when the tree nests deeper than ``maximumDepth``.
    mutating func encode(_ parameters: Parameters) throws(TooDeep) {
        for index in OrdinalOrder.sortedIndices(parameters) {
            let entry = parameters[index]
            key.truncate(to: 0)
            key.appendEscaped(entry.key)
            try encode(entry.value, depth: 1)
        }
    }

    private mutating func encode(_ value: ParameterValue, depth: Int) throws(TooDeep) {
        switch value {
        case .dictionary(let dictionary):
            guard depth < Self.maximumDepth else { throw TooDeep() }
            let mark = key.count
            for index in OrdinalOrder.sortedIndices(dictionary) {
                let entry = dictionary[index]
                key.truncate(to: mark)
                key.append("%5B" as StaticString)
                key.appendEscaped(entry.key)
                key.append("%5D" as StaticString)
                try encode(entry.value, depth: depth + 1)
            }
            key.truncate(to: mark)
        case .array(let values):
            guard depth < Self.maximumDepth else { throw TooDeep() }
            let mark = key.count
            key.append("%5B%5D" as StaticString)
            for element in values { try encode(element, depth: depth + 1) }
            key.truncate(to: mark)
        case .set(let members):
            guard depth < Self.maximumDepth else { throw TooDeep() }
            for member in ParameterWalker.sortedMembers(members) { try encode(member, depth: depth + 1) }
        case .string(let text):
            startPair()
            output.append(UInt8(ascii: "="))
            output.appendEscaped(text)
        case .int(let number):
            startPair()
            output.append(UInt8(ascii: "="))
            output.appendDecimal(number)
        case .bool(let flag):
            startPair()
            output.append(UInt8(ascii: "="))
            output.append(flag ? UInt8(ascii: "1") : UInt8(ascii: "0"))
        case .null:
            startPair()
        case .double, .data:
            startPair()
            output.append(UInt8(ascii: "="))
            output.appendEscaped(value.formText ?? "")
        }
    }

    /// Writes the separator and the escaped key of a new pair.
    private mutating func startPair() {
        if isFirst { isFirst = false } else { output.append(UInt8(ascii: "&")) }
        output.append(key)
    }
}
