import Courier
import Foundation
import HTTPTypes

@testable import CourierAsyncHTTPClient
@testable import CourierCore

/// Builds the request/response pairs the serializer tests feed in.
enum ResponseFixture {
    static let url = URL(string: "http://127.0.0.1:8080/resource")!

    static func request(_ method: HTTPMethod = .get) -> Request {
        Request(method: method, url: url)
    }

    static func head(_ status: Int = 200, contentType: String? = nil, headers: [String: String] = [:]) -> ResponseHead {
        var fields = HTTPFields()
        if let contentType { fields[.contentType] = contentType }
        for (name, value) in headers {
            if let fieldName = HTTPField.Name(name) { fields[fieldName] = value }
        }
        return ResponseHead(status: HTTPResponse.Status(code: status), headerFields: fields, url: url)
    }

    /// Serializes and returns the thrown ``CourierError``, or nil when nothing was thrown.
    static func error<S: ResponseSerializer>(
        _ serializer: S, method: HTTPMethod = .get, status: Int = 200, contentType: String? = nil, body: Data
    ) -> CourierError? {
        do {
            _ = try serializer.serialize(
                request: request(method), response: head(status, contentType: contentType), data: body)
            return nil
        } catch let error as CourierError {
            return error
        } catch {
            return CourierError(.init("unexpected"), "\(error)")
        }
    }
}

extension Data {
    init(_ text: String) { self = Data(text.utf8) }
}
