import Foundation

extension CourierError {
    /// An error about a response, with the response head and the body attached.
    package static func response(
        _ code: Code,
        _ message: String,
        offendingInput: String? = nil,
        underlyingError: (any Error & Sendable)? = nil,
        response: ResponseHead,
        data: Data
    ) -> CourierError {
        CourierError(
            code, message, offendingInput: offendingInput, underlyingError: underlyingError,
            response: response, responseData: data
        )
    }
}
