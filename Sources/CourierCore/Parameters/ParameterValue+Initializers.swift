import Foundation

/// Values from variables, without spelling the case: `["n": .init(count), "q": .init(query)]`.
///
/// Literals already become values on their own (`["n": 2]`), but Swift has no implicit
/// conversions, so a variable needs one of these initialisers: `["n": count]` with
/// `count: Int` does not compile as ``Parameters``. Making it compile would need `Parameters`
/// to hold `any` protocol values instead of this typed tree, which would lose `Hashable`,
/// exhaustive matching and the literal syntax's checking, so the tree stays as it is.
///
/// An optional that is nil becomes ``null``, which a query string writes as a bare key and
/// JSON as `null`.
extension ParameterValue {
    /// A ``string(_:)`` value.
    public init(_ value: String) { self = .string(value) }

    /// An ``int(_:)`` value.
    public init(_ value: Int) { self = .int(value) }

    /// An ``int(_:)`` value when `value` fits in `Int`; otherwise (a large `UInt` or `UInt64`)
    /// its decimal text as a ``string(_:)``, so no digit is lost, as ``init(foundation:)`` does.
    public init<Integer: BinaryInteger>(_ value: Integer) {
        if let integer = Int(exactly: value) {
            self = .int(integer)
        } else {
            self = .string(String(value))
        }
    }

    /// A ``double(_:)`` value.
    public init(_ value: Double) { self = .double(value) }

    /// A ``bool(_:)`` value.
    public init(_ value: Bool) { self = .bool(value) }

    /// A ``data(_:)`` value.
    public init(_ value: Data) { self = .data(value) }

    /// A ``string(_:)`` value, or ``null`` when `value` is nil.
    public init(_ value: String?) { self = value.map(ParameterValue.string) ?? .null }

    /// An ``int(_:)`` value, or ``null`` when `value` is nil.
    public init(_ value: Int?) { self = value.map(ParameterValue.int) ?? .null }

    /// A ``double(_:)`` value, or ``null`` when `value` is nil.
    public init(_ value: Double?) { self = value.map(ParameterValue.double) ?? .null }

    /// A ``bool(_:)`` value, or ``null`` when `value` is nil.
    public init(_ value: Bool?) { self = value.map(ParameterValue.bool) ?? .null }

    /// A ``data(_:)`` value, or ``null`` when `value` is nil.
    public init(_ value: Data?) { self = value.map(ParameterValue.data) ?? .null }
}

/// A type whose values convert to a ``ParameterValue`` without loss: the types of its scalar
/// cases, optionals of them, and `ParameterValue` itself. Collections of them convert in one
/// step: `["tags": .init(tags), "limits": .init(limits)]` for `tags: [String]` and
/// `limits: [String: Int]`.
public protocol ParameterValueConvertible {
    /// This value as a parameter value.
    var parameterValue: ParameterValue { get }
}

extension ParameterValue: ParameterValueConvertible {
    /// The value itself.
    public var parameterValue: ParameterValue { self }
}

extension String: ParameterValueConvertible {
    /// A ``ParameterValue/string(_:)`` value.
    public var parameterValue: ParameterValue { .string(self) }
}

extension Int: ParameterValueConvertible {
    /// An ``ParameterValue/int(_:)`` value.
    public var parameterValue: ParameterValue { .int(self) }
}

extension Double: ParameterValueConvertible {
    /// A ``ParameterValue/double(_:)`` value.
    public var parameterValue: ParameterValue { .double(self) }
}

extension Bool: ParameterValueConvertible {
    /// A ``ParameterValue/bool(_:)`` value.
    public var parameterValue: ParameterValue { .bool(self) }
}

extension Data: ParameterValueConvertible {
    /// A ``ParameterValue/data(_:)`` value.
    public var parameterValue: ParameterValue { .data(self) }
}

extension Optional: ParameterValueConvertible where Wrapped: ParameterValueConvertible {
    /// The wrapped value's, or ``ParameterValue/null`` when there is none.
    public var parameterValue: ParameterValue { self?.parameterValue ?? .null }
}

extension ParameterValue {
    /// An ``array(_:)`` of `values`, in their order.
    public init<Values: Sequence>(_ values: Values) where Values.Element: ParameterValueConvertible {
        self = .array(values.map(\.parameterValue))
    }

    /// A ``set(_:)`` of `values`: written in a stable order, as ``set(_:)`` is.
    public init<Element: ParameterValueConvertible>(_ values: Set<Element>) {
        self = .set(Set(values.map(\.parameterValue)))
    }

    /// A ``dictionary(_:)`` of `values`, under the same keys.
    public init<Value: ParameterValueConvertible>(_ values: [String: Value]) {
        self = .dictionary(values.mapValues(\.parameterValue))
    }
}
