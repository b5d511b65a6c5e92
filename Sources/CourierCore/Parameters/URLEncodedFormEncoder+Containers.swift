import Foundation

/// A node of the form being built. A class, because `Encodable` containers write into the
/// same node through several container values (nested containers for one key merge).
final class FormBox {
    enum Value {
        case unset
        case string(String)
        case array([FormBox])
        case object([(key: String, box: FormBox)])
    }

    var value: Value = .unset

    /// The child under `key`, made if absent; the node becomes an object.
    func child(forKey key: String) -> FormBox {
        if case .object(let entries) = value, let existing = entries.first(where: { $0.key == key }) {
            return existing.box
        }
        let child = FormBox()
        if case .object(var entries) = value {
            value = .unset  // drop the reference so the append does not copy
            entries.append((key: key, box: child))
            value = .object(entries)
        } else {
            value = .object([(key: key, box: child)])
        }
        return child
    }

    /// A new last element; the node becomes an array.
    func appendChild() -> FormBox {
        let child = FormBox()
        if case .array(var elements) = value {
            value = .unset
            elements.append(child)
            value = .array(elements)
        } else {
            value = .array([child])
        }
        return child
    }

    var count: Int {
        if case .array(let elements) = value { return elements.count }
        return 0
    }

    /// What the node holds, for error messages.
    var summary: String {
        switch value {
        case .unset: return "nothing"
        case .string(let text): return "the single value \"\(text)\""
        case .array(let elements): return "an array of \(elements.count) elements"
        case .object: return "an object"
        }
    }
}

struct FormCodingKey: CodingKey {
    let stringValue: String
    let intValue: Int?
    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }
    init(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }
}

/// The `Encoder` that turns a value into ``FormBox`` nodes.
final class FormValueEncoder: Encoder {
    let box: FormBox
    let options: URLEncodedFormEncoder
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(box: FormBox, options: URLEncodedFormEncoder, codingPath: [any CodingKey]) {
        self.box = box
        self.options = options
        self.codingPath = codingPath
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .unset = box.value { box.value = .object([]) }
        return KeyedEncodingContainer(FormKeyedContainer<Key>(encoder: self, box: box, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .unset = box.value { box.value = .array([]) }
        return FormUnkeyedContainer(encoder: self, box: box, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        FormSingleValueContainer(encoder: self, box: box, codingPath: codingPath)
    }

    /// Writes `value` into `target`: leaves directly, dates and data by the options, everything
    /// else through its own `encode(to:)`.
    func encodeValue<Value: Encodable>(_ value: Value, into target: FormBox, codingPath: [any CodingKey]? = nil) throws
    {
        switch value {
        case let text as String:
            target.value = .string(text)
            return
        case let flag as Bool:
            target.value = .string(options.boolEncoding.encode(flag))
            return
        case let date as Date:
            if let text = try options.dateEncoding.encode(date) {
                target.value = .string(text)
                return
            }
        case let data as Data:
            if let text = try options.dataEncoding.encode(data) {
                target.value = .string(text)
                return
            }
        case let decimal as Decimal:
            // Decimal's own encoding is a keyed structure; a form wants its digits.
            target.value = .string(decimal.description)
            return
        default:
            break
        }
        if let number = value as? any LosslessStringConvertible & Numeric {
            target.value = .string(String(describing: number))
            return
        }
        try value.encode(to: FormValueEncoder(box: target, options: options, codingPath: codingPath ?? self.codingPath))
    }
}

struct FormKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: FormValueEncoder
    let box: FormBox
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws {
        guard let text = encoder.options.nilEncoding.encodeNil() else { return }
        box.child(forKey: key.stringValue).value = .string(text)
    }

    mutating func encode<Value: Encodable>(_ value: Value, forKey key: Key) throws {
        try write(value, forKey: key)
    }

    private func write<Value: Encodable>(_ value: Value, forKey key: Key) throws {
        try encoder.encodeValue(value, into: box.child(forKey: key.stringValue), codingPath: codingPath + [key])
    }

    /// Nil goes through ``encodeNil(forKey:)`` so that ``URLEncodedFormEncoder/NilEncoding`` applies
    /// (the standard library's default would drop the key silently).
    private mutating func writeOptional<Value: Encodable>(_ value: Value?, forKey key: Key) throws {
        if let value { try write(value, forKey: key) } else { try encodeNil(forKey: key) }
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws { try write(value, forKey: key) }
    mutating func encode(_ value: String, forKey key: Key) throws { try write(value, forKey: key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try write(value, forKey: key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try write(value, forKey: key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try write(value, forKey: key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try write(value, forKey: key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try write(value, forKey: key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try write(value, forKey: key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try write(value, forKey: key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try write(value, forKey: key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try write(value, forKey: key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try write(value, forKey: key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try write(value, forKey: key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try write(value, forKey: key) }

    mutating func encodeIfPresent<Value: Encodable>(_ value: Value?, forKey key: Key) throws {
        try writeOptional(value, forKey: key)
    }
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try writeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try writeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try writeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try writeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try writeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try writeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try writeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try writeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try writeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try writeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try writeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try writeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try writeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try writeOptional(value, forKey: key) }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let child = box.child(forKey: key.stringValue)
        if case .unset = child.value { child.value = .object([]) }
        return KeyedEncodingContainer(
            FormKeyedContainer<NestedKey>(encoder: encoder, box: child, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = box.child(forKey: key.stringValue)
        if case .unset = child.value { child.value = .array([]) }
        return FormUnkeyedContainer(encoder: encoder, box: child, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        FormValueEncoder(box: box.child(forKey: "super"), options: encoder.options, codingPath: codingPath)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        FormValueEncoder(
            box: box.child(forKey: key.stringValue), options: encoder.options, codingPath: codingPath + [key])
    }
}

struct FormUnkeyedContainer: UnkeyedEncodingContainer {
    let encoder: FormValueEncoder
    let box: FormBox
    let codingPath: [any CodingKey]

    var count: Int { box.count }

    mutating func encodeNil() throws {
        guard let text = encoder.options.nilEncoding.encodeNil() else { return }
        box.appendChild().value = .string(text)
    }

    mutating func encode<Value: Encodable>(_ value: Value) throws {
        try write(value)
    }

    private func write<Value: Encodable>(_ value: Value) throws {
        let key = FormCodingKey(intValue: count)
        try encoder.encodeValue(value, into: box.appendChild(), codingPath: codingPath + [key])
    }

    mutating func encode(_ value: Bool) throws { try write(value) }
    mutating func encode(_ value: String) throws { try write(value) }
    mutating func encode(_ value: Double) throws { try write(value) }
    mutating func encode(_ value: Float) throws { try write(value) }
    mutating func encode(_ value: Int) throws { try write(value) }
    mutating func encode(_ value: Int8) throws { try write(value) }
    mutating func encode(_ value: Int16) throws { try write(value) }
    mutating func encode(_ value: Int32) throws { try write(value) }
    mutating func encode(_ value: Int64) throws { try write(value) }
    mutating func encode(_ value: UInt) throws { try write(value) }
    mutating func encode(_ value: UInt8) throws { try write(value) }
    mutating func encode(_ value: UInt16) throws { try write(value) }
    mutating func encode(_ value: UInt32) throws { try write(value) }
    mutating func encode(_ value: UInt64) throws { try write(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<
        NestedKey
    > {
        let key = FormCodingKey(intValue: count)
        let child = box.appendChild()
        child.value = .object([])
        return KeyedEncodingContainer(
            FormKeyedContainer<NestedKey>(encoder: encoder, box: child, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let key = FormCodingKey(intValue: count)
        let child = box.appendChild()
        child.value = .array([])
        return FormUnkeyedContainer(encoder: encoder, box: child, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        FormValueEncoder(box: box.appendChild(), options: encoder.options, codingPath: codingPath)
    }
}

struct FormSingleValueContainer: SingleValueEncodingContainer {
    let encoder: FormValueEncoder
    let box: FormBox
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws {
        if let text = encoder.options.nilEncoding.encodeNil() { box.value = .string(text) }
    }

    mutating func encode<Value: Encodable>(_ value: Value) throws { try encoder.encodeValue(value, into: box) }
    mutating func encode(_ value: Bool) throws { try encoder.encodeValue(value, into: box) }
    mutating func encode(_ value: String) throws { try encoder.encodeValue(value, into: box) }
    mutating func encode(_ value: Double) throws { try encoder.encodeValue(value, into: box) }
    mutating func encode(_ value: Float) throws { try encoder.encodeValue(value, into: box) }
    mutating func encode(_ value: Int) throws { try encoder.encodeValue(value, into: box) }
    mutating func encode(_ value: Int8) throws { try encoder.encodeValue(value, into: box) }
    mutating func encode(_ value: Int16) throws { try encoder.encodeValue(value, into: box) }
    mutating func encode(_ value: Int32) throws { try encoder.encodeValue(value, into: box) }
    mutating func encode(_ value: Int64) throws { try encoder.encodeValue(value, into: box) }
    mutating func encode(_ value: UInt) throws { try encoder.encodeValue(value, into: box) }
    mutating func encode(_ value: UInt8) throws { try encoder.encodeValue(value, into: box) }
    mutating func encode(_ value: UInt16) throws { try encoder.encodeValue(value, into: box) }
    mutating func encode(_ value: UInt32) throws { try encoder.encodeValue(value, into: box) }
    mutating func encode(_ value: UInt64) throws { try encoder.encodeValue(value, into: box) }
}
