import CourierTestServer
import Foundation

// With a URL argument, the tour runs against that server (`courier serve --port 8080`, then
// `swift run courier-openapi-example http://127.0.0.1:8080`); without one it starts the test
// server in this process on a free loopback port.
let arguments = CommandLine.arguments.dropFirst()
var server: TestServer?
let serverURL: URL
if let text = arguments.first {
    guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https" else {
        FileHandle.standardError.write(Data("usage: courier-openapi-example [http://host:port]\n".utf8))
        exit(64)
    }
    serverURL = url
} else {
    let started = try await TestServer.start()
    server = started
    serverURL = URL(string: "http://127.0.0.1:\(started.port)") ?? URL(fileURLWithPath: "/")
}
let lines = await ExampleTour.run(over: ExampleTour.courierTransport(), serverURL: serverURL)
for line in lines { print(line) }
try await server?.shutdown()
exit(lines.contains { $0.contains(": error ") } ? 1 : 0)
