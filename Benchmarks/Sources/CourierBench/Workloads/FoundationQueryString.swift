import Foundation

/// The peer of the query-string rows: Foundation's `URLComponents.percentEncodedQuery`, the
/// encoder a Swift program on Linux reaches for first.
enum FoundationQueryString {
    static func run(items: [URLQueryItem], options: Options) throws -> Measurement {
        let iterations = try options.int("iterations", default: 200)
        func encodeOnce() -> String {
            var components = URLComponents()
            components.queryItems = items
            return components.percentEncodedQuery ?? ""
        }
        let sample = encodeOnce()
        for _ in 0..<max(1, iterations / 10) { blackHole(encodeOnce()) }
        let (elapsed, totalLength) = measure { () -> Int in
            var total = 0
            for _ in 0..<iterations { total &+= encodeOnce().utf8.count }
            return total
        }
        let pairs = sample.split(separator: "&").count
        return Measurement(
            seconds: elapsed, operations: iterations, bytes: totalLength,
            correct: pairs == items.count && totalLength == sample.utf8.count * iterations,
            detail: "\(pairs) pairs, \(sample.utf8.count) bytes per query")
    }
}
