import Courier
import Foundation
import Testing

@testable import CourierCore

/// Hostile-input properties of query-string encoding: random trees whose keys and values are full
/// of CR, LF, NUL, `&`, `=`, `%`, brackets and every Unicode plane, decoded by an independent
/// percent-decoder written here.
@Suite("Query string properties (hostile input)")
struct QueryStringPropertyTests {
    static let literalBytes = Set(Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/?".utf8))

    @Test func everyPairDecodesBackToItsKeyAndValue() throws {
        let seed = SeededRandom.seed(default: 0xC0FF_EE01)
        var random = SeededRandom(seed: seed)
        for iteration in 0..<300 {
            let parameters = randomTree(&random, depth: 3)
            let encoded = QueryString.encode(parameters)
            let pairs = try QueryString.pairs(parameters)
            let context = "seed \(seed), iteration \(iteration)"

            // Only literal bytes, `%XX` escapes, `&` and `=` may appear.
            #expect(isWellFormedQuery(encoded), "\(context): \(encoded)")
            // The pair list is the same encoding.
            #expect(QueryString.encode(pairs: pairs) == encoded, "\(context)")

            let pieces = encoded.isEmpty ? [] : encoded.split(separator: "&", omittingEmptySubsequences: false)
            try #require(pieces.count == pairs.count, "\(context): \(pieces.count) pieces for \(pairs.count) pairs")
            for (piece, pair) in zip(pieces, pairs) {
                let halves = piece.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                #expect(
                    percentDecoded(halves[0]) == Array(pair.key.utf8), "\(context): key \(pair.key.debugDescription)")
                if let text = pair.value.formText {
                    #expect(halves.count == 2, "\(context)")
                    #expect(halves.count == 2 && percentDecoded(halves[1]) == Array(text.utf8), "\(context)")
                } else {
                    #expect(halves.count == 1, "\(context): null is a bare key")
                }
            }
        }
    }

    @Test func percentEscapingRoundTripsAnyString() {
        let seed = SeededRandom.seed(default: 0xC0FF_EE02)
        var random = SeededRandom(seed: seed)
        for iteration in 0..<2_000 {
            let text = random.hostileString(maxScalars: 64)
            let escaped = QueryString.percentEscaped(text)
            #expect(
                isWellFormedQuery(escaped) && !escaped.contains("&") && !escaped.contains("="),
                "seed \(seed), iteration \(iteration)")
            #expect(percentDecoded(Substring(escaped)) == Array(text.utf8), "seed \(seed), iteration \(iteration)")
        }
    }

    @Test func utf16WithLoneSurrogatesThrowsAndValidUTF16MatchesString() throws {
        let seed = SeededRandom.seed(default: 0xC0FF_EE03)
        var random = SeededRandom(seed: seed)
        for iteration in 0..<2_000 {
            let count = Int.random(in: 0...24, using: &random)
            let units: [UInt16] = (0..<count).map { _ in
                // Surrogates a third of the time, so lone and paired ones are both common.
                Int.random(in: 0..<3, using: &random) == 0
                    ? UInt16.random(in: 0xD800...0xDFFF, using: &random)
                    : UInt16.random(in: 0...0xFFFF, using: &random)
            }
            let context = "seed \(seed), iteration \(iteration), units \(units)"
            if hasLoneSurrogate(units) {
                let error = #expect(throws: CourierError.self, "\(context)") {
                    try QueryString.percentEscaped(utf16: units)
                }
                #expect(error?.code == .unpairedSurrogate, "\(context)")
            } else {
                let text = String(decoding: units, as: UTF16.self)
                #expect(try QueryString.percentEscaped(utf16: units) == QueryString.percentEscaped(text), "\(context)")
            }
        }
    }

    // MARK: - Generators and the independent decoder

    private func randomTree(_ random: inout SeededRandom, depth: Int) -> Parameters {
        var parameters: Parameters = [:]
        for _ in 0..<Int.random(in: 0...5, using: &random) {
            parameters[random.hostileString(maxScalars: 8)] = randomValue(&random, depth: depth)
        }
        return parameters
    }

    private func randomValue(_ random: inout SeededRandom, depth: Int) -> ParameterValue {
        let choice = Int.random(in: 0..<(depth > 0 ? 9 : 6), using: &random)
        switch choice {
        case 0: return .string(random.hostileString(maxScalars: 16))
        case 1: return .int(Int.random(in: Int.min...Int.max, using: &random))
        case 2: return .double(Double.random(in: -1e12...1e12, using: &random))
        case 3: return .bool(Bool.random(using: &random))
        case 4: return .null
        case 5: return .data(Data(random.hostileBytes(count: Int.random(in: 0...12, using: &random))))
        case 6:
            return .array(
                (0..<Int.random(in: 0...3, using: &random)).map { _ in randomValue(&random, depth: depth - 1) })
        case 7: return .dictionary(randomTree(&random, depth: depth - 1))
        default:
            return .set(
                Set(
                    (0..<Int.random(in: 0...3, using: &random)).map { _ in
                        ParameterValue.string(random.hostileString(maxScalars: 6))
                    }))
        }
    }

    private func isWellFormedQuery(_ query: String) -> Bool {
        let bytes = Array(query.utf8)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, isUpperHex(bytes[index + 1]), isUpperHex(bytes[index + 2]) else {
                    return false
                }
                index += 3
            } else if Self.literalBytes.contains(byte) || byte == UInt8(ascii: "&") || byte == UInt8(ascii: "=") {
                index += 1
            } else {
                return false
            }
        }
        return true
    }

    private func isUpperHex(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46)
    }

    /// Decodes `%XX` escapes; `+` stays `+` (the encoder always escapes a literal plus).
    private func percentDecoded(_ text: Substring) -> [UInt8] {
        let bytes = Array(text.utf8)
        var output: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
                let value = UInt8(String(decoding: bytes[(index + 1)...(index + 2)], as: UTF8.self), radix: 16)
            {
                output.append(value)
                index += 3
            } else {
                output.append(bytes[index])
                index += 1
            }
        }
        return output
    }

    private func hasLoneSurrogate(_ units: [UInt16]) -> Bool {
        var index = 0
        while index < units.count {
            let unit = units[index]
            if UTF16.isLeadSurrogate(unit) {
                guard index + 1 < units.count, UTF16.isTrailSurrogate(units[index + 1]) else { return true }
                index += 2
            } else if UTF16.isTrailSurrogate(unit) {
                return true
            } else {
                index += 1
            }
        }
        return false
    }
}
