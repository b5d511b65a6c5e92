import Courier
import Foundation

/// Builds multipart requests with Courier's ``MultipartFormData``: text fields first, then
/// file fields, each group in command-line order (as httpie sends them). File parts stream
/// from disk when sent, so a large file costs no memory.
struct MultipartAssembler {
    var plan: RequestPlan

    /// The form, with the `--boundary` given or a random one.
    /// - Throws: ``CourierError`` `.invalidBoundary` for a boundary RFC 2046 does not allow,
    ///   `.invalidFile` for a file that cannot be read.
    func form() throws -> MultipartFormData {
        var form = try plan.boundary.map { try MultipartFormData(boundary: $0) } ?? MultipartFormData()
        for field in plan.fields {
            if case .text(let text) = field.value { form.append(text, name: field.name) }
        }
        for file in plan.files {
            let url = URL(fileURLWithPath: file.path)
            if let mimeType = file.mimeType {
                try form.append(fileURL: url, name: file.name, fileName: url.lastPathComponent, mimeType: mimeType)
            } else {
                try form.append(fileURL: url, name: file.name)
            }
        }
        return form
    }

    /// The multipart request built on `serializer`'s defaults.
    /// - Throws: as ``form()``, and the serializer's `.invalidURL`.
    func request(method: HTTPMethod, urlString: String, serializer: HTTPRequestSerializer) throws -> Request {
        let form = try form()
        var request = try serializer.makeRequest(method: method, urlString: urlString)
        try request.setValue(form.contentType, forHTTPHeaderField: "Content-Type")
        request.body = .source(form)
        return request
    }
}
