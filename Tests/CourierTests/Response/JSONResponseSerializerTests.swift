import Courier
import Foundation
import Testing

@testable import CourierCore

@Suite struct JSONResponseSerializerTests {
    func parse(
        _ text: String, serializer: JSONResponseSerializer = JSONResponseSerializer(), method: HTTPMethod = .get,
        status: Int = 200, contentType: String? = "application/json"
    ) throws -> JSONValue? {
        try serializer.serialize(
            request: ResponseFixture.request(method), response: ResponseFixture.head(status, contentType: contentType),
            data: Data(text))
    }

    @Test(arguments: ["application/json", "text/json", "text/javascript", "application/json; charset=utf-8"])
    func acceptsJSONContentTypes(contentType: String) throws {
        #expect(try parse(#"{"key":"value"}"#, contentType: contentType) == ["key": "value"])
    }

    @Test(arguments: ["text/html", "text/plain", "application/xml"])
    func rejectsOtherContentTypes(contentType: String) throws {
        let error = try #require(
            ResponseFixture.error(JSONResponseSerializer(), contentType: contentType, body: Data("{}")))
        #expect(error.code == .unacceptableContentType)
        #expect(error.responseData == Data("{}"))
    }

    @Test(arguments: ["", " ", "\n", " \r\n\t "])
    func emptyOrWhitespaceBodyIsNoValueAndNoError(body: String) throws {
        #expect(try parse(body) == nil)
        #expect(try parse(body, contentType: "text/json") == nil)
    }

    @Test func whitespaceWithoutAContentTypeIsStillBytesOfNoAcceptableType() throws {
        #expect(try parse("", contentType: nil) == nil)
        let error = ResponseFixture.error(JSONResponseSerializer(), contentType: nil, body: Data(" "))
        #expect(error?.code == .unacceptableContentType)
    }

    @Test func emptyResponsesAreNil() throws {
        #expect(try parse("", status: 204, contentType: nil) == nil)
        #expect(try parse("", status: 205, contentType: nil) == nil)
        #expect(try parse("", method: .head, contentType: "application/json") == nil)
    }

    @Test func exactValueTypes() throws {
        let value = try parse(
            #"{"t":true,"f":false,"zero":0,"one":1,"neg":-7,"half":1.5,"whole":2.0,"s":"é\u00e9","n":null,"a":[1,"x",[]],"o":{}}"#
        )
        #expect(
            value == [
                "t": true, "f": false, "zero": 0, "one": 1, "neg": -7, "half": 1.5, "whole": 2.0, "s": "éé", "n": nil,
                "a": [1, "x", []], "o": [:],
            ])
        #expect(value?["one"]?.intValue == 1)
        #expect(value?["one"]?.boolValue == nil)
        #expect(value?["t"]?.intValue == nil)
        #expect(value?["a"]?[1]?.stringValue == "x")
        #expect(value?["a"]?[5] == nil)
        #expect(value?["missing"] == nil)
        #expect(value?["n"]?.isNull == true)
        #expect(value?["half"]?.doubleValue == 1.5)
    }

    @Test func largeIntegers() throws {
        #expect(try parse("[9223372036854775807]") == [.int(Int.max)])
        #expect(try parse("[-4294967296]") == [.int(-4_294_967_296)])
        #expect(try parse("[18446744073709551615]") == [.double(18446744073709551615.0)])
    }

    @Test func removesKeysWithNullValuesAtEveryDepth() throws {
        let serializer = JSONResponseSerializer(removesKeysWithNullValues: true)
        let value = try parse(#"{"a":null,"b":{"c":null,"d":1},"e":[{"f":null,"g":"h"},null]}"#, serializer: serializer)
        #expect(value == ["b": ["d": 1], "e": [["g": "h"], nil]])
    }

    @Test func keepsNullsByDefault() throws {
        #expect(try parse(#"{"a":null}"#) == ["a": nil])
    }

    @Test func invalidJSONIsATypedErrorWithTheData() throws {
        let error = try #require(
            ResponseFixture.error(JSONResponseSerializer(), contentType: "application/json", body: Data("{\"a\":")))
        #expect(error.code == .invalidJSON)
        #expect(error.underlyingError != nil)
        #expect(error.responseData == Data("{\"a\":"))
        #expect(error.response?.statusCode == 200)
    }

    @Test func fragmentsNeedTheReadingOption() throws {
        let error = ResponseFixture.error(
            JSONResponseSerializer(), contentType: "application/json", body: Data("\"abc\""))
        #expect(error?.code == .invalidJSON)
        let serializer = JSONResponseSerializer(readingOptions: .fragmentsAllowed)
        #expect(try parse("\"abc\"", serializer: serializer) == "abc")
        #expect(try parse("42", serializer: serializer) == 42)
    }

    @Test func statusErrorComesFirstAndKeepsTheBody() throws {
        let body = Data(#"{"error":"nope"}"#)
        let error = try #require(
            ResponseFixture.error(JSONResponseSerializer(), status: 422, contentType: "application/json", body: body))
        #expect(error.code == .unacceptableStatusCode)
        #expect(error.responseData == body)
        #expect(error.underlyingError == nil)
    }

    @Test func invalidUTF8IsAnError() throws {
        let error = ResponseFixture.error(
            JSONResponseSerializer(), contentType: "application/json", body: Data([0x22, 0xFF, 0x22]))
        #expect(error?.code == .invalidJSON)
    }

    @Test func foundationRoundTrip() throws {
        let value: JSONValue = ["a": [1, 2.5, "s", true, nil], "b": ["c": false]]
        let data = try JSONSerialization.data(withJSONObject: value.foundationObject, options: [.sortedKeys])
        #expect(String(decoding: data, as: UTF8.self) == #"{"a":[1,2.5,"s",true,null],"b":{"c":false}}"#)
        #expect(try JSONValue(foundationObject: JSONSerialization.jsonObject(with: data)) == value)
    }

    @Test func codableRoundTrip() throws {
        let value: JSONValue = ["a": [1, 2.5, "s", true, nil], "b": ["c": false]]
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let data = try encoder.encode(value)
        #expect(String(decoding: data, as: UTF8.self) == #"{"a":[1,2.5,"s",true,null],"b":{"c":false}}"#)
        #expect(try JSONDecoder().decode(JSONValue.self, from: data) == value)
    }

    @Test func foundationObjectsJSONCannotHoldAreRejected() {
        #expect(throws: CourierError.self) { try JSONValue(foundationObject: Date()) }
    }
}
