import Foundation

/// Query-string encoding of ``Parameters``, byte for byte as AFNetworking's
/// `AFQueryStringFromParameters`.
///
/// The rules, at every level of the tree:
/// - dictionary keys in ordinal (UTF-16 code unit) order; a nested value goes under `key[sub]`;
/// - array elements in order under `key[]`;
/// - set members sorted by their text, each under the same `key` (no brackets);
/// - null writes the escaped key alone, with no `=`;
/// - bools `1`/`0`, integral doubles without `.0`, data as base64 (``ParameterValue/formText``);
/// - empty containers write nothing; pairs are joined with `&`.
///
/// Keys and values are escaped by ``percentEscaped(_:)``.
public enum QueryString {
    /// The query string for `parameters`, for example
    /// `"flag=1&key1=value1&key2%5Bkey%5D%5B%5D=1&key2%5Bkey%5D%5B%5D=value"`.
    ///
    /// Cost: one output buffer reserved up front, one shared stack for every dictionary's key
    /// order (no sorted copies of entries), and a table lookup per escaped byte.
    public static func encode(_ parameters: Parameters) -> String {
        var encoder = QueryStringEncoder(capacity: parameters.count * 128)
        do {
            try encoder.encode(parameters)
            return encoder.makeString()
        } catch {
            // Deeper than the fast encoder recurses: the iterative walk has no depth limit.
            var collector = PairCollector()
            ParameterWalker.walk(parameters, visitor: &collector)
            return encode(pairs: collector.pairs)
        }
    }

    /// The leaves of `parameters` in the order ``encode(_:)`` writes them, with unescaped keys
    /// such as `key2[key][]`; what the multipart form builder turns into parts.
    ///
    /// - Throws: nothing for any tree that ``Parameters`` can hold today; it is declared
    ///   throwing so that callers already handle a leaf kind that may fail to convert.
    public static func pairs(_ parameters: Parameters) throws -> [QueryStringPair] {
        var collector = PairCollector()
        ParameterWalker.walk(parameters, visitor: &collector)
        return collector.pairs
    }

    /// Joins already-flattened pairs as ``encode(_:)`` would: escaped `key=value`, or the bare key for null.
    public static func encode(pairs: [QueryStringPair]) -> String {
        var output = ByteWriter(capacity: pairs.count * 32)
        for (position, pair) in pairs.enumerated() {
            // Not `output.isEmpty`: a null under an empty key writes nothing, yet still takes a `&`.
            if position > 0 { output.append(UInt8(ascii: "&")) }
            output.appendEscaped(pair.key)
            QueryStringEncoder.writeValue(of: pair.value, to: &output)
        }
        return output.makeString()
    }
}

/// One flattened leaf of a parameter tree: AFNetworking's `AFQueryStringPair`.
public struct QueryStringPair: Sendable, Hashable, CustomStringConvertible {
    /// The key before escaping, with the brackets of its path, such as `"key2[key][]"`.
    public let key: String
    /// The leaf value: never an array, dictionary or set.
    public let value: ParameterValue

    /// Makes a pair; `value` should be a leaf (a container is written as a bare key).
    public init(key: String, value: ParameterValue) {
        self.key = key
        self.value = value
    }

    /// The pair as it appears in a query: `escapedKey=escapedValue`, or the escaped key alone for null.
    public var urlEncoded: String {
        var output = ByteWriter(capacity: key.utf8.count * 3 + 16)
        output.appendEscaped(key)
        QueryStringEncoder.writeValue(of: value, to: &output)
        return output.makeString()
    }

    /// The pair as it appears in a query, as ``urlEncoded``.
    public var description: String { urlEncoded }
}

/// Receives the leaves of a tree, in order, from ``ParameterWalker``.
protocol ParameterLeafVisitor {
    /// `key` holds the unescaped UTF-8 key path (`a[b][]`); `value` is a leaf.
    mutating func visit(key: [UInt8], value: ParameterValue)
}

/// Collects ``QueryStringPair``s.
struct PairCollector: ParameterLeafVisitor {
    var pairs: [QueryStringPair] = []

    mutating func visit(key: [UInt8], value: ParameterValue) {
        pairs.append(QueryStringPair(key: String(decoding: key, as: UTF8.self), value: value))
    }
}

/// Walks a parameter tree depth first in AFNetworking's order, without recursion, so that
/// no depth of nesting can exhaust the stack.
enum ParameterWalker {
    private enum Kind { case root, dictionary, array, set }

    /// One container being walked. A dictionary's order is the range of `slots` starting at
    /// `firstSlot`, shared with every other open dictionary, rather than a sorted copy.
    private struct Frame {
        let dictionary: [String: ParameterValue]
        let values: [ParameterValue]
        let firstSlot: Int
        let count: Int
        var next = 0
        let keyLength: Int
        let kind: Kind
    }

    static func walk<Visitor: ParameterLeafVisitor>(_ parameters: Parameters, visitor: inout Visitor) {
        var key: [UInt8] = []
        key.reserveCapacity(64)
        var slots: [OrdinalOrder.Slot] = []
        slots.reserveCapacity(64)
        var stack: [Frame] = []
        stack.reserveCapacity(8)

        func push(_ dictionary: [String: ParameterValue], kind: Kind, keyLength: Int) {
            let firstSlot = slots.count
            OrdinalOrder.appendSorted(dictionary, to: &slots)
            stack.append(
                Frame(
                    dictionary: dictionary, values: [], firstSlot: firstSlot, count: dictionary.count,
                    keyLength: keyLength, kind: kind))
        }

        push(parameters, kind: .root, keyLength: 0)
        while let top = stack.indices.last {
            let index = stack[top].next
            guard index < stack[top].count else {
                if let frame = stack.popLast(), frame.kind == .root || frame.kind == .dictionary {
                    slots.removeLast(slots.count - frame.firstSlot)
                }
                continue
            }
            stack[top].next = index + 1
            key.removeSubrange(stack[top].keyLength...)

            let value: ParameterValue
            switch stack[top].kind {
            case .root, .dictionary:
                let position = slots[stack[top].firstSlot + index].index
                let bracketed = stack[top].kind == .dictionary
                if bracketed { key.append(UInt8(ascii: "[")) }
                key.append(contentsOf: stack[top].dictionary.keys[position].utf8)
                if bracketed { key.append(UInt8(ascii: "]")) }
                value = stack[top].dictionary.values[position]
            case .array:
                key.append(UInt8(ascii: "["))
                key.append(UInt8(ascii: "]"))
                value = stack[top].values[index]
            case .set:
                value = stack[top].values[index]
            }

            switch value {
            case .dictionary(let dictionary):
                if !dictionary.isEmpty { push(dictionary, kind: .dictionary, keyLength: key.count) }
            case .array(let array):
                if !array.isEmpty {
                    stack.append(
                        Frame(
                            dictionary: [:], values: array, firstSlot: 0, count: array.count,
                            keyLength: key.count, kind: .array))
                }
            case .set(let set):
                if !set.isEmpty {
                    stack.append(
                        Frame(
                            dictionary: [:], values: sortedMembers(set), firstSlot: 0, count: set.count,
                            keyLength: key.count, kind: .set))
                }
            default:
                visitor.visit(key: key, value: value)
            }
        }
    }

    /// AFNetworking sorts a set by each member's `description`; a leaf's description is its
    /// query text, `NSNull`'s is `<null>`. Containers in sets (rare) sort by their encoded form.
    static func sortedMembers(_ set: Set<ParameterValue>) -> [ParameterValue] {
        let keyed = set.map { member in (text: sortText(member), rank: kindRank(member), member: member) }
        return keyed.sorted { left, right in
            if left.text != right.text { return OrdinalOrder.precedes(left.text, right.text) }
            return left.rank < right.rank
        }.map(\.member)
    }

    private static func sortText(_ member: ParameterValue) -> String {
        if let text = member.formText { return text }
        if case .null = member { return "<null>" }
        return QueryString.encode(["": member])
    }

    /// Breaks ties between members with equal text (`1`, `true`, `"1"`) so the order is stable.
    private static func kindRank(_ member: ParameterValue) -> Int {
        switch member {
        case .string: return 0
        case .int: return 1
        case .double: return 2
        case .bool: return 3
        case .null: return 4
        case .data: return 5
        case .array: return 6
        case .dictionary: return 7
        case .set: return 8
        }
    }
}
