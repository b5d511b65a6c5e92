/// Removes `.` and `..` segments from a URL path (RFC 3986 §5.2.4): what resolving a redirect's
/// `Location` needs, and what curl and httpie do to a typed URL before sending it (the CLI's
/// `--path-as-is` keeps them). Works on the percent-encoded path, where `%2E` is not a dot.
package enum DotSegments {
    /// `path` without its `.` and `..` segments.
    package static func removed(from path: String) -> String {
        var input = Substring(path)
        var output: [Substring] = []
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
                if !output.isEmpty { output.removeLast() }
            } else if input == "/.." {
                input = "/"
                if !output.isEmpty { output.removeLast() }
            } else if input == "." || input == ".." {
                input = ""
            } else {
                // Move the first segment, with its leading "/" if any, to the output.
                let searchStart = input.hasPrefix("/") ? input.index(after: input.startIndex) : input.startIndex
                let end = input[searchStart...].firstIndex(of: "/") ?? input.endIndex
                output.append(input[..<end])
                input = input[end...]
            }
        }
        return output.joined()
    }
}
