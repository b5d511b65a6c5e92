import Foundation

/// The command line of one benchmark process: `courier-bench WORKLOAD IMPL [--key value]...`.
/// The driver (bench.py) builds these; people rarely type them.
struct Options: Sendable {
    let workload: String
    let implementation: String
    private let values: [String: String]

    init(arguments: [String]) throws {
        guard arguments.count >= 2 else {
            throw BenchError("usage: courier-bench WORKLOAD IMPL [--key value]...  (workloads: \(Registry.names))")
        }
        workload = arguments[0]
        implementation = arguments[1]
        var values: [String: String] = [:]
        var index = 2
        while index < arguments.count {
            let key = arguments[index]
            guard key.hasPrefix("--"), index + 1 < arguments.count else {
                throw BenchError("expected --key value, got '\(key)'")
            }
            values[String(key.dropFirst(2))] = arguments[index + 1]
            index += 2
        }
        self.values = values
    }

    func string(_ key: String) throws -> String {
        guard let value = values[key] else { throw BenchError("missing --\(key)") }
        return value
    }

    func string(_ key: String, default fallback: String) -> String { values[key] ?? fallback }

    func int(_ key: String, default fallback: Int) throws -> Int {
        guard let text = values[key] else { return fallback }
        guard let value = Int(text) else { throw BenchError("--\(key) wants an integer, got '\(text)'") }
        return value
    }

    func int(_ key: String) throws -> Int {
        let text = try string(key)
        guard let value = Int(text) else { throw BenchError("--\(key) wants an integer, got '\(text)'") }
        return value
    }

    func flag(_ key: String) -> Bool { values[key] == "1" || values[key] == "true" }
}

/// A failure of the harness itself or a failed correctness check: printed, exit status 1.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
