/// The options of a command line in the order they were typed.
///
/// httpie lets the last of several options win where ArgumentParser keeps each option's value
/// apart (`-v -b` prints the body alone; `--unsorted --format-options=json.sort_keys:true`
/// sorts JSON keys but not headers), so those choices are read from here.
enum OptionSequence {
    /// One option as typed: a long one (`--print`) or one letter of a short cluster (`-hb`), with
    /// the value it took, if it takes one.
    enum Item: Equatable {
        case long(String, value: String?)
        case short(Character, value: String?)
    }

    /// The long options whose value may follow as the next argument.
    static let longOptionsWithValues: Set<String> = [
        "--auth", "--auth-type", "--output", "--raw", "--session", "--session-read-only", "--boundary", "--timeout",
        "--max-time", "--verify", "--cert", "--cert-key", "--max-redirects", "--pretty", "--progress", "--proxy",
        "--transport", "--cache", "--print", "--format-options", "--response-mime", "--response-charset",
    ]

    /// The short options that take a value: the rest of their cluster, or the next argument.
    static let shortOptionsWithValues: Set<Character> = ["p", "a", "A", "o"]

    /// The options in `arguments` (the command line without the program's name), up to `--`.
    static func items(in arguments: [String]) -> [Item] {
        var items: [Item] = []
        var index = 0
        func nextValue() -> String? {
            defer { index += 1 }
            return index < arguments.count ? arguments[index] : nil
        }
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" { break }
            if argument.hasPrefix("--") {
                if let equals = argument.firstIndex(of: "=") {
                    items.append(.long(String(argument[..<equals]), value: String(argument[equals...].dropFirst())))
                } else {
                    // `--raw -hb` sends "-hb": the value is never read as options.
                    items.append(.long(argument, value: longOptionsWithValues.contains(argument) ? nextValue() : nil))
                }
                continue
            }
            guard argument.hasPrefix("-"), argument.count > 1 else { continue }
            var letters = argument.dropFirst()
            while let letter = letters.popFirst() {
                guard shortOptionsWithValues.contains(letter) else {
                    items.append(.short(letter, value: nil))
                    continue
                }
                items.append(.short(letter, value: letters.isEmpty ? nextValue() : String(letters)))
                letters = ""
            }
        }
        return items
    }
}
