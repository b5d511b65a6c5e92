import Foundation

/// The inputs of the query-string rows, built once per process outside the measured section.
enum QueryStringShapes {
    /// Issue 2's nested shape: 1,000 keys, each `["name": "value i ä&=", "n": i, "flag": bool,
    /// "list": [1, 2, 3]]`, which flattens to 6,000 pairs.
    static let nestedKeyCount = 1_000

    static func nestedKey(_ index: Int) -> String { "key\(index)" }
    static func nestedName(_ index: Int) -> String { "value \(index) ä&=" }

    /// The nested shape already flattened into bracketed query items, for Foundation, which has
    /// no notion of nesting: the same 6,000 pairs Courier produces, in Courier's order.
    static func nestedQueryItems() -> [URLQueryItem] {
        var items: [URLQueryItem] = []
        items.reserveCapacity(nestedKeyCount * 6)
        for index in 0..<nestedKeyCount {
            let key = nestedKey(index)
            items.append(URLQueryItem(name: "\(key)[flag]", value: index.isMultiple(of: 2) ? "1" : "0"))
            for element in 1...3 { items.append(URLQueryItem(name: "\(key)[list][]", value: "\(element)")) }
            items.append(URLQueryItem(name: "\(key)[n]", value: "\(index)"))
            items.append(URLQueryItem(name: "\(key)[name]", value: nestedName(index)))
        }
        return items
    }

    /// The flat shape: 1,000 string values that need escaping.
    static let flatKeyCount = 1_000

    static func flatQueryItems() -> [URLQueryItem] {
        (0..<flatKeyCount).map { URLQueryItem(name: "key\($0)", value: nestedName($0)) }
    }
}
