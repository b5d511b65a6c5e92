import Courier
import Foundation

/// An XML element as a Sendable value: what ``XMLResponseSerializer`` produces.
///
/// Keeps the element's name, namespace, attributes, child elements in document order, and the
/// character data (including CDATA) directly inside it, joined.
public struct ParsedXMLElement: Sendable, Hashable {
    /// The qualified name as written, such as `item` or `atom:link`.
    public var name: String
    /// The namespace URI, when the document declares one for this element.
    public var namespaceURI: String?
    /// The attributes, by qualified name.
    public var attributes: [String: String]
    /// The child elements, in document order.
    public var children: [ParsedXMLElement]
    /// The character data directly inside this element (not its children's), joined.
    public var text: String

    /// Makes an element.
    public init(
        name: String, namespaceURI: String? = nil, attributes: [String: String] = [:],
        children: [ParsedXMLElement] = [], text: String = ""
    ) {
        self.name = name
        self.namespaceURI = namespaceURI
        self.attributes = attributes
        self.children = children
        self.text = text
    }

    /// The first child element called `name`.
    public func firstChild(named name: String) -> ParsedXMLElement? {
        children.first { $0.name == name }
    }

    /// Every child element called `name`, in document order.
    public func children(named name: String) -> [ParsedXMLElement] {
        children.filter { $0.name == name }
    }
}
