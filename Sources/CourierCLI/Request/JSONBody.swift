/// Builds the JSON document that data fields make, with httpie's key paths: `a[b]=1` nests,
/// `a[]=1` appends, `a[0]=1` sets an index, `[]=1` makes the document an array; `\[`, `\]` and
/// `\\` in a key are literal. A repeated plain key keeps its last value.
enum JSONBody {
    /// Array indexes above this are refused rather than filled with thousands of nulls.
    static let maximumIndex = 9_999

    /// The document for `fields`, in command-line order: an object, or an array when the key
    /// paths start with `[`.
    /// - Throws: ``CLIError`` (usage) quoting an item whose key path is malformed or conflicts
    ///   with an earlier one.
    static func document(from fields: [RequestPlan.Field]) throws -> OrderedJSON {
        var root = OrderedJSON.null
        for field in fields {
            let value: OrderedJSON
            switch field.value {
            case .text(let text): value = .string(text)
            case .json(let json): value = json
            }
            let path: [PathStep]
            do {
                path = try keyPath(field.name)
            } catch let error as PathError {
                throw CLIError.usage("\"\(field.item.original)\": \(error.reason) in the key \"\(field.name)\"")
            }
            guard set(value, at: path[...], in: &root) else {
                throw CLIError.usage("\"\(field.item.original)\": the key path conflicts with an earlier item")
            }
        }
        if case .null = root { return .object([]) }
        return root
    }

    enum PathStep: Equatable {
        case key(String)
        case index(Int)
        case append
    }

    /// Why a key is not a well-formed path.
    struct PathError: Error, Equatable {
        var reason: String
    }

    /// Splits `a[b][]` into steps, as httpie reads a key: a name, then bracketed steps, each a
    /// key, a non-negative index or empty (append); a key that starts with `[` addresses a
    /// top-level array. A backslash makes the next `[`, `]` or `\` literal and stays before
    /// any other character.
    /// - Throws: ``PathError`` for an unclosed bracket, text after a `]`, a stray `]`, a key
    ///   inside top-level brackets, a negative or too large index.
    static func keyPath(_ name: String) throws -> [PathStep] {
        enum Token: Equatable {
            case open, close
            case text(String)
        }
        var tokens: [Token] = []
        var text = ""
        var characters = name.makeIterator()
        while let character = characters.next() {
            switch character {
            case "\\":
                guard let next = characters.next() else {
                    text.append("\\")
                    break
                }
                if next != "[", next != "]", next != "\\" { text.append("\\") }
                text.append(next)
            case "[", "]":
                if !text.isEmpty { tokens.append(.text(text)) }
                text = ""
                tokens.append(character == "[" ? .open : .close)
            default:
                text.append(character)
            }
        }
        if !text.isEmpty || tokens.isEmpty { tokens.append(.text(text)) }

        var steps: [PathStep] = []
        var position = tokens.startIndex
        if case .text(let first) = tokens[position] {
            steps.append(.key(first))
            position += 1
        }
        let startsWithBracket = steps.isEmpty
        while position < tokens.endIndex {
            guard tokens[position] == .open else { throw PathError(reason: "expected \"[\"") }
            position += 1
            guard position < tokens.endIndex else { throw PathError(reason: "expected \"]\"") }
            switch tokens[position] {
            case .close:
                steps.append(.append)
            case .text(let inner):
                if let index = Int(inner), inner.allSatisfy(\.isNumber) || inner.hasPrefix("-") {
                    guard index >= 0 else { throw PathError(reason: "negative indexes are not supported") }
                    guard index <= maximumIndex else {
                        throw PathError(reason: "the index \(index) is over \(maximumIndex)")
                    }
                    steps.append(.index(index))
                } else if startsWithBracket && steps.isEmpty {
                    throw PathError(reason: "a top-level step must be an index or \"[]\"")
                } else {
                    steps.append(.key(inner))
                }
                position += 1
                guard position < tokens.endIndex, tokens[position] == .close else {
                    throw PathError(reason: "expected \"]\"")
                }
            case .open:
                throw PathError(reason: "expected a key, an index or \"]\"")
            }
            position += 1
            // `a[x][x]…` nests one level a step; the printer and the merge walk each level.
            guard steps.count <= JSONParser.maximumDepth else {
                throw PathError(reason: "nesting deeper than \(JSONParser.maximumDepth)")
            }
        }
        return steps
    }

    /// Sets `value` at `path` inside `container`; false on a type conflict.
    private static func set(_ value: OrderedJSON, at path: ArraySlice<PathStep>, in container: inout OrderedJSON)
        -> Bool
    {
        guard let step = path.first else {
            container = value
            return true
        }
        let rest = path.dropFirst()
        switch step {
        case .key(let key):
            if case .null = container { container = .object([]) }
            guard case .object(var members) = container else { return false }
            if let position = members.firstIndex(where: { $0.key == key }) {
                var child = members[position].value
                if rest.isEmpty { child = value } else if !set(value, at: rest, in: &child) { return false }
                members[position].value = child
            } else {
                var child = OrderedJSON.null
                if !set(value, at: rest, in: &child) { return false }
                members.append((key, child))
            }
            container = .object(members)
        case .append, .index:
            if case .null = container { container = .array([]) }
            guard case .array(var elements) = container else { return false }
            var position = elements.count
            if case .index(let index) = step {
                while elements.count <= index { elements.append(.null) }
                position = index
            } else {
                elements.append(.null)
            }
            var child = elements[position]
            if !set(value, at: rest, in: &child) { return false }
            elements[position] = child
            container = .array(elements)
        }
        return true
    }
}
