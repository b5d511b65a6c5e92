import Courier
import Foundation
import Testing

@testable import CourierCore

@Suite struct HTTPResponseSerializerTests {
    let body = Data("<html></html>")

    @Test(arguments: [200, 201, 204, 250, 299])
    func acceptsEverySuccessCode(status: Int) throws {
        let data = try HTTPResponseSerializer().serialize(
            request: ResponseFixture.request(), response: ResponseFixture.head(status, contentType: "text/html"),
            data: body)
        #expect(data == body)
    }

    @Test(arguments: [100, 199, 300, 304, 400, 404, 500, 503])
    func rejectsOtherCodesWithResponseAndData(status: Int) throws {
        let error = try #require(ResponseFixture.error(HTTPResponseSerializer(), status: status, body: body))
        #expect(error.code == .unacceptableStatusCode)
        #expect(error.offendingInput == String(status))
        #expect(error.response?.statusCode == status)
        #expect(error.response?.url == ResponseFixture.url)
        #expect(error.responseData == body)
        #expect(error.underlyingError == nil)
        #expect(error.message.contains("\(status)"))
    }

    @Test func nilStatusCodesAcceptsAnything() throws {
        var serializer = HTTPResponseSerializer()
        serializer.acceptableStatusCodes = nil
        #expect(ResponseFixture.error(serializer, status: 503, body: body) == nil)
    }

    @Test func customStatusCodes() throws {
        let serializer = HTTPResponseSerializer(acceptableStatusCodes: [404])
        #expect(ResponseFixture.error(serializer, status: 404, body: body) == nil)
        #expect(ResponseFixture.error(serializer, status: 200, body: body)?.code == .unacceptableStatusCode)
    }

    @Test func baseSerializerAcceptsAnyContentType() {
        #expect(ResponseFixture.error(HTTPResponseSerializer(), contentType: "image/x-anything", body: body) == nil)
        #expect(ResponseFixture.error(HTTPResponseSerializer(), contentType: nil, body: body) == nil)
    }

    @Test func wrongContentTypeWithDataIsAnError() throws {
        let serializer = HTTPResponseSerializer(acceptableContentTypes: ["application/json"])
        let error = try #require(ResponseFixture.error(serializer, contentType: "text/html; charset=utf-8", body: body))
        #expect(error.code == .unacceptableContentType)
        #expect(error.offendingInput == "text/html")
        #expect(error.responseData == body)
        #expect(error.response?.statusCode == 200)
    }

    @Test func missingContentTypeWithDataIsAnError() throws {
        let serializer = HTTPResponseSerializer(acceptableContentTypes: ["application/json"])
        let error = try #require(ResponseFixture.error(serializer, contentType: nil, body: body))
        #expect(error.code == .unacceptableContentType)
        #expect(error.offendingInput == nil)
    }

    @Test func wrongOrMissingContentTypeWithoutDataIsNotAnError() {
        let serializer = HTTPResponseSerializer(acceptableContentTypes: ["application/json"])
        #expect(ResponseFixture.error(serializer, contentType: "text/html", body: Data()) == nil)
        #expect(ResponseFixture.error(serializer, contentType: nil, body: Data()) == nil)
    }

    @Test func contentTypeMatchIgnoresCaseAndParameters() {
        let serializer = HTTPResponseSerializer(acceptableContentTypes: ["application/json"])
        #expect(ResponseFixture.error(serializer, contentType: "Application/JSON ; charset=UTF-8", body: body) == nil)
    }

    @Test func statusErrorWrapsContentTypeError() throws {
        let serializer = HTTPResponseSerializer(acceptableContentTypes: ["application/json"])
        let error = try #require(ResponseFixture.error(serializer, status: 500, contentType: "text/html", body: body))
        #expect(error.code == .unacceptableStatusCode)
        let underlying = try #require(error.underlyingError as? CourierError)
        #expect(underlying.code == .unacceptableContentType)
        #expect(underlying.responseData == body)
    }

    @Test func statusErrorWithoutDataHasNoContentTypeError() throws {
        let serializer = HTTPResponseSerializer(acceptableContentTypes: ["application/json"])
        let error = try #require(ResponseFixture.error(serializer, status: 500, contentType: "text/html", body: Data()))
        #expect(error.code == .unacceptableStatusCode)
        #expect(error.underlyingError == nil)
        #expect(error.responseData == Data())
    }

    @Test func dataSerializerInsistsOnABodyExceptForEmptyResponses() throws {
        #expect(ResponseFixture.error(DataResponseSerializer(), status: 200, body: Data())?.code == .emptyResponseBody)
        for status in [204, 205] {
            let data = try DataResponseSerializer().serialize(
                request: ResponseFixture.request(), response: ResponseFixture.head(status), data: Data())
            #expect(data.isEmpty)
        }
        let head = try DataResponseSerializer().serialize(
            request: ResponseFixture.request(.head), response: ResponseFixture.head(200), data: Data())
        #expect(head.isEmpty)
        #expect(ResponseFixture.error(DataResponseSerializer(allowsEmptyBody: true), status: 200, body: Data()) == nil)
        #expect(
            try DataResponseSerializer().serialize(
                request: ResponseFixture.request(), response: ResponseFixture.head(), data: body) == body)
    }
}
