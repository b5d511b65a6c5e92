import Courier
import Foundation
import Testing

@testable import CourierCore

/// A small deterministic generator (SplitMix64), so a failing seed can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Random parameter trees, and an independent reference flattening written from the rules
/// rather than from Courier's code.
enum RandomTrees {
    static let alphabet: [String] = [
        "a", "Z", "0", " ", "&", "=", "%", "+", "/", "?", "#", "-", "_", "~", ".", "ä", "ß", "€", "😀", "👍🏽", "\u{E000}",
        "\u{FF21}", "é", "\"", "'", "\t", ":", ";", ",", "@",
    ]

    static func string(_ rng: inout SeededGenerator, maxLength: Int = 6) -> String {
        let length = Int.random(in: 0...maxLength, using: &rng)
        return (0..<length).map { _ in alphabet.randomElement(using: &rng) ?? "a" }.joined()
    }

    static func leaf(_ rng: inout SeededGenerator) -> ParameterValue {
        switch Int.random(in: 0..<7, using: &rng) {
        case 0: return .int(Int.random(in: -1_000_000...1_000_000, using: &rng))
        case 1: return .double([0.5, -2.25, 3.0, 1e-7, 123456.75, -0.0].randomElement(using: &rng) ?? 1)
        case 2: return .bool(Bool.random(using: &rng))
        case 3: return .null
        case 4:
            return .data(
                Data((0..<Int.random(in: 0...5, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }))
        default: return .string(string(&rng))
        }
    }

    static func value(_ rng: inout SeededGenerator, depth: Int) -> ParameterValue {
        guard depth < 4, Int.random(in: 0..<3, using: &rng) == 0 else { return leaf(&rng) }
        switch Int.random(in: 0..<3, using: &rng) {
        case 0:
            return .array((0..<Int.random(in: 0...3, using: &rng)).map { _ in value(&rng, depth: depth + 1) })
        case 1:
            var members = Set<ParameterValue>()
            for _ in 0..<Int.random(in: 0...3, using: &rng) { members.insert(.string(string(&rng))) }
            return .set(members)
        default:
            return .dictionary(dictionary(&rng, depth: depth + 1))
        }
    }

    static func dictionary(_ rng: inout SeededGenerator, depth: Int) -> [String: ParameterValue] {
        var result: [String: ParameterValue] = [:]
        for _ in 0..<Int.random(in: 0...4, using: &rng) {
            result[string(&rng, maxLength: 4)] = value(&rng, depth: depth)
        }
        return result
    }

    static func utf16Less(_ a: String, _ b: String) -> Bool { a.utf16.lexicographicallyPrecedes(b.utf16) }

    static func text(_ leaf: ParameterValue) -> String? {
        switch leaf {
        case .string(let s): return s
        case .int(let i): return "\(i)"
        case .bool(let b): return b ? "1" : "0"
        case .double(let d):
            if d == d.rounded(), abs(d) < 1e15 { return d == 0 && d.sign == .minus ? "-0" : "\(Int(d))" }
            return "\(d)"
        case .data(let data): return data.base64EncodedString()
        default: return nil
        }
    }

    /// (path components, value text or nil for null), in AFNetworking's order.
    static func flatten(_ value: ParameterValue, path: [String], into result: inout [([String], String?)]) {
        switch value {
        case .dictionary(let dictionary):
            for key in dictionary.keys.sorted(by: utf16Less) {
                if let nested = dictionary[key] { flatten(nested, path: path + [key], into: &result) }
            }
        case .array(let values):
            for element in values { flatten(element, path: path + [""], into: &result) }
        case .set(let members):
            let sorted = members.sorted { utf16Less(text($0) ?? "", text($1) ?? "") }
            for member in sorted { flatten(member, path: path, into: &result) }
        default:
            result.append((path, text(value)))
        }
    }

    /// Splits an encoded query back into (path components, value or nil), decoding with Foundation.
    static func decode(_ query: String) -> [([String], String?)]? {
        // An empty query is either no pairs or one null under the empty key: the format cannot tell.
        guard !query.isEmpty else { return nil }
        var result: [([String], String?)] = []
        for component in query.split(separator: "&", omittingEmptySubsequences: false) {
            let parts = component.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let key = String(parts[0]).removingPercentEncoding else { return nil }
            let value = parts.count > 1 ? String(parts[1]).removingPercentEncoding : nil
            if parts.count > 1 && value == nil { return nil }
            // "a[b][]" -> ["a", "b", ""]; keys in these trees hold no brackets.
            var path: [String] = []
            var rest = Substring(key)
            if let open = rest.firstIndex(of: "[") {
                path.append(String(rest[..<open]))
                rest = rest[open...]
                while rest.first == "[", let close = rest.firstIndex(of: "]") {
                    path.append(String(rest[rest.index(after: rest.startIndex)..<close]))
                    rest = rest[rest.index(after: close)...]
                }
                if !rest.isEmpty { return nil }
            } else {
                path.append(key)
            }
            result.append((path, value))
        }
        return result
    }
}

@Suite struct QueryStringRoundTripTests {
    @Test(arguments: 0..<8)
    func randomTreesDecodeToTheSameFlattenedPairs(batch: Int) throws {
        for round in 0..<60 {
            let seed = UInt64(batch * 1_000 + round)
            var rng = SeededGenerator(seed: seed)
            let parameters = RandomTrees.dictionary(&rng, depth: 0)

            var expected: [([String], String?)] = []
            RandomTrees.flatten(.dictionary(parameters), path: [], into: &expected)

            let encoded = QueryString.encode(parameters)
            if encoded.isEmpty {
                #expect(expected.isEmpty || (expected.count == 1 && expected[0].0 == [""] && expected[0].1 == nil))
                continue
            }
            #expect(encoded.utf8.allSatisfy { $0 < 0x80 && $0 != 0x20 }, "seed \(seed)")
            let decoded = try #require(RandomTrees.decode(encoded), "seed \(seed): \(encoded)")
            #expect(decoded.map(\.0) == expected.map(\.0), "seed \(seed): \(encoded)")
            #expect(decoded.map(\.1) == expected.map(\.1), "seed \(seed): \(encoded)")

            // The pair list, the slow walker and the fast encoder agree.
            let pairs = try QueryString.pairs(parameters)
            #expect(QueryString.encode(pairs: pairs) == encoded, "seed \(seed)")
            #expect(pairs.map { $0.value.formText } == expected.map(\.1), "seed \(seed)")
        }
    }
}
