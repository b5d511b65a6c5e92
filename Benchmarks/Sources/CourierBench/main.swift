import Dispatch
import Foundation

// courier-bench WORKLOAD IMPL [--key value]...: runs one measured workload and prints one JSON
// line; `courier-bench serve test --port-file PATH` runs the loopback test server until killed.
//
// A synchronous entry point that blocks on a semaphore while a Task does the work, rather than
// top-level `await`: an async main parks the main thread in dispatch_main, where Valgrind 3.19
// (callgrind, the instruction counts of BENCHMARKS.md) crashes; blocking it costs nothing else.
let standardError = FileHandle.standardError

func runCommand() async -> Int32 {
    do {
        let options = try Options(arguments: Array(CommandLine.arguments.dropFirst()))
        if options.workload == "list" {
            for (workload, implementations) in Registry.workloads.sorted(by: { $0.key < $1.key }) {
                for implementation in implementations.keys.sorted() { print(workload, implementation) }
            }
            print("serve sink")
            if TestServerHost.isAvailable { print("serve test") }
            print("serve h2")
            return 0
        }
        if options.workload == "serve" {
            try await BenchServer.run(options: options)
            return 0
        }
        guard let run = Registry.workloads[options.workload]?[options.implementation] else {
            throw BenchError(
                "unknown workload/implementation '\(options.workload) \(options.implementation)'; workloads: \(Registry.names)"
            )
        }
        let measurement = try await run(options)
        print(measurement.json(workload: options.workload, implementation: options.implementation))
        return measurement.correct ? 0 : 1
    } catch {
        standardError.write(Data("courier-bench: \(error)\n".utf8))
        return 1
    }
}

let finished = DispatchSemaphore(value: 0)
nonisolated(unsafe) var status: Int32 = 1
// Detached: top-level code is on the main actor, whose queue a blocked main thread never drains.
Task.detached {
    status = await runCommand()
    finished.signal()
}
finished.wait()
exit(status)
