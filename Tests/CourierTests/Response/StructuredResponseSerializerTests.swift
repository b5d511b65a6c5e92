import Courier
import Foundation
import Testing

@testable import CourierCore

@Suite struct PropertyListResponseSerializerTests {
    let xmlPlist = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0"><dict>
        <key>name</key><string>Courier</string>
        <key>count</key><integer>3</integer>
        <key>ratio</key><real>0.5</real>
        <key>ok</key><true/>
        <key>list</key><array><string>a</string><false/></array>
        </dict></plist>
        """

    func parse(_ data: Data, status: Int = 200, method: HTTPMethod = .get, contentType: String? = "application/x-plist")
        throws -> PropertyListValue?
    {
        try PropertyListResponseSerializer().serialize(
            request: ResponseFixture.request(method), response: ResponseFixture.head(status, contentType: contentType),
            data: data)
    }

    @Test func xmlPropertyList() throws {
        #expect(
            try parse(Data(xmlPlist))
                == .dictionary([
                    "name": .string("Courier"), "count": .int(3), "ratio": .double(0.5), "ok": .bool(true),
                    "list": .array([.string("a"), .bool(false)]),
                ]))
    }

    @Test func binaryPropertyListRoundTrip() throws {
        let value = PropertyListValue.dictionary([
            "data": .data(Data([0, 1, 2])), "n": .int(-5), "s": .string("x"),
            "date": .date(Date(timeIntervalSince1970: 1_000_000)),
        ])
        let data = try PropertyListSerialization.data(
            fromPropertyList: value.foundationObject, format: .binary, options: 0)
        #expect(try parse(data) == value)
    }

    @Test func contentTypeAndStatusRules() {
        #expect(
            ResponseFixture.error(
                PropertyListResponseSerializer(), contentType: "application/json", body: Data(xmlPlist))?.code
                == .unacceptableContentType)
        #expect(
            ResponseFixture.error(
                PropertyListResponseSerializer(), status: 500, contentType: "application/x-plist", body: Data(xmlPlist))?
                .code
                == .unacceptableStatusCode)
    }

    @Test func emptyResponsesAndEmptyBodies() throws {
        #expect(try parse(Data(), status: 204, contentType: nil) == nil)
        #expect(try parse(Data(), method: .head) == nil)
        #expect(
            ResponseFixture.error(PropertyListResponseSerializer(), contentType: "application/x-plist", body: Data())?
                .code
                == .emptyResponseBody)
    }

    @Test func invalidPropertyList() throws {
        let error = try #require(
            ResponseFixture.error(
                PropertyListResponseSerializer(), contentType: "application/x-plist",
                body: Data("<plist><dict><key>a</key></plist>")))
        #expect(error.code == .invalidPropertyList)
        #expect(error.responseData == Data("<plist><dict><key>a</key></plist>"))
    }

    @Test func numbersKeepTheirKindAndMagnitude() throws {
        #expect(try PropertyListValue(foundationObject: NSNumber(value: true)) == .bool(true))
        #expect(try PropertyListValue(foundationObject: NSNumber(value: 1.5)) == .double(1.5))
        #expect(try PropertyListValue(foundationObject: NSNumber(value: -7)) == .int(-7))
        #expect(try PropertyListValue(foundationObject: NSNumber(value: UInt32.max)) == .int(Int(UInt32.max)))
        #expect(try PropertyListValue(foundationObject: NSNumber(value: UInt64.max)) == .double(Double(UInt64.max)))
    }
}

@Suite struct DecodableResponseSerializerTests {
    struct User: Decodable, Sendable, Equatable {
        var userName: String
        var age: Int
        var tags: [String]
    }

    @Test func decodesWithAConfiguredDecoder() throws {
        let serializer = DecodableResponseSerializer(
            User.self,
            makeDecoder: {
                let decoder = JSONDecoder()
                decoder.keyDecodingStrategy = .convertFromSnakeCase
                return decoder
            })
        let user = try serializer.serialize(
            request: ResponseFixture.request(), response: ResponseFixture.head(contentType: "application/json"),
            data: Data(#"{"user_name":"ada","age":36,"tags":["x"]}"#))
        #expect(user == User(userName: "ada", age: 36, tags: ["x"]))
    }

    @Test func decodingFailureNamesThePath() throws {
        let body = Data(#"{"userName":"ada","age":36,"tags":["x",7]}"#)
        let error = try #require(
            ResponseFixture.error(DecodableResponseSerializer(User.self), contentType: "application/json", body: body))
        #expect(error.code == .decodingFailed)
        #expect(error.offendingInput == "tags.1")
        #expect(error.underlyingError is DecodingError)
        #expect(error.responseData == body)
        let missing = ResponseFixture.error(
            DecodableResponseSerializer(User.self), contentType: "application/json", body: Data(#"{"age":1,"tags":[]}"#)
        )
        #expect(missing?.offendingInput == "userName")
    }

    @Test func emptyResponsesDecodeToEmptyValues() throws {
        let request = ResponseFixture.request()
        #expect(
            try DecodableResponseSerializer(Empty.self).serialize(
                request: request, response: ResponseFixture.head(204), data: Data()) == Empty.value)
        #expect(
            try DecodableResponseSerializer(User?.self).serialize(
                request: request, response: ResponseFixture.head(205), data: Data()) == nil)
        #expect(
            try DecodableResponseSerializer(Empty.self).serialize(
                request: ResponseFixture.request(.head), response: ResponseFixture.head(200), data: Data())
                == Empty.value)
        #expect(
            ResponseFixture.error(DecodableResponseSerializer(User.self), status: 204, body: Data())?.code
                == .emptyResponseBody)
        #expect(
            ResponseFixture.error(DecodableResponseSerializer(Empty.self), status: 200, body: Data())?.code
                == .emptyResponseBody)
    }

    @Test func rulesAsJSON() {
        #expect(
            ResponseFixture.error(DecodableResponseSerializer(User.self), contentType: "text/html", body: Data("{}"))?
                .code == .unacceptableContentType)
        #expect(
            ResponseFixture.error(
                DecodableResponseSerializer(User.self), status: 401, contentType: "application/json", body: Data("{}"))?
                .code == .unacceptableStatusCode)
    }
}

@Suite struct StringResponseSerializerTests {
    func text(_ bytes: [UInt8], contentType: String?, serializer: StringResponseSerializer = StringResponseSerializer())
        throws -> String
    {
        try serializer.serialize(
            request: ResponseFixture.request(), response: ResponseFixture.head(contentType: contentType),
            data: Data(bytes))
    }

    @Test func charsetFromContentType() throws {
        #expect(try text([0x63, 0x61, 0x66, 0xE9], contentType: "text/plain; charset=ISO-8859-1") == "café")
        #expect(
            try text([0x63, 0x61, 0x66, 0xE9], contentType: #"text/plain; format=flowed; charset="latin1""#) == "café")
        #expect(try text([0x63, 0x61, 0x66, 0xC3, 0xA9], contentType: "text/plain;charset=utf-8") == "café")
        #expect(try text([0x00, 0x41, 0x00, 0x42], contentType: "text/plain; charset=utf-16be") == "AB")
    }

    @Test func fallbackAndOverride() throws {
        #expect(try text([0xC3, 0xA9], contentType: "text/plain") == "é")
        #expect(try text([0xC3, 0xA9], contentType: "text/plain; charset=x-unknown") == "é")
        #expect(
            try text([0xE9], contentType: nil, serializer: StringResponseSerializer(fallbackEncoding: .isoLatin1))
                == "é")
        #expect(
            try text(
                [0xC3, 0xA9], contentType: "text/plain; charset=iso-8859-1",
                serializer: StringResponseSerializer(encoding: .utf8)) == "é")
    }

    @Test func invalidTextIsAnError() throws {
        let error = try #require(
            ResponseFixture.error(
                StringResponseSerializer(), contentType: "text/plain; charset=utf-8", body: Data([0xFF, 0xFE, 0xC3])))
        #expect(error.code == .stringDecodingFailed)
        #expect(error.offendingInput == "utf-8")
    }

    @Test func emptyBodyIsEmptyString() throws {
        #expect(try text([], contentType: nil) == "")
    }

    @Test func charsetParsing() {
        #expect(ResponseFixture.head(contentType: "text/html; charset=\"UTF-8\"").charset == "utf-8")
        #expect(ResponseFixture.head(contentType: "text/html").charset == nil)
        #expect(ResponseFixture.head(contentType: "text/html; charset=").charset == nil)
        #expect(ResponseFixture.head().charset == nil)
    }
}

@Suite struct CompoundResponseSerializerTests {
    enum Body: Sendable, Equatable {
        case json(JSONValue?)
        case plist(PropertyListValue?)
        case text(String)
    }

    let compound = CompoundResponseSerializer<Body>([
        AnyResponseSerializer(JSONResponseSerializer()) { .json($0) },
        AnyResponseSerializer(PropertyListResponseSerializer()) { .plist($0) },
        AnyResponseSerializer(StringResponseSerializer()) { .text($0) },
    ])

    func serialize(_ text: String, status: Int = 200, contentType: String?) throws -> Body {
        try compound.serialize(
            request: ResponseFixture.request(), response: ResponseFixture.head(status, contentType: contentType),
            data: Data(text))
    }

    @Test func firstAcceptingSerializerWins() throws {
        #expect(try serialize(#"{"a":1}"#, contentType: "application/json") == .json(["a": 1]))
        #expect(
            try serialize(#"<plist><string>p</string></plist>"#, contentType: "application/x-plist")
                == .plist(.string("p")))
        #expect(try serialize("plain", contentType: "text/plain") == .text("plain"))
        #expect(try serialize("", contentType: "text/plain") == .json(nil))
    }

    @Test func decodingErrorsOfTheChosenSerializerSurface() {
        #expect(throws: CourierError.self) { try serialize("{", contentType: "application/json") }
    }

    @Test func noneAcceptsThrowsTheFirstError() throws {
        do {
            _ = try serialize("{}", status: 500, contentType: "application/json")
            Issue.record("expected an error")
        } catch let error as CourierError {
            #expect(error.code == .unacceptableStatusCode)
            #expect(error.responseData == Data("{}"))
        }
        let empty = CompoundResponseSerializer<Body>([])
        #expect(throws: CourierError.self) {
            try empty.serialize(request: ResponseFixture.request(), response: ResponseFixture.head(), data: Data())
        }
    }
}
