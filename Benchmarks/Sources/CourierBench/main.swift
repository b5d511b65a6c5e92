import Foundation

// courier-bench WORKLOAD IMPL [--key value]...: runs one measured workload and prints one JSON
// line; `courier-bench serve test --port-file PATH` runs the loopback test server until killed.
let standardError = FileHandle.standardError
do {
    let options = try Options(arguments: Array(CommandLine.arguments.dropFirst()))
    if options.workload == "list" {
        for (workload, implementations) in Registry.workloads.sorted(by: { $0.key < $1.key }) {
            for implementation in implementations.keys.sorted() { print(workload, implementation) }
        }
        print("serve sink")
        if TestServerHost.isAvailable { print("serve test") }
        print("serve h2")
        exit(0)
    }
    if options.workload == "serve" {
        try await BenchServer.run(options: options)
        exit(0)
    }
    guard let run = Registry.workloads[options.workload]?[options.implementation] else {
        throw BenchError(
            "unknown workload/implementation '\(options.workload) \(options.implementation)'; workloads: \(Registry.names)"
        )
    }
    let measurement = try await run(options)
    print(measurement.json(workload: options.workload, implementation: options.implementation))
    exit(measurement.correct ? 0 : 1)
} catch {
    standardError.write(Data("courier-bench: \(error)\n".utf8))
    exit(1)
}
