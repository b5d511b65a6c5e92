import Courier
import CourierOpenAPI
import CourierOpenAPIExample
import CourierTestServer
import Foundation
import Testing

/// The example of Examples/OpenAPI, run end to end on Courier's transport against the embedded
/// test server, as `swift run` in that folder does against `courier serve`.
@Suite("CourierOpenAPI: the OpenAPI example, end to end", .timeLimit(.minutes(3)))
struct ExampleTourTests {
    @Test("every operation of openapi.yaml answers as documented")
    func tour() async throws {
        try await withServer { server in
            let lines = await ExampleTour.run(over: ExampleTour.courierTransport(), serverURL: server.baseURL)
            #expect(
                lines == [
                    "getEcho: 200 q=swift tag=tour",
                    "postGreeting: 200 json.message=hello json.count=3",
                    "putAnything: 200 PUT data=plain text",
                    "deleteAnything: 200 DELETE",
                    "upload: 200 bytes=4194304 content_length=4194304",
                    "getBytes: 200 received=3145728 declared=3145728",
                    "getStatus: 418 -=[ teapot ]=-",
                    "uploadThroughRedirect: 200 POST bytes=1048576",
                    "putFlaky: 200 attempt=2 json.message=hello",
                ])
        }
    }
}
