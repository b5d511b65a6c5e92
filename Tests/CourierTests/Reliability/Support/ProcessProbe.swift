import Foundation

/// Readings of this process's resources from `/proc/self` (Linux), for leak and memory bounds.
enum ProcessProbe {
    /// The number of open file descriptors, or nil where `/proc/self/fd` does not exist.
    static func openFileDescriptorCount() -> Int? {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")).map(\.count)
    }

    /// The resident set size in bytes (`VmRSS`), or nil where `/proc/self/status` does not exist.
    static func residentBytes() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let digits = line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
            return digits.map { $0 * 1024 }
        }
        return nil
    }
}
