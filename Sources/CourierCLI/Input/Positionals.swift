/// The positional arguments `[METHOD] URL [ITEM ...]`, split as httpie does, but without its
/// quirk of reading `courier localhost a=1` as the method `localhost`.
struct Positionals: Sendable, Equatable {
    /// The method, upper-cased as httpie sends it (`delete` goes out as `DELETE`), nil when it
    /// is to be inferred.
    var method: String?
    /// The URL as typed (before shorthand expansion).
    var url: String
    /// The request items, parsed.
    var items: [RequestItem]

    /// Splits and parses `arguments`.
    /// - Throws: ``CLIError`` (usage) when the URL is missing or an item does not parse.
    static func parse(_ arguments: [String]) throws -> Positionals {
        guard let first = arguments.first else {
            throw CLIError.usage("the URL is missing; usage: courier [METHOD] URL [ITEM ...] (courier --help for more)")
        }
        var method: String?
        var rest = arguments.dropFirst()
        var url = first
        // The first word is a method when it is letters only, something follows, and it is
        // upper case, a standard method, or followed by a URL rather than an item.
        if first.allSatisfy({ $0.isASCII && $0.isLetter }), let second = rest.first,
            first == first.uppercased() || standardMethods.contains(first.uppercased())
                || !RequestItemParser.isItem(second)
        {
            method = first.uppercased()
            url = second
            rest = rest.dropFirst()
        }
        let items = try rest.map(RequestItemParser.parse)
        return Positionals(method: method, url: url, items: items)
    }

    static let standardMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"]
}
