import Foundation

/// Readings of this process's resources from `/proc/self` (Linux), for leak and memory bounds.
enum ProcessProbe {
    /// The number of open descriptors that are not sockets (files, pipes, event and timer
    /// descriptors), or nil where `/proc/self/fd` does not exist. The parallel suite's hundreds
    /// of test servers and their connections move the total by hundreds; they leave this alone.
    static func nonSocketDescriptorCount() -> Int? {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return nil }
        return entries.count { entry in
            let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + entry)
            return target.map { !$0.hasPrefix("socket:[") } ?? false
        }
    }

    /// The number of this process's descriptors open on the file at `path`, or nil where
    /// `/proc/self/fd` does not exist. Other tests cannot change it, unlike the total count.
    static func descriptorCount(openOn path: String) -> Int? {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return nil }
        let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        return entries.filter { entry in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + entry)) == target
        }.count
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

extension ProcessProbe {
    /// The number of this process's descriptors that are TCP sockets with `port` at either end
    /// (from `/proc/self/net/tcp{,6}` and `/proc/self/fd`), or nil off Linux.
    ///
    /// Unlike the total descriptor count, other tests running at the same time cannot change it.
    static func socketDescriptorCount(port: Int) -> Int? {
        var inodes = Set<String>()
        var readAny = false
        for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
            guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
            readAny = true
            for line in text.split(separator: "\n").dropFirst() {
                let columns = line.split(separator: " ")
                guard columns.count > 9 else { continue }
                let ports = [columns[1], columns[2]].compactMap { address in
                    address.split(separator: ":").last.flatMap { Int($0, radix: 16) }
                }
                if ports.contains(port), columns[9] != "0" { inodes.insert(String(columns[9])) }
            }
        }
        guard readAny, let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else {
            return nil
        }
        return descriptors.count { descriptor in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + descriptor)
            else { return false }
            guard target.hasPrefix("socket:["), target.hasSuffix("]") else { return false }
            return inodes.contains(String(target.dropFirst(8).dropLast()))
        }
    }
}

extension ProcessProbe {
    /// The number of this process's descriptors open on a file inside `directory`, or nil off Linux.
    ///
    /// Scoped to one directory so that files other tests open at the same time are not counted.
    static func descriptorCount(under directory: URL) -> Int? {
        guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else {
            return nil
        }
        let prefix = directory.resolvingSymlinksInPath().path + "/"
        return descriptors.count { descriptor in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + descriptor)
            else { return false }
            return target.hasPrefix(prefix)
        }
    }
}
