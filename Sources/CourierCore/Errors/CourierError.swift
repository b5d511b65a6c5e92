import Foundation
import HTTPTypes

/// The one error type that Courier throws.
///
/// Callers match on ``code`` (an open set of values, so that a new code never breaks a
/// `switch`), and read ``message`` for a sentence that quotes the offending input. Each layer
/// declares all its codes in one catalogue, an extension of ``CourierError/Code`` in its own
/// folder (`RequestErrorCodes.swift`, `TransportErrorCodes.swift`, `SessionErrorCodes.swift`, …),
/// which says what each code means and what throws it. A response error carries the response
/// head and the body bytes received, as AFNetworking's error user-info does.
public struct CourierError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as a value that can be compared: `error.code == .invalidURL`.
    ///
    /// Callers match codes but do not make them: the set is Courier's, declared as static
    /// members in each layer's catalogue, so that a code's name and meaning are stated once.
    /// A custom serializer or transport reports its failures with an existing code (and its own
    /// error as ``CourierError/underlyingError``), or throws an error type of its own.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's stable name, such as `"invalidURL"`.
        public let name: String

        /// Makes a code; only the layers' catalogues call it.
        init(_ name: String) { self.name = name }

        public var description: String { name }
    }

    /// What went wrong.
    public var code: Code
    /// A sentence for people, quoting the input that failed where there is one.
    public var message: String {
        get { details.message }
        set { mutateDetails { $0.message = newValue } }
    }
    /// The input that failed (a URL string, a header value, a key path, a file path), if any.
    public var offendingInput: String? {
        get { details.offendingInput }
        set { mutateDetails { $0.offendingInput = newValue } }
    }
    /// The error that caused this one, unchanged (a custom serializer's own error, a POSIX error).
    public var underlyingError: (any Error & Sendable)? {
        get { details.underlyingError }
        set { mutateDetails { $0.underlyingError = newValue } }
    }
    /// The response head, for errors that a response caused.
    public var response: ResponseHead? {
        get { details.response }
        set { mutateDetails { $0.response = newValue } }
    }
    /// The response body bytes received before the error, for errors that a response caused.
    public var responseData: Data? {
        get { details.responseData }
        set { mutateDetails { $0.responseData = newValue } }
    }
    /// What the session measured of a failed task (every attempt until the failure, each with
    /// its timings, status and error code), for the errors a session task reports; nil for
    /// errors thrown before a task ran, and possibly for a cancel or deadline that stopped it.
    public var metrics: TaskMetrics? {
        get { details.metrics }
        set { mutateDetails { $0.metrics = newValue } }
    }

    /// Set by a transport when the exchange got no response head and the request may go out
    /// again on another connection (a retired or stale connection, a refused stream); the
    /// session then resends it on its own. Nil for every other error.
    public var unansweredExchange: UnansweredExchange? {
        get { details.unansweredExchange }
        set { mutateDetails { $0.unansweredExchange = newValue } }
    }

    /// Everything but the code, in one shared box: an error travels by value through every
    /// `Result` and task outcome, and inline its fields made each of those ~440 bytes to copy
    /// and destroy, on the success path too (a `Result` is as large as its larger case).
    private var details: Details

    /// Makes an error; `message` should say what failed in terms the caller used.
    public init(
        _ code: Code,
        _ message: String,
        offendingInput: String? = nil,
        underlyingError: (any Error & Sendable)? = nil,
        response: ResponseHead? = nil,
        responseData: Data? = nil
    ) {
        self.code = code
        self.details = Details(
            message: message, offendingInput: offendingInput, underlyingError: underlyingError, response: response,
            responseData: responseData)
    }

    /// Copy on write: the box is changed in place only while this error is its sole owner.
    private mutating func mutateDetails(_ change: (Details) -> Void) {
        if !isKnownUniquelyReferenced(&details) { details = details.copy() }
        change(details)
    }

    public var description: String {
        var text = "CourierError.\(code): \(message)"
        if let underlyingError { text += " (\(underlyingError))" }
        return text
    }
}

extension CourierError: LocalizedError {
    public var errorDescription: String? { message }
}

/// Pattern matching on a code: `catch CourierError.Code.invalidURL { … }`.
extension CourierError.Code {
    /// True when `error` is a ``CourierError`` with this code.
    ///
    /// Because this operator accepts any error, a bare `.name` pattern in a `switch` over some
    /// other error *struct* whose static members share a name with a code (AsyncHTTPClient's
    /// `HTTPClientError.cancelled`, say) may be resolved to the ``CourierError/Code`` member,
    /// and then never matches. Spell such cases out: `case HTTPClientError.cancelled:`.
    public static func ~= (code: CourierError.Code, error: any Error) -> Bool {
        (error as? CourierError)?.code == code
    }
}

extension CourierError {
    /// The fields behind ``CourierError``'s properties. Unchecked `Sendable`: a box is changed
    /// only through `mutateDetails`, while one error value owns it alone, so no two threads
    /// ever see the same box change.
    private final class Details: @unchecked Sendable {
        var message: String
        var offendingInput: String?
        var underlyingError: (any Error & Sendable)?
        var response: ResponseHead?
        var responseData: Data?
        var metrics: TaskMetrics?
        var unansweredExchange: UnansweredExchange?

        init(
            message: String, offendingInput: String?, underlyingError: (any Error & Sendable)?,
            response: ResponseHead?, responseData: Data?, metrics: TaskMetrics? = nil
        ) {
            self.message = message
            self.offendingInput = offendingInput
            self.underlyingError = underlyingError
            self.response = response
            self.responseData = responseData
            self.metrics = metrics
        }

        func copy() -> Details {
            let copy = Details(
                message: message, offendingInput: offendingInput, underlyingError: underlyingError,
                response: response, responseData: responseData, metrics: metrics)
            copy.unansweredExchange = unansweredExchange
            return copy
        }
    }
}
