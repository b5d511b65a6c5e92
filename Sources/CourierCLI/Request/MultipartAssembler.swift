import Courier
import Foundation

/// Builds multipart requests with Courier's ``MultipartFormData``: text and file fields in
/// command-line order (as httpie 3 sends them). File parts stream
/// from disk when sent, so a large file costs no memory.
struct MultipartAssembler {
    var plan: RequestPlan

    /// The form, with the `--boundary` given or a random one.
    /// - Throws: ``CourierError`` `.invalidBoundary` for a boundary RFC 2046 does not allow,
    ///   `.invalidFile` for a file that cannot be read.
    func form() throws -> MultipartFormData {
        var form = try plan.boundary.map { try MultipartFormData(boundary: $0) } ?? MultipartFormData()
        enum Part {
            case text(name: String, text: String)
            case file(RequestPlan.FileField)
        }
        let texts = plan.fields.compactMap { field -> (Int, Part)? in
            guard case .text(let text) = field.value else { return nil }
            return (field.position, .text(name: field.name, text: text))
        }
        let parts = (texts + plan.files.map { ($0.position, .file($0)) }).sorted { $0.0 < $1.0 }
        for (_, part) in parts {
            switch part {
            case .text(let name, let text):
                form.append(text, name: name)
            case .file(let file):
                let url = URL(fileURLWithPath: file.path)
                if let mimeType = file.mimeType {
                    try form.append(fileURL: url, name: file.name, fileName: url.lastPathComponent, mimeType: mimeType)
                } else {
                    try form.append(fileURL: url, name: file.name)
                }
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
