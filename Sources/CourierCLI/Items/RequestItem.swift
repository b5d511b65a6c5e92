/// One parsed request item from the command line, such as `X-API-Key:abc` or `count:=3`.
///
/// Keeps the token exactly as typed (``original``) so that every later error can quote it, as
/// httpie's `KeyValueArg.orig` does.
struct RequestItem: Sendable, Equatable {
    /// What an item adds to the request, chosen by its separator.
    enum Kind: String, Sendable, CaseIterable {
        /// `Name:Value` — a header; `Name:` removes a default header.
        case header = ":"
        /// `Name;` — a header sent with an empty value.
        case emptyHeader = ";"
        /// `name==value` — a URL query parameter.
        case query = "=="
        /// `name=value` — a data field (a JSON string, or a form field).
        case dataField = "="
        /// `name:=json` — a raw JSON value (JSON bodies only).
        case rawJSONField = ":="
        /// `name@path[;type=mime]` — a file field (multipart); `@path` alone is the raw body.
        case fileField = "@"
        /// `name=@path` — a data field whose text is read from a file.
        case dataFieldFromFile = "=@"
        /// `name:=@path` — a raw JSON value read from a file.
        case rawJSONFieldFromFile = ":=@"

        /// The separator as typed.
        var separator: String { rawValue }
    }

    /// The item's kind.
    var kind: Kind
    /// The unescaped part before the separator (empty for a raw-body `@path`).
    var key: String
    /// The unescaped part after the separator (for file fields without the `;type=` suffix).
    var value: String
    /// The MIME type given with `;type=mime` on a file field.
    var mimeType: String?
    /// The token exactly as given on the command line.
    var original: String

    /// True for `@path` with no field name: the file is the whole request body.
    var isRawBodyFile: Bool { kind == .fileField && key.isEmpty }

    /// True when the item contributes to the request body.
    var isData: Bool {
        switch kind {
        case .dataField, .rawJSONField, .fileField, .dataFieldFromFile, .rawJSONFieldFromFile: return true
        case .header, .emptyHeader, .query: return false
        }
    }
}
