import Foundation
import HTTPTypes
import NIOCore

/// One stored response (RFC 9111 §3): its head, its complete body, the times the cache
/// recorded, and the request field values its `Vary` names, with what §4.2 derives from them
/// worked out once, when it is stored.
struct CachedResponse: Sendable {
    /// The cache key: the target URI without its fragment (§2: method GET, the only one stored).
    var key: String
    var url: URL
    var status: HTTPResponse.Status
    var headerFields: HTTPFields
    var body: ByteBuffer
    /// When the request that produced it (or last revalidated it) was sent.
    var requestTime: Date
    /// When its head was received.
    var responseTime: Date
    /// The lower-cased names `Vary` lists, with the values the request had for them (nil: absent).
    var varyingFields: [VaryingField]

    // Derived when made, so a lookup parses nothing.
    private(set) var cacheControl: CacheControl
    private(set) var lifetime: CacheFreshness.Lifetime
    private(set) var initialAge: Double
    /// `Vary: *`: never matches a request (§4.1).
    private(set) var variesOnEverything: Bool

    struct VaryingField: Sendable, Hashable, Codable {
        var name: String
        var value: String?
    }

    init(
        key: String, url: URL, status: HTTPResponse.Status, headerFields: HTTPFields, body: ByteBuffer,
        requestTime: Date, responseTime: Date, varyingFields: [VaryingField]
    ) {
        self.key = key
        self.url = url
        self.status = status
        self.headerFields = headerFields
        self.body = body
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.varyingFields = varyingFields
        let cacheControl = CacheControl(headerFields)
        self.cacheControl = cacheControl
        self.lifetime = CacheFreshness.lifetime(
            status: status.code, fields: headerFields, cacheControl: cacheControl, responseTime: responseTime)
        self.initialAge = CacheFreshness.initialAge(
            fields: headerFields, requestTime: requestTime, responseTime: responseTime)
        self.variesOnEverything = CacheVary.names(headerFields) == nil
    }

    /// What the entry costs in memory, roughly: body, fields and a fixed overhead.
    var byteCount: Int {
        var count = body.readableBytes + key.utf8.count + 256
        for field in headerFields { count += field.name.canonicalName.utf8.count + field.value.utf8.count + 32 }
        return count
    }

    /// The age now (§4.2.3).
    func currentAge(now: Date) -> Double {
        CacheFreshness.currentAge(initialAge: initialAge, responseTime: responseTime, now: now)
    }

    /// Whether a request with these fields may be answered by this entry: every field `Vary`
    /// names has the same value as in the stored request (§4.1).
    func matches(_ requestFields: HTTPFields) -> Bool {
        guard !variesOnEverything else { return false }
        for field in varyingFields where CacheVary.value(of: field.name, in: requestFields) != field.value {
            return false
        }
        return true
    }

    /// Whether it can be revalidated: it has a validator to send (§4.3.1).
    var hasValidator: Bool {
        headerFields[.eTag] != nil || headerFields[.lastModified] != nil
    }

    /// The head a reuse hands out, with the `Age` field the cache must generate (§4).
    func head(age: Double) -> ResponseHead {
        var fields = headerFields
        fields[.age] = String(Int(min(age.rounded(.down), Double(CacheControl.deltaSecondsCeiling))))
        return ResponseHead(status: status, headerFields: fields, url: url)
    }

    /// The entry after a `304 Not Modified` (§4.3.4): each field of the 304 replaces the stored
    /// lines of that name, except `Content-Length` and the fields that describe the stored body
    /// as it was framed; the new request and response times restart its age.
    func freshened(with notModified: HTTPFields, requestTime: Date, responseTime: Date) -> CachedResponse {
        var updates: [HTTPField.Name: [HTTPField]] = [:]
        var order: [HTTPField.Name] = []
        for field in CacheStorage.storableFields(notModified) {
            if field.name == .contentLength || field.name == .contentEncoding || field.name == .contentRange {
                continue
            }
            if updates[field.name] == nil { order.append(field.name) }
            updates[field.name, default: []].append(field)
        }
        // Replaced in place, where the stored response had the field; new fields at the end.
        var fields = HTTPFields()
        var written = Set<HTTPField.Name>()
        for field in headerFields {
            guard let replacement = updates[field.name] else {
                fields.append(field)
                continue
            }
            if written.insert(field.name).inserted { fields.append(contentsOf: replacement) }
        }
        for name in order where !written.contains(name) { fields.append(contentsOf: updates[name] ?? []) }
        return CachedResponse(
            key: key, url: url, status: status, headerFields: fields, body: body, requestTime: requestTime,
            responseTime: responseTime, varyingFields: varyingFields)
    }
}

/// `Vary` (RFC 9110 §12.5.5): the request fields a stored response depends on.
enum CacheVary {
    /// The lower-cased field names `Vary` lists; nil for `Vary: *`.
    static func names(_ fields: HTTPFields) -> [String]? {
        var names: [String] = []
        for field in fields where field.name == .vary {
            for part in field.value.split(separator: ",") {
                let name = CacheControl.trimmed(String(part)).lowercased()
                if name == "*" { return nil }
                if !name.isEmpty, !names.contains(name) { names.append(name) }
            }
        }
        return names
    }

    /// The request's value of `name`, its lines joined with ", " and blanks around each trimmed
    /// (the normalisation §4.1 allows); nil when absent.
    static func value(of name: String, in fields: HTTPFields) -> String? {
        guard let fieldName = HTTPField.Name(name) else { return nil }
        let values = fields[values: fieldName]
        guard !values.isEmpty else { return nil }
        return values.map { CacheControl.trimmed($0) }.joined(separator: ", ")
    }
}
