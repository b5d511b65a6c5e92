import Foundation

/// Encodes any `Encodable` as an `application/x-www-form-urlencoded` string, with the options
/// of Alamofire's `URLEncodedFormEncoder` and the same output for the same options.
///
/// Defaults: arrays as `key[]`, bools `1`/`0`, data base64, dates as `Date`'s own encoding,
/// keys as written, nested keys in brackets, nil values dropped with their key, spaces as `%20`,
/// and pairs sorted alphabetically. Escaping leaves only ``allowedCharacters`` (by default
/// `A-Z a-z 0-9 - . _ ~ / ?`, as ``QueryString/percentEscaped(_:)``) and the space literal.
///
/// ```swift
/// struct Search: Encodable { let query: String; let page: Int; let tags: [String] }
/// try URLEncodedFormEncoder().encode(Search(query: "a b", page: 2, tags: ["x", "y"]))
/// // "page=2&query=a%20b&tags%5B%5D=x&tags%5B%5D=y"
/// ```
public struct URLEncodedFormEncoder: Sendable {
    /// How array elements are keyed.
    public enum ArrayEncoding: Sendable {
        /// `key[]`, the default.
        case brackets
        /// `key`, repeated.
        case noBrackets
        /// `key[0]`, `key[1]`, as jQuery and Node.js.
        case indexInBrackets
        /// The closure's key for the element at an index.
        case custom(@Sendable (_ key: String, _ index: Int) -> String)

        func encode(_ key: String, atIndex index: Int) -> String {
            switch self {
            case .brackets: return key + "[]"
            case .noBrackets: return key
            case .indexInBrackets: return "\(key)[\(index)]"
            case .custom(let encode): return encode(key, index)
            }
        }
    }

    /// How bools are written.
    public enum BoolEncoding: Sendable {
        /// `1` and `0`, the default.
        case numeric
        /// `true` and `false`.
        case literal

        func encode(_ value: Bool) -> String {
            switch self {
            case .numeric: return value ? "1" : "0"
            case .literal: return value ? "true" : "false"
            }
        }
    }

    /// How `Data` is written.
    public enum DataEncoding: Sendable {
        /// `Data`'s own `Encodable` form: its bytes as an array of numbers.
        case deferredToData
        /// Standard base64, the default.
        case base64
        /// The closure's text; its error reaches the caller unchanged.
        case custom(@Sendable (Data) throws -> String)

        func encode(_ data: Data) throws -> String? {
            switch self {
            case .deferredToData: return nil
            case .base64: return data.base64EncodedString()
            case .custom(let encode): return try encode(data)
            }
        }
    }

    /// How `Date` is written.
    public enum DateEncoding: Sendable {
        /// `Date`'s own `Encodable` form (seconds since 2001-01-01), the default.
        case deferredToDate
        /// Seconds since 1970-01-01 UTC, as Swift prints a `Double` (`1.5`, `0.0`).
        case secondsSince1970
        /// Milliseconds since 1970-01-01 UTC, as Swift prints a `Double`.
        case millisecondsSince1970
        /// ISO 8601 / RFC 3339 internet date-time, such as `2001-01-01T00:00:00Z`.
        case iso8601
        /// The formatter's text. `DateFormatter` is not `Sendable`; the encoder only reads it.
        case formatted(SendableDateFormatter)
        /// The closure's text; its error reaches the caller unchanged.
        case custom(@Sendable (Date) throws -> String)

        func encode(_ date: Date) throws -> String? {
            switch self {
            case .deferredToDate: return nil
            case .secondsSince1970: return String(date.timeIntervalSince1970)
            case .millisecondsSince1970: return String(date.timeIntervalSince1970 * 1000)
            case .iso8601: return date.formatted(.iso8601)
            case .formatted(let formatter): return formatter.string(from: date)
            case .custom(let encode): return try encode(date)
            }
        }
    }

    /// A `DateFormatter` wrapped so it can sit in a `Sendable` encoder: it is locked while used.
    public final class SendableDateFormatter: @unchecked Sendable {
        private let formatter: DateFormatter
        // DateFormatter is not thread-safe for concurrent use; the lock serializes it.
        private let lock = NSLock()

        /// Wraps `formatter`; do not change it afterwards.
        public init(_ formatter: DateFormatter) { self.formatter = formatter }

        func string(from date: Date) -> String { lock.withLock { formatter.string(from: date) } }
    }

    /// How keys are written; applied to the whole key path of each pair, as Alamofire does.
    public enum KeyEncoding: Sendable {
        /// Keys as the `Encodable` type names them, the default.
        case useDefaultKeys
        /// `oneTwo` → `one_two`, `myURLValue` → `my_url_value`.
        case convertToSnakeCase
        /// `oneTwo` → `one-two`.
        case convertToKebabCase
        /// The first character upper-cased: `oneTwo` → `OneTwo`.
        case capitalized
        /// All upper case.
        case uppercased
        /// All lower case.
        case lowercased
        /// The closure's key.
        case custom(@Sendable (String) -> String)

        func encode(_ key: String) -> String {
            switch self {
            case .useDefaultKeys: return key
            case .convertToSnakeCase: return Self.splitWords(key, separator: "_")
            case .convertToKebabCase: return Self.splitWords(key, separator: "-")
            case .capitalized: return key.prefix(1).uppercased() + key.dropFirst()
            case .uppercased: return key.uppercased()
            case .lowercased: return key.lowercased()
            case .custom(let encode): return encode(key)
            }
        }

        /// Starts a new word at an upper-case letter that follows a non-upper-case character, or
        /// that ends a run of capitals and is followed by a lower-case letter (`URLValue` →
        /// `URL`, `Value`); words are lower-cased and joined.
        static func splitWords(_ key: String, separator: String) -> String {
            let characters = Array(key)
            var words: [String] = []
            var current = ""
            for index in characters.indices {
                let character = characters[index]
                if index > 0, character.isUppercase {
                    let afterUpper = characters[index - 1].isUppercase
                    let beforeLower = index + 1 < characters.count && characters[index + 1].isLowercase
                    if !afterUpper || beforeLower, !current.isEmpty {
                        words.append(current)
                        current = ""
                    }
                }
                current.append(character)
            }
            words.append(current)
            return words.map { $0.lowercased() }.joined(separator: separator)
        }
    }

    /// How a nested key joins its parent's.
    public struct KeyPathEncoding: Sendable {
        /// `parent[child]`, the default.
        public static let brackets = KeyPathEncoding { "[\($0)]" }
        /// `parent.child`.
        public static let dots = KeyPathEncoding { ".\($0)" }

        private let encode: @Sendable (String) -> String

        /// A key path style whose closure turns a child key into the text appended to its parent's key.
        public init(encoding: @escaping @Sendable (_ subkey: String) -> String) { self.encode = encoding }

        func encodeKeyPath(_ subkey: String) -> String { encode(subkey) }
    }

    /// How a nil value is written.
    public struct NilEncoding: Sendable {
        /// The key is left out, the default.
        public static let dropKey = NilEncoding { nil }
        /// `key=`.
        public static let dropValue = NilEncoding { "" }
        /// `key=null`.
        public static let null = NilEncoding { "null" }

        private let encode: @Sendable () -> String?

        /// A nil style whose closure gives the value text, or nil to leave the key out.
        public init(encoding: @escaping @Sendable () -> String?) { self.encode = encoding }

        func encodeNil() -> String? { encode() }
    }

    /// How spaces are written.
    public enum SpaceEncoding: Sendable {
        /// `%20`, the default.
        case percentEscaped
        /// `+`, as HTML forms.
        case plusReplaced
    }

    /// Whether pairs are sorted (by their escaped text, at every level); true by default.
    public var alphabetizeKeyValuePairs: Bool
    /// How array elements are keyed.
    public var arrayEncoding: ArrayEncoding
    /// How bools are written.
    public var boolEncoding: BoolEncoding
    /// How `Data` is written.
    public var dataEncoding: DataEncoding
    /// How `Date` is written.
    public var dateEncoding: DateEncoding
    /// How keys are written.
    public var keyEncoding: KeyEncoding
    /// How nested keys join their parent's.
    public var keyPathEncoding: KeyPathEncoding
    /// How nil is written.
    public var nilEncoding: NilEncoding
    /// How spaces are written.
    public var spaceEncoding: SpaceEncoding
    /// The characters left unescaped (besides the space, which ``spaceEncoding`` handles).
    public var allowedCharacters: CharacterSet

    /// The characters ``QueryString/percentEscaped(_:)`` leaves literal: `A-Z a-z 0-9 - . _ ~ / ?`.
    public static let queryAllowedCharacters: CharacterSet = {
        var set = CharacterSet()
        set.insert(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/?")
        return set
    }()

    /// An encoder with the given options; the defaults are Alamofire's.
    public init(
        alphabetizeKeyValuePairs: Bool = true,
        arrayEncoding: ArrayEncoding = .brackets,
        boolEncoding: BoolEncoding = .numeric,
        dataEncoding: DataEncoding = .base64,
        dateEncoding: DateEncoding = .deferredToDate,
        keyEncoding: KeyEncoding = .useDefaultKeys,
        keyPathEncoding: KeyPathEncoding = .brackets,
        nilEncoding: NilEncoding = .dropKey,
        spaceEncoding: SpaceEncoding = .percentEscaped,
        allowedCharacters: CharacterSet = URLEncodedFormEncoder.queryAllowedCharacters
    ) {
        self.alphabetizeKeyValuePairs = alphabetizeKeyValuePairs
        self.arrayEncoding = arrayEncoding
        self.boolEncoding = boolEncoding
        self.dataEncoding = dataEncoding
        self.dateEncoding = dateEncoding
        self.keyEncoding = keyEncoding
        self.keyPathEncoding = keyPathEncoding
        self.nilEncoding = nilEncoding
        self.spaceEncoding = spaceEncoding
        self.allowedCharacters = allowedCharacters
    }

    /// The form text of `value`, whose top level must be keyed (a struct, class or dictionary).
    /// - Throws: ``CourierError`` `.invalidFormRoot` quoting what the top level was instead; the
    ///   error of a custom data or date closure, or of the value's own `encode(to:)`, unchanged.
    public func encode(_ value: some Encodable) throws -> String {
        let root = FormBox()
        try FormValueEncoder(box: root, options: self, codingPath: []).encodeValue(value, into: root)
        guard case .object(let entries) = root.value else {
            throw CourierError(
                .invalidFormRoot,
                "a form needs a keyed value (a struct or dictionary) at the top level, not \(root.summary)",
                offendingInput: root.summary)
        }
        return serialize(
            entries, escaper: FormEscaper(allowedCharacters: allowedCharacters, spaceEncoding: spaceEncoding))
    }

    /// The form text of `value` as UTF-8 bytes, for a request body.
    /// - Throws: as ``encode(_:)``.
    public func encodeData(_ value: some Encodable) throws -> Data {
        Data(try encode(value).utf8)
    }

    // MARK: Serialization

    private func serialize(_ entries: [(key: String, box: FormBox)], escaper: FormEscaper) -> String {
        let segments = entries.map { serialize($0.box, forKey: $0.key, escaper: escaper) }
        return join(segments)
    }

    private func serialize(_ box: FormBox, forKey key: String, escaper: FormEscaper) -> String {
        switch box.value {
        case .unset: return ""
        case .string(let text): return escaper.pair(key: keyEncoding.encode(key), value: text)
        case .array(let elements):
            return join(
                elements.enumerated().map { index, element in
                    serialize(element, forKey: arrayEncoding.encode(key, atIndex: index), escaper: escaper)
                })
        case .object(let entries):
            return join(
                entries.map { entry in
                    serialize(entry.box, forKey: key + keyPathEncoding.encodeKeyPath(entry.key), escaper: escaper)
                })
        }
    }

    /// Joins with `&`, sorted when ``alphabetizeKeyValuePairs``; empty containers add nothing.
    private func join(_ segments: [String]) -> String {
        let present = segments.filter { !$0.isEmpty }
        return (alphabetizeKeyValuePairs ? present.sorted() : present).joined(separator: "&")
    }
}

/// Escapes form keys and values for one encode: the allowed set is prepared once, not per
/// string, and the default set (``URLEncodedFormEncoder/queryAllowedCharacters``) skips
/// Foundation entirely for the byte table of ``PercentEscaping``, which gives the same bytes.
private struct FormEscaper {
    /// Nil when the allowed set is the default one and the byte table applies.
    let foundationAllowed: CharacterSet?
    let spaceAsPlus: Bool

    init(allowedCharacters: CharacterSet, spaceEncoding: URLEncodedFormEncoder.SpaceEncoding) {
        spaceAsPlus = spaceEncoding == .plusReplaced
        if allowedCharacters == URLEncodedFormEncoder.queryAllowedCharacters {
            foundationAllowed = nil
        } else {
            var allowed = allowedCharacters
            allowed.insert(" ")
            foundationAllowed = allowed
        }
    }

    /// `escapedKey=escapedValue`.
    func pair(key: String, value: String) -> String {
        guard foundationAllowed != nil else {
            var output = ByteWriter(capacity: (key.utf8.count + value.utf8.count) * 3 + 1)
            output.appendFormEscaped(key, spaceAsPlus: spaceAsPlus)
            output.append(UInt8(ascii: "="))
            output.appendFormEscaped(value, spaceAsPlus: spaceAsPlus)
            return output.makeString()
        }
        return escape(key) + "=" + escape(value)
    }

    private func escape(_ text: String) -> String {
        guard let allowed = foundationAllowed else {
            var output = ByteWriter(capacity: text.utf8.count * 3)
            output.appendFormEscaped(text, spaceAsPlus: spaceAsPlus)
            return output.makeString()
        }
        let escaped = text.addingPercentEncoding(withAllowedCharacters: allowed) ?? QueryString.percentEscaped(text)
        return escaped.replacingOccurrences(of: " ", with: spaceAsPlus ? "+" : "%20")
    }
}
