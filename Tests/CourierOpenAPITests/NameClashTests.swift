// This file imports Courier, CourierOpenAPI and OpenAPIAsyncHTTPClient together: both Courier and
// OpenAPIAsyncHTTPClient declare an `AsyncHTTPClientTransport`, and CourierOpenAPI's names must
// not add a third clash. That it compiles is the test; the module-qualified spellings below are
// how such a file names each of the two.
import Courier
import CourierOpenAPI
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import Testing

@Suite("CourierOpenAPI: names beside OpenAPIAsyncHTTPClient")
struct NameClashTests {
    @Test("a file importing Courier, CourierOpenAPI and OpenAPIAsyncHTTPClient names every transport")
    func everyTransportNamed() {
        let courier: any ClientTransport = CourierClientTransport()
        let peer: any ClientTransport = OpenAPIAsyncHTTPClient.AsyncHTTPClientTransport()
        let courierTransport: any Transport = Courier.AsyncHTTPClientTransport.shared
        #expect(courier is CourierClientTransport)
        #expect(peer is OpenAPIAsyncHTTPClient.AsyncHTTPClientTransport)
        #expect(courierTransport is Courier.AsyncHTTPClientTransport)
    }
}
