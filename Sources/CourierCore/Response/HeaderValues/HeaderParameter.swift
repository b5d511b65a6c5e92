// Standard library only: Fuzz/ compiles this folder alone with swiftc.

/// One `name=value` parameter of a parsed header value, as ``MediaType`` and
/// ``ContentDisposition`` hold them.
public struct HeaderParameter: Sendable, Hashable {
    /// The parameter name, lower-cased; an extended parameter keeps its `*` (`filename*`).
    public var name: String
    /// The value, case preserved: unquoted, or for an extended parameter percent-decoded in its charset.
    public var value: String
}

extension [HeaderParameter] {
    /// The value of the first parameter named `name`, matched case-insensitively; nil when there is none.
    func value(named name: String) -> String? {
        let wanted = HeaderByte.lowercased(name)
        return first(where: { $0.name == wanted })?.value
    }
}
