/// The codes of the parameters layer: turning values into parameters and parameters into text.
extension CourierError.Code {
    /// Text with a lone UTF-16 surrogate, which cannot be written as UTF-8.
    ///
    /// Thrown by `QueryString.percentEscaped(nsString:)`, the one input that can hold one.
    public static let unpairedSurrogate = CourierError.Code("unpairedSurrogate")

    /// A Foundation value that has no ``ParameterValue`` form (a `Date`, a custom object),
    /// or that no serializer can write (NaN in JSON, null in a property list).
    ///
    /// Thrown by the ``ParameterValue`` initializers from Foundation objects, and by
    /// ``JSONRequestSerializer`` and ``PropertyListRequestSerializer``; the message names the key path.
    public static let unsupportedParameterValue = CourierError.Code("unsupportedParameterValue")

    /// A value given to the form encoder whose top level is not keyed (a bare string, an array).
    ///
    /// Thrown by ``URLEncodedFormEncoder``'s `encode(_:)`.
    public static let invalidFormRoot = CourierError.Code("invalidFormRoot")
}
