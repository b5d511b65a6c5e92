import Foundation

/// What one benchmark process measured; printed as a single JSON line on stdout.
struct Measurement: Sendable {
    /// Seconds spent in the measured section only (process start-up and set-up excluded).
    var seconds: Double
    /// How many operations (encodes, requests, bodies) the measured section did.
    var operations: Int
    /// Bytes produced, read or transferred by the measured section.
    var bytes: Int
    /// Whether the result was checked and found right.
    var correct: Bool
    /// What was checked, or why the check failed.
    var detail: String
    /// sha256 of the produced body, when the workload was asked for it.
    var sha256: String? = nil
    /// Anything else the driver checks, such as what the upload sink reported.
    var extra: [String: String] = [:]

    func json(workload: String, implementation: String) -> String {
        let peak = PeakMemory.highWaterMarkKiB()
        var object: [String: Any] = [
            "workload": workload, "impl": implementation, "seconds": seconds,
            "ops": operations, "bytes": bytes, "ok": correct, "detail": detail,
            "vmhwm_kib": peak,
        ]
        if let sha256 { object["sha256"] = sha256 }
        if let allocations = lastMeasuredAllocations { object["allocations"] = allocations }
        for (key, value) in extra { object[key] = value }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}

enum PeakMemory {
    /// VmHWM from /proc/self/status: the peak resident set of this process so far, in KiB.
    static func highWaterMarkKiB() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let digits = line.filter(\.isNumber)
            return Int(digits) ?? -1
        }
        return -1
    }
}

/// Heap allocations made by the last measured section (all threads), when counted.
nonisolated(unsafe) var lastMeasuredAllocations: UInt64?

/// Times `body` with the monotonic clock and counts its allocations.
func measure<T>(_ body: () throws -> T) rethrows -> (seconds: Double, value: T) {
    let clock = ContinuousClock()
    let before = AllocationCounter.current()
    let start = clock.now
    let value = try body()
    let elapsed = seconds(clock.now - start)
    if let before, let after = AllocationCounter.current() { lastMeasuredAllocations = after - before }
    return (elapsed, value)
}

/// Times an async `body` with the monotonic clock and counts its allocations.
func measureAsync<T>(_ body: () async throws -> T) async rethrows -> (seconds: Double, value: T) {
    let clock = ContinuousClock()
    let before = AllocationCounter.current()
    let start = clock.now
    let value = try await body()
    let elapsed = seconds(clock.now - start)
    if let before, let after = AllocationCounter.current() { lastMeasuredAllocations = after - before }
    return (elapsed, value)
}

func seconds(_ duration: Duration) -> Double {
    let parts = duration.components
    return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
}

/// Keeps a computed value alive so the optimizer cannot drop the work that made it.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}
