/// Removes `.` and `..` segments from a URL path (RFC 3986 §5.2.4), as curl and httpie do
/// before sending unless told `--path-as-is`: `/a/../b` goes out as `/b`, `/a/./b/` as `/a/b/`.
///
/// Works on the percent-encoded path; `%2E` is not a dot here, as for curl.
enum DotSegments {
    /// `path` without its dot segments; a path that has none comes back unchanged.
    static func removed(from path: String) -> String {
        guard hasDotSegment(path) else { return path }
        var input = Substring(path)
        var output = ""
        while !input.isEmpty {
            if input.hasPrefix("../") {
                input = input.dropFirst(3)
            } else if input.hasPrefix("./") {
                input = input.dropFirst(2)
            } else if input.hasPrefix("/./") {
                input = input.dropFirst(2)
            } else if input == "/." {
                input = "/"
            } else if input.hasPrefix("/../") {
                input = input.dropFirst(3)
                dropLastSegment(of: &output)
            } else if input == "/.." {
                input = "/"
                dropLastSegment(of: &output)
            } else if input == "." || input == ".." {
                input = ""
            } else {
                // The first segment, with its leading "/", up to the next "/".
                let start = input.hasPrefix("/") ? input.index(after: input.startIndex) : input.startIndex
                let end = input[start...].firstIndex(of: "/") ?? input.endIndex
                output += input[..<end]
                input = input[end...]
            }
        }
        return output
    }

    /// True when some segment of `path` is `.` or `..`.
    private static func hasDotSegment(_ path: String) -> Bool {
        path.split(separator: "/", omittingEmptySubsequences: false).contains { $0 == "." || $0 == ".." }
    }

    /// Removes the last segment of `output` and the `/` before it (or all of it, if it has none).
    private static func dropLastSegment(of output: inout String) {
        if let slash = output.lastIndex(of: "/") {
            output.removeSubrange(slash...)
        } else {
            output = ""
        }
    }
}
