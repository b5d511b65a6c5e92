import Courier
import Foundation

/// Builds multipart requests with Courier's ``MultipartFormData``.
struct MultipartAssembler {
    var plan: RequestPlan

    /// The multipart request: text fields then file fields, in command-line order.
    /// - Throws: ``CLIError`` until MultipartFormData is available in this build.
    func request(method: HTTPMethod, urlString: String, serializer: HTTPRequestSerializer) throws -> Request {
        throw CLIError.failure("multipart bodies need MultipartFormData, which this build does not have yet")
    }
}
