/// The fast path of ``QueryString/encode(_:)``: a recursive walk that keeps the escaped key
/// prefix in its own buffer, so each key segment is escaped once, not once per leaf below it.
///
/// Allocation-aware: the output and the key prefix are two ``ByteWriter``s, and every
/// dictionary's sort order lives in one shared stack of ``OrdinalOrder/Slot``s, so an encode
/// makes a handful of allocations whatever the number of nested dictionaries.
///
/// Recursion lets values be borrowed rather than copied into explicit stack frames; it stops
/// at ``maximumDepth`` and the caller then falls back to ``ParameterWalker``, which has no
/// depth limit, so no tree can exhaust the thread's stack.
struct QueryStringEncoder: ~Copyable {
    static let maximumDepth = 200

    struct TooDeep: Error {}

    private var output: ByteWriter
    private var key = ByteWriter(capacity: 256)
    private var slots: [OrdinalOrder.Slot] = []
    private var isFirst = true

    init(capacity: Int) {
        output = ByteWriter(capacity: capacity)
        slots.reserveCapacity(64)
    }

    /// Encodes every top-level entry in ordinal key order.
    /// - Throws: ``TooDeep`` when the tree nests deeper than ``maximumDepth``.
    mutating func encode(_ parameters: Parameters) throws(TooDeep) {
        try encodeEntries(of: parameters, depth: 0)
    }

    /// The query written so far.
    func makeString() -> String { output.makeString() }

    /// Writes the entries of `dictionary` in ordinal key order, each under the current key
    /// prefix: bare at the top level (`depth` 0), in escaped brackets below it.
    private mutating func encodeEntries(of dictionary: [String: ParameterValue], depth: Int) throws(TooDeep) {
        let first = slots.count
        OrdinalOrder.appendSorted(dictionary, to: &slots)
        let end = slots.count
        let mark = key.count
        for position in first..<end {
            let index = slots[position].index
            key.truncate(to: mark)
            if depth > 0 { key.appendEscapedOpenBracket() }
            key.appendEscaped(dictionary.keys[index])
            if depth > 0 { key.appendEscapedCloseBracket() }
            do {
                try encode(dictionary.values[index], depth: depth + 1)
            } catch {
                slots.removeLast(slots.count - first)
                throw error
            }
        }
        key.truncate(to: mark)
        slots.removeLast(slots.count - first)
    }

    private mutating func encode(_ value: ParameterValue, depth: Int) throws(TooDeep) {
        switch value {
        case .dictionary(let dictionary):
            guard depth < Self.maximumDepth else { throw TooDeep() }
            try encodeEntries(of: dictionary, depth: depth)
        case .array(let values):
            guard depth < Self.maximumDepth else { throw TooDeep() }
            let mark = key.count
            key.appendEscapedOpenBracket()
            key.appendEscapedCloseBracket()
            // Elements are read through the buffer so each is borrowed, not copied and released.
            try values.withUnsafeBufferPointer { (elements) throws(TooDeep) in
                for position in elements.indices { try encode(elements[position], depth: depth + 1) }
            }
            key.truncate(to: mark)
        case .set(let members):
            guard depth < Self.maximumDepth else { throw TooDeep() }
            for member in ParameterWalker.sortedMembers(members) { try encode(member, depth: depth + 1) }
        default:
            if isFirst { isFirst = false } else { output.append(UInt8(ascii: "&")) }
            output.append(key)
            Self.writeValue(of: value, to: &output)
        }
    }

    /// Writes what follows a pair's escaped key: `=` and the escaped leaf text, or nothing for
    /// null (and for a container, which is never a leaf here).
    static func writeValue(of leaf: ParameterValue, to output: inout ByteWriter) {
        switch leaf {
        case .string(let text):
            output.append(UInt8(ascii: "="))
            output.appendEscaped(text)
        case .int(let number):
            output.append(UInt8(ascii: "="))
            // Digits and `-` are all literal, so no escaping pass.
            output.appendDecimal(number)
        case .bool(let flag):
            output.append(UInt8(ascii: "="))
            output.append(flag ? UInt8(ascii: "1") : UInt8(ascii: "0"))
        case .null, .array, .dictionary, .set:
            break
        case .double, .data:
            output.append(UInt8(ascii: "="))
            output.appendEscaped(leaf.formText ?? "")
        }
    }
}
