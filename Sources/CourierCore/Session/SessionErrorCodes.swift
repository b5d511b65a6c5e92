/// The codes of the session layer: what happens between attempts, and what the caller's code threw.
extension CourierError.Code {
    /// A task was redirected more times than its ``RedirectPolicy`` allows.
    ///
    /// Thrown by ``RedirectPolicy`` when the session asks it about one redirect too many.
    public static let tooManyRedirects = CourierError.Code("tooManyRedirects")

    /// A redirect's `Location` is not a usable http or https URL.
    ///
    /// Thrown by ``RedirectPolicy``.
    public static let invalidRedirectLocation = CourierError.Code("invalidRedirectLocation")

    /// A buffered response grew past the session's cap; download tasks stream to disk instead.
    ///
    /// Thrown by data and upload tasks while the body arrives.
    public static let responseTooLarge = CourierError.Code("responseTooLarge")

    /// A request adapter failed; the underlying error is the adapter's.
    ///
    /// Thrown by a task whose ``RequestInterceptor`` threw while adapting a request. A
    /// ``CourierError`` thrown by the adapter passes through unchanged instead.
    public static let requestAdaptationFailed = CourierError.Code("requestAdaptationFailed")

    /// A closure of the caller's (a session hook, a download destination) threw; the error it
    /// threw is the ``CourierError/underlyingError``.
    ///
    /// A ``CourierError`` thrown by such a closure passes through unchanged instead.
    public static let hookFailed = CourierError.Code("hookFailed")

    /// An `Encodable` request body that its encoder refused (a NaN in JSON, an unsupported value).
    ///
    /// Thrown by the verbs of ``HTTPSessionManager`` for ``RequestContent/json(_:encoder:)`` and
    /// ``RequestContent/form(_:encoder:)`` content; the
    /// message names the key path and the encoder's error is the underlying error.
    public static let encodingFailed = CourierError.Code("encodingFailed")
}

extension CourierError {
    /// How the session maps the error of code it calls (a transport, an adapter, a hook, a
    /// serializer), once: a ``CourierError`` passes through as it is, since that code worded it
    /// for the caller; any other error becomes the underlying error of a `code` one.
    static func wrapping(
        _ error: any Error, as code: Code, _ message: @autoclosure () -> String, offendingInput: String? = nil
    ) -> CourierError {
        if let error = error as? CourierError { return error }
        return CourierError(code, message(), offendingInput: offendingInput, underlyingError: error)
    }
}
