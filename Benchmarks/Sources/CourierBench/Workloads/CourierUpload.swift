import Courier
import Foundation

extension CourierSession {
    /// A 1-file multipart upload; the sink's JSON answer travels back to the driver, which checks it.
    static func upload(options: Options) async throws -> Measurement {
        try await upload(options: options, over: AsyncHTTPClientTransport())
    }

    /// The same upload over any transport, which this call shuts down.
    static func upload(options: Options, over transport: any Transport) async throws -> Measurement {
        let base = try options.string("url")
        let fileURL = URL(fileURLWithPath: try options.string("path"))
        let manager = SessionManager(transport: transport)
        do {
            let (elapsed, outcome) = try await measureAsync { () -> (Int, SessionResponse) in
                // AFNetworking's path: the serializer builds the multipart request, the session streams it.
                let serializer = HTTPRequestSerializer()
                let request = try serializer.multipartFormRequest(
                    method: .post, urlString: base + "upload",
                    constructingBody: { (form: inout MultipartFormData) in
                        try form.append(
                            fileURL: fileURL, name: "file", fileName: fileURL.lastPathComponent,
                            mimeType: "application/octet-stream")
                    })
                let task = manager.uploadTask(with: request)
                task.resume()
                let response = try await task.response()
                return (Int(request.body.contentLength ?? -1), response)
            }
            try await manager.shutdown()
            try await transport.shutdown()
            let (bodyLength, response) = outcome
            let sink = String(decoding: response.data, as: UTF8.self)
            return Measurement(
                seconds: elapsed, operations: 1, bytes: bodyLength, correct: response.response.statusCode == 200,
                detail: "status \(response.response.statusCode), \(bodyLength) body bytes", extra: ["sink": sink])
        } catch {
            try? await manager.shutdown()
            try? await transport.shutdown()
            throw error
        }
    }
}
