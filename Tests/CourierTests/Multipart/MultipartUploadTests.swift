import Courier
import CourierTestServer
import Foundation
import NIOCore
import Testing

@testable import CourierCore

/// A form sent over loopback to the test server's httpbin-style `/post`, which parses it.
@Suite(.timeLimit(.minutes(3))) struct MultipartUploadTests {
    @Test func formUploadedThroughTheTransportArrivesIntact() async throws {
        let server = try await TestServer.start()
        let transport = AsyncHTTPClientTransport()
        let directory = try TemporaryDirectory()
        do {
            let fileText = String(repeating: "courier multipart line\n", count: 100_000)
            let file = try directory.file("notes.txt", Array(fileText.utf8))
            let request = try HTTPRequestSerializer().multipartFormRequest(
                method: .post, urlString: server.url("/post").absoluteString, parameters: ["greeting": "héllo"]
            ) { form in
                try form.append(fileURL: file, name: "notes")
                form.append(ByteBuffer(string: "buffered"), name: "buffer", fileName: "b.txt", mimeType: "text/plain")
                try form.append(length: 6, name: "stream", fileName: "s.txt", mimeType: "text/plain") {
                    InputStream(data: Data("stream".utf8))
                }
            }
            // Twice: the body is replayable, as a redirect or retry needs.
            for _ in 0..<2 {
                let response = try await transport.send(request, context: ExchangeContext())
                #expect(response.head.status.code == 200)
                var bytes: [UInt8] = []
                for try await chunk in response.body { bytes += chunk.readableBytesView }
                let json = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
                let form = try #require(json["form"] as? [String: Any])
                let files = try #require(json["files"] as? [String: Any])
                #expect(form["greeting"] as? String == "héllo")
                #expect(files["notes"] as? String == fileText)
                #expect(files["buffer"] as? String == "buffered")
                #expect(files["stream"] as? String == "stream")
                let headers = try #require(json["headers"] as? [String: Any])
                let length = headers.first { $0.key.lowercased() == "content-length" }?.value as? String
                #expect(length == request.value(forHTTPHeaderField: "Content-Length"))
            }
        } catch {
            try await transport.shutdown()
            try await server.shutdown()
            throw error
        }
        try await transport.shutdown()
        try await server.shutdown()
    }
}
