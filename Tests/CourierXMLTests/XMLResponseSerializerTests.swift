import Courier
import CourierXML
import Foundation
import HTTPTypes
import Testing

@Suite struct XMLResponseSerializerTests {
    func parse(
        _ text: String, serializer: XMLResponseSerializer = XMLResponseSerializer(), status: Int = 200,
        contentType: String? = "application/xml"
    ) throws -> ParsedXMLElement? {
        try serializer.serialize(
            request: Request(url: XMLFixture.url), response: XMLFixture.head(status, contentType: contentType),
            data: Data(utf8: text))
    }

    @Test(arguments: ["application/xml", "text/xml", "text/xml; charset=utf-8"])
    func treeWithAttributesChildrenTextAndCDATA(contentType: String) throws {
        let root = try #require(
            try parse(
                #"<?xml version="1.0"?><feed v="2"><item id="1">one</item><item id="2"><![CDATA[<two>]]></item><empty/></feed>"#,
                contentType: contentType))
        #expect(
            root
                == ParsedXMLElement(
                    name: "feed", attributes: ["v": "2"],
                    children: [
                        ParsedXMLElement(name: "item", attributes: ["id": "1"], text: "one"),
                        ParsedXMLElement(name: "item", attributes: ["id": "2"], text: "<two>"),
                        ParsedXMLElement(name: "empty"),
                    ]))
        #expect(root.children(named: "item").map(\.text) == ["one", "<two>"])
        #expect(root.firstChild(named: "empty")?.children == [])
        #expect(root.firstChild(named: "missing") == nil)
    }

    @Test func entitiesAndNamespaces() throws {
        let text = #"<a:root xmlns:a="urn:x"><a:v>&lt;&amp;&#233;</a:v></a:root>"#
        let plain = try #require(try parse(text))
        #expect(plain.name == "a:root")
        #expect(plain.children.first?.text == "<&é")
        var serializer = XMLResponseSerializer()
        serializer.processesNamespaces = true
        let namespaced = try #require(try parse(text, serializer: serializer))
        #expect(namespaced.name == "root")
        #expect(namespaced.namespaceURI == "urn:x")
    }

    @Test func malformedXMLIsATypedError() throws {
        let body = Data(utf8: "<root><open></root>")
        let error = try #require(XMLFixture.error(contentType: "text/xml", body: body))
        #expect(error.code == .invalidXML)
        #expect(error.responseData == body)
        #expect(error.message.contains("line"))
    }

    @Test func externalEntitiesAreNeverRead() throws {
        let marker = "courier-secret-\(UUID().uuidString)"
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("xxe-\(UUID().uuidString).txt")
        try Data(marker.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let text = #"<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "\#(file.absoluteString)">]><r>&x;</r>"#
        do {
            let root = try parse(text)
            #expect(root?.text.contains(marker) != true)
        } catch let error as CourierError {
            #expect(error.code == .invalidXML)
        }
    }

    @Test func emptyAndRejected() throws {
        #expect(try parse("", status: 204, contentType: nil) == nil)
        #expect(
            XMLFixture.error(contentType: "text/xml", body: Data())?.code
                == .emptyResponseBody)
        #expect(
            XMLFixture.error(contentType: "application/json", body: Data(utf8: "<a/>"))?.code
                == .unacceptableContentType)
    }
}

/// The request and response head an XML serializer test feeds in.
enum XMLFixture {
    static let url = URL(string: "http://127.0.0.1:8080/resource")!

    static func head(_ status: Int = 200, contentType: String?) -> ResponseHead {
        var fields = HTTPFields()
        if let contentType { fields[.contentType] = contentType }
        return ResponseHead(status: HTTPResponse.Status(code: status), headerFields: fields, url: url)
    }

    /// Serializes and returns the thrown ``CourierError``, or nil when nothing was thrown.
    static func error(contentType: String?, body: Data) -> CourierError? {
        do {
            _ = try XMLResponseSerializer().serialize(
                request: Request(url: url), response: head(contentType: contentType), data: body)
            return nil
        } catch {
            return error as? CourierError
        }
    }
}

extension Data {
    fileprivate init(utf8 text: String) { self = Data(text.utf8) }
}
