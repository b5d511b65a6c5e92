import Courier
import Foundation

/// Courier's side of the query-string rows: `QueryString.encode` on a `Parameters` tree.
enum CourierQueryString {
    static func nestedParameters() -> Parameters {
        var parameters: Parameters = [:]
        parameters.reserveCapacity(QueryStringShapes.nestedKeyCount)
        for index in 0..<QueryStringShapes.nestedKeyCount {
            parameters[QueryStringShapes.nestedKey(index)] = [
                "name": .string(QueryStringShapes.nestedName(index)),
                "n": .int(index),
                "flag": .bool(index.isMultiple(of: 2)),
                "list": [1, 2, 3],
            ]
        }
        return parameters
    }

    static func flatParameters() -> Parameters {
        var parameters: Parameters = [:]
        parameters.reserveCapacity(QueryStringShapes.flatKeyCount)
        for index in 0..<QueryStringShapes.flatKeyCount {
            parameters["key\(index)"] = .string(QueryStringShapes.nestedName(index))
        }
        return parameters
    }

    static func run(parameters: Parameters, expected: [URLQueryItem], options: Options) throws -> Measurement {
        let iterations = try options.int("iterations", default: 200)
        let sample = QueryString.encode(parameters)
        for _ in 0..<max(1, iterations / 10) { blackHole(QueryString.encode(parameters)) }
        let (elapsed, totalLength) = measure { () -> Int in
            var total = 0
            for _ in 0..<iterations { total &+= QueryString.encode(parameters).utf8.count }
            return total
        }
        let pairs = sample.split(separator: "&").count
        let decodesBack = decodedPairs(sample) == expectedPairs(expected)
        return Measurement(
            seconds: elapsed, operations: iterations, bytes: totalLength,
            correct: decodesBack && totalLength == sample.utf8.count * iterations,
            detail: decodesBack
                ? "\(pairs) pairs, \(sample.utf8.count) bytes per query, decodes back to the input pairs"
                : "the encoded query does not decode back to the input pairs")
    }
}

extension CourierQueryString {
    /// Percent-decodes an encoded query back into its pairs, sorted, to compare with the pairs
    /// the shape was built from: a fast wrong encoding fails the row.
    static func decodedPairs(_ query: String) -> [String] {
        query.split(separator: "&").map { pair -> String in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = String(parts[0]).removingPercentEncoding ?? "<bad>"
            let value = parts.count > 1 ? (String(parts[1]).removingPercentEncoding ?? "<bad>") : "<none>"
            return key + "\u{0}" + value
        }.sorted()
    }

    static func expectedPairs(_ items: [URLQueryItem]) -> [String] {
        items.map { $0.name + "\u{0}" + ($0.value ?? "<none>") }.sorted()
    }
}
