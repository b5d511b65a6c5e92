import Courier
import Foundation
import Testing

@testable import CourierCore

/// A deliberately plain query-string encoder written from AFNetworking's rules, with no
/// buffers, no shared order stack and no prefix words: keys sorted by comparing UTF-16 code
/// units, leaves flattened into (key path, text) pairs, every UTF-8 byte outside the literal
/// set written as `%XX`. The fast encoder must produce exactly its bytes.
enum ReferenceQueryString {
    static let literal = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/?".utf8)

    static func escape(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            if literal.contains(byte) {
                result.append(Character(Unicode.Scalar(byte)))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                result += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return result
    }

    /// (unescaped key path such as `a[b][]`, leaf text or nil for null), in AFNetworking's order.
    static func pairs(_ value: ParameterValue, key: String, top: Bool, into result: inout [(String, String?)]) {
        switch value {
        case .dictionary(let dictionary):
            let keys = dictionary.keys.sorted { $0.utf16.lexicographicallyPrecedes($1.utf16) }
            for name in keys {
                if let nested = dictionary[name] {
                    pairs(nested, key: top ? name : key + "[" + name + "]", top: false, into: &result)
                }
            }
        case .array(let values):
            for element in values { pairs(element, key: key + "[]", top: false, into: &result) }
        case .set(let members):
            let sorted = members.sorted {
                (RandomTrees.text($0) ?? "").utf16.lexicographicallyPrecedes((RandomTrees.text($1) ?? "").utf16)
            }
            for member in sorted { pairs(member, key: key, top: false, into: &result) }
        default:
            result.append((key, RandomTrees.text(value)))
        }
    }

    static func encode(_ parameters: Parameters) -> String {
        var flattened: [(String, String?)] = []
        pairs(.dictionary(parameters), key: "", top: true, into: &flattened)
        return flattened.map { key, text in text.map { escape(key) + "=" + escape($0) } ?? escape(key) }
            .joined(separator: "&")
    }
}

/// Trees shaped to reach every branch of the fast path: dictionaries above and below the
/// insertion-sort size, keys longer than the 16 bytes the sort packs into its prefix words and
/// sharing long prefixes, keys that are prefixes of one another, NUL, and scalars whose UTF-16
/// order differs from their UTF-8 order.
enum WideTrees {
    static let keyAlphabet: [String] = [
        "a", "b", "Z", "0", "\u{0}", " ", "&", "[", "]", "ä", "€", "😀", "\u{E000}", "\u{FF21}", "\u{10FFFF}", "_",
    ]
    static let sharedStems = [
        "", "parameter_name_", "parameter_name_with_a_long_stem_", "a", "\u{FF21}\u{FF21}\u{FF21}\u{FF21}\u{FF21}",
    ]

    static func key(_ rng: inout SeededGenerator) -> String {
        let stem = sharedStems.randomElement(using: &rng) ?? ""
        let length = Int.random(in: 0...5, using: &rng)
        return stem + (0..<length).map { _ in keyAlphabet.randomElement(using: &rng) ?? "a" }.joined()
    }

    static func value(_ rng: inout SeededGenerator, depth: Int) -> ParameterValue {
        guard depth < 4, Int.random(in: 0..<3, using: &rng) == 0 else { return RandomTrees.leaf(&rng) }
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: return .array((0..<Int.random(in: 0...3, using: &rng)).map { _ in value(&rng, depth: depth + 1) })
        case 1:
            var members = Set<ParameterValue>()
            for _ in 0..<Int.random(in: 0...3, using: &rng) { members.insert(.string(RandomTrees.string(&rng))) }
            return .set(members)
        default: return .dictionary(dictionary(&rng, depth: depth + 1))
        }
    }

    static func dictionary(_ rng: inout SeededGenerator, depth: Int) -> [String: ParameterValue] {
        // Mostly small, sometimes past the insertion-sort limit of 16 entries.
        let count =
            Int.random(in: 0..<4, using: &rng) == 0
            ? Int.random(in: 17...60, using: &rng) : Int.random(in: 0...8, using: &rng)
        var result: [String: ParameterValue] = [:]
        for _ in 0..<count { result[key(&rng)] = value(&rng, depth: depth) }
        return result
    }
}

@Suite struct QueryStringReferenceTests {
    @Test(arguments: 0..<6)
    func fastEncoderMatchesTheReferenceByteForByte(batch: Int) throws {
        for round in 0..<40 {
            let seed = UInt64(50_000 + batch * 1_000 + round)
            var rng = SeededGenerator(seed: seed)
            let parameters = WideTrees.dictionary(&rng, depth: 0)
            let expected = ReferenceQueryString.encode(parameters)
            #expect(QueryString.encode(parameters) == expected, "seed \(seed)")

            var flattened: [(String, String?)] = []
            ReferenceQueryString.pairs(.dictionary(parameters), key: "", top: true, into: &flattened)
            let pairs = try QueryString.pairs(parameters)
            #expect(pairs.map(\.key) == flattened.map(\.0), "seed \(seed)")
            #expect(QueryString.encode(pairs: pairs) == expected, "seed \(seed)")
        }
    }

    @Test func existingRandomTreesMatchTheReference() {
        for seed in UInt64(0)..<300 {
            var rng = SeededGenerator(seed: seed)
            let parameters = RandomTrees.dictionary(&rng, depth: 0)
            #expect(QueryString.encode(parameters) == ReferenceQueryString.encode(parameters), "seed \(seed)")
        }
    }

    /// Past the fast encoder's recursion limit the iterative walk takes over; both must agree
    /// with the reference, with dictionaries (and their shared order stack) at many levels.
    @Test func deepTreesWithDictionariesAtEveryLevelMatchTheReference() {
        var value: ParameterValue = ["z": 1, "y": [true, nil], "x": .set(["b", "a"])]
        for level in 0..<260 {
            value =
                level.isMultiple(of: 2)
                ? ["k\(level)": value, "a": .string("s\(level)"), "\u{FF21}": .int(level)]
                : .array([value, .int(level)])
        }
        let parameters: Parameters = ["root": value, "b": "x"]
        #expect(QueryString.encode(parameters) == ReferenceQueryString.encode(parameters))

        let shallow: Parameters = ["root": ["k": value], "0": .null]
        #expect(QueryString.encode(shallow) == ReferenceQueryString.encode(shallow))
    }

    @Test func largeDictionariesWithLongSharedPrefixesSortOrdinally() {
        var parameters = Parameters()
        for index in 0..<500 {
            parameters["a_very_long_parameter_name_\(index)_\u{FF21}"] = .int(index)
            parameters["a_very_long_parameter_name_\(index)_😀"] = .int(-index)
            parameters["key\(index)"] = ["name": .string("value \(index) ä&="), "n": .int(index)]
        }
        #expect(QueryString.encode(parameters) == ReferenceQueryString.encode(parameters))
    }

    @Test func everyASCIIByteIsEscapedExactlyAsTheTableSays() {
        for byte in UInt8(0)...0x7F {
            let text = String(Character(Unicode.Scalar(byte)))
            #expect(QueryString.percentEscaped(text) == ReferenceQueryString.escape(text), "byte \(byte)")
        }
        for text in ["ä", "€", "😀", "👍🏽", "\u{10FFFF}", "a\u{301}"] {
            #expect(QueryString.percentEscaped(text) == ReferenceQueryString.escape(text))
        }
    }
}
