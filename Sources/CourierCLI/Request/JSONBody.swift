/// Builds the JSON object that data fields make, with httpie's key paths: `a[b]=1` nests,
/// `a[]=1` appends, `a[0]=1` sets an index; a repeated plain key keeps its last value.
enum JSONBody {
    /// The object for `fields`, in command-line order.
    /// - Throws: ``CLIError`` (usage) quoting an item whose key path conflicts with an earlier one.
    static func object(from fields: [RequestPlan.Field]) throws -> OrderedJSON {
        var root = OrderedJSON.object([])
        for field in fields {
            let value: OrderedJSON
            switch field.value {
            case .text(let text): value = .string(text)
            case .json(let json): value = json
            }
            let path = keyPath(field.name)
            guard try set(value, at: path[...], in: &root) else {
                throw CLIError.usage("\"\(field.item.original)\": the key path conflicts with an earlier item")
            }
        }
        return root
    }

    enum PathStep: Equatable {
        case key(String)
        case index(Int)
        case append
    }

    /// Splits `a[b][]` into steps; a key without well-formed brackets is one literal key.
    static func keyPath(_ name: String) -> [PathStep] {
        guard let open = name.firstIndex(of: "["), open != name.startIndex, name.hasSuffix("]") else {
            return [.key(name)]
        }
        var steps: [PathStep] = [.key(String(name[..<open]))]
        var rest = name[open...]
        while !rest.isEmpty {
            guard rest.first == "[", let close = rest.firstIndex(of: "]") else { return [.key(name)] }
            let inner = rest[rest.index(after: rest.startIndex)..<close]
            if inner.isEmpty {
                steps.append(.append)
            } else if let index = Int(inner), index >= 0, index < 10_000 {
                steps.append(.index(index))
            } else {
                steps.append(.key(String(inner)))
            }
            rest = rest[rest.index(after: close)...]
        }
        return steps
    }

    /// Sets `value` at `path` inside `container`; false on a type conflict.
    private static func set(_ value: OrderedJSON, at path: ArraySlice<PathStep>, in container: inout OrderedJSON) throws
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
                if rest.isEmpty { child = value } else if !(try set(value, at: rest, in: &child)) { return false }
                members[position].value = child
            } else {
                var child = OrderedJSON.null
                if !(try set(value, at: rest, in: &child)) { return false }
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
            if !(try set(value, at: rest, in: &child)) { return false }
            elements[position] = child
            container = .array(elements)
        }
        return true
    }
}
