import Courier
import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Validates a response and parses its body as XML into a ``ParsedXMLElement`` tree
/// (AFXMLParserResponseSerializer / AFXMLDocumentResponseSerializer).
///
/// Accepts `application/xml` and `text/xml` by default. Uses Foundation's `XMLParser`
/// (libxml2 on Linux) with external entities never resolved, so a response cannot make the
/// client read local files or fetch URLs. 204/205/HEAD give nil; an empty body elsewhere is an error.
public struct XMLResponseSerializer: ValidatingResponseSerializer {
    public var acceptableStatusCodes: Set<Int>?
    public var acceptableContentTypes: Set<String>?
    public var emptyResponseCodes = ResponseSerializerDefaults.emptyResponseCodes
    public var emptyRequestMethods = ResponseSerializerDefaults.emptyRequestMethods
    /// Whether to report namespace URIs and use local names. Default false: names as written.
    public var processesNamespaces: Bool

    /// Makes an XML serializer with AFNetworking's defaults.
    public init(
        processesNamespaces: Bool = false,
        acceptableStatusCodes: Set<Int>? = ResponseSerializerDefaults.acceptableStatusCodes,
        acceptableContentTypes: Set<String>? = ["application/xml", "text/xml"]
    ) {
        self.processesNamespaces = processesNamespaces
        self.acceptableStatusCodes = acceptableStatusCodes
        self.acceptableContentTypes = acceptableContentTypes
    }

    /// Validates and parses the body into its root element; nil for 204/205/HEAD.
    /// - Throws: ``CourierError`` `unacceptableStatusCode`, `unacceptableContentType`,
    ///   `emptyResponseBody`, or `invalidXML` (quoting the parser's line and column).
    public func serialize(request: Request, response: ResponseHead, data: Data) throws -> ParsedXMLElement? {
        try validate(request: request, response: response, data: data)
        if isEmptyResponse(request: request, response: response) { return nil }
        if data.isEmpty {
            throw emptyBodyError(request: request, response: response, data: data, expecting: "an XML document")
        }
        let parser = XMLParser(data: data)
        parser.shouldResolveExternalEntities = false
        parser.shouldProcessNamespaces = processesNamespaces
        let builder = XMLTreeBuilder()
        parser.delegate = builder
        let succeeded = parser.parse()
        guard succeeded, let root = builder.root else {
            let position = "line \(parser.lineNumber), column \(parser.columnNumber)"
            throw CourierError.response(
                .invalidXML,
                "The body of \(response.statusCode) from \(response.url.absoluteString) is not well-formed XML (\(position))",
                offendingInput: position,
                underlyingError: parser.parserError ?? builder.error,
                response: response, data: data
            )
        }
        return root
    }
}

/// Collects `XMLParser` events into a tree; lives only for one synchronous `parse()`.
private final class XMLTreeBuilder: NSObject, XMLParserDelegate {
    private var stack: [ParsedXMLElement] = []
    private(set) var root: ParsedXMLElement?
    private(set) var error: (any Error)?

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
        qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]
    ) {
        let namespace = namespaceURI.flatMap { $0.isEmpty ? nil : $0 }
        stack.append(ParsedXMLElement(name: elementName, namespaceURI: namespace, attributes: attributeDict))
    }

    func parser(
        _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?
    ) {
        guard let finished = stack.popLast() else { return }
        if stack.isEmpty {
            root = finished
        } else {
            stack[stack.count - 1].children.append(finished)
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        guard !stack.isEmpty else { return }
        stack[stack.count - 1].text += string
    }

    func parser(_ parser: XMLParser, foundCDATA block: Data) {
        guard !stack.isEmpty else { return }
        stack[stack.count - 1].text += String(decoding: block, as: UTF8.self)
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        error = parseError
    }
}
