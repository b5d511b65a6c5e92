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
